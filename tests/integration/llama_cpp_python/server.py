"""Run llama-cpp-python's OpenAI-compatible server (``python -m llama_cpp.server``) for tests.

    with LlamaCppPythonServer(tiny_gguf()) as server:
        httpx.get(f"{server.base_url}/v1/models")

It is a FastAPI app (uvicorn, sse-starlette) around the ``llama_cpp`` bindings, built from the
same llama.cpp sources as ``llama-server`` but sharing none of its HTTP code: its own chat
handlers, its own framing, its own errors. So it is a second witness of "an OpenAI-compatible
server" that llama.cpp's own server cannot be.

Port, process group, watcher (the server dies with the runner, even a SIGKILLed one), log and stop
come from ``rigs/process.py``. The server has no ``/health``: it binds its port only after the
model is loaded, so the first 200 from ``/v1/models`` means ready.

The server runs under this interpreter (``sys.executable``): the ``integration`` extra installs
``llama-cpp-python[server]`` beside the test dependencies.
"""

from __future__ import annotations

import importlib.metadata
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from tests.integration.rigs.process import HOST, LoopbackServer, ServerProcessError

__all__ = [
    "DISTRIBUTION",
    "MODEL_ALIAS",
    "LlamaCppPythonServer",
    "LlamaCppPythonServerError",
    "llama_cpp_python_version",
]

DISTRIBUTION = "llama-cpp-python"
MODEL_ALIAS = "tiny-qwen2"
"""The ``--model_alias``: the id ``/v1/models`` lists and every answer's ``model`` carries."""


def llama_cpp_python_version() -> str:
    """The installed ``llama-cpp-python`` version (raises ``PackageNotFoundError`` without it)."""
    return importlib.metadata.version(DISTRIBUTION)


class LlamaCppPythonServerError(ServerProcessError):
    """``python -m llama_cpp.server`` exited or did not answer ``/v1/models`` in time."""


class LlamaCppPythonServer(LoopbackServer):
    """``python -m llama_cpp.server --model MODEL --host 127.0.0.1 --port PORT --model_alias
    ALIAS --n_ctx CTX [--chat_format FORMAT] [*extra_args]``.

    ``chat_format`` ``None`` leaves the choice to the server: the GGUF's own chat template (the
    tiny model carries Qwen2's), rendered by llama-cpp-python's Jinja handler, which passes the
    request's ``grammar`` and ``logit_bias`` through and parses no tool calls out of the text.
    ``"chatml-function-calling"`` is its tool-calling handler, which builds grammars of its own.
    """

    label: ClassVar[str] = "llama-cpp-python server"
    error: ClassVar[type[ServerProcessError]] = LlamaCppPythonServerError
    workdir_prefix: ClassVar[str] = "llama-cpp-python-"
    ready_path: ClassVar[str] = "/v1/models"
    poll_seconds: ClassVar[float] = 0.2
    tail_lines: ClassVar[int] = 40

    def __init__(
        self,
        model: Path | str,
        *,
        model_alias: str = MODEL_ALIAS,
        n_ctx: int = 4096,
        chat_format: str | None = None,
        extra_args: Sequence[str] = (),
        port: int | None = None,
        startup_timeout: float = 120.0,
        stop_timeout: float = 10.0,
    ) -> None:
        super().__init__(port=port, startup_timeout=startup_timeout, stop_timeout=stop_timeout)
        self.model = str(model)
        self.model_alias = model_alias
        self.n_ctx = n_ctx
        self.chat_format = chat_format
        self.extra_args = list(extra_args)

    @property
    def args(self) -> list[str]:
        """The command line after ``python -m llama_cpp.server``."""
        args = ["--model", self.model, "--host", HOST, "--port", str(self.port)]
        args += ["--model_alias", self.model_alias, "--n_ctx", str(self.n_ctx)]
        if self.chat_format is not None:
            args += ["--chat_format", self.chat_format]
        return args + self.extra_args

    @property
    def flags(self) -> list[str]:
        """:attr:`args` without the per-run ``--host``/``--port`` and the model's local path:
        what a transcript's provenance records."""
        out: list[str] = []
        items = iter(self.args)
        for flag in items:
            if flag in ("--host", "--port"):
                next(items)
            elif flag == "--model":
                out += [flag, Path(next(items)).name]
            else:
                out.append(flag)
        return out

    @property
    def argv(self) -> list[str]:
        return [sys.executable, "-m", "llama_cpp.server", *self.args]

    def environment(self) -> Mapping[str, str]:
        """``HOST`` and ``PORT`` as on the command line: the server's ``uvicorn.run`` reads those
        two variables before its own flags, so a ``PORT`` set for something else would move it."""
        return {"HOST": HOST, "PORT": str(self.port)}

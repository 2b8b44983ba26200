"""A server subprocess on 127.0.0.1 for the integration suite: the part every server shares.

``llama-server``, ``vllm serve`` and SGLang's server differ in their command line and in what
"ready" costs, not in how a test owns them, so :class:`LoopbackServer` does that once:

* a free port on 127.0.0.1, picked by the OS;
* the process in a session (process group) of its own, so :meth:`~LoopbackServer.stop` ends
  every child it forked too (SGLang's scheduler and detokenizer, vLLM's engine core), even when
  the launcher itself is already gone;
* a watcher (:mod:`~tests.integration.rigs.lifeline`) that ends that group when the test runner
  dies without calling ``stop()``, even by SIGKILL;
* stdout and stderr in a log file in a private work folder, whose tail start-up errors quote
  and the fixtures attach to failing tests;
* ``launch`` returns at once and ``wait_ready`` polls ``GET /health`` until 200, so several
  servers can boot side by side (start-up is mostly single-threaded imports);
* stop: SIGTERM to the group, SIGKILL to whatever is left after ``stop_timeout`` (which is
  also the watcher's grace period).

A subclass gives the command line (:attr:`~LoopbackServer.argv`) and, if it needs them, extra
environment, a working directory and a hook before launch or once ready.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import IO, ClassVar, Self

from tests.integration.rigs.lifeline import Lifeline

__all__ = ["HOST", "LoopbackServer", "ServerProcessError", "free_port"]

HOST = "127.0.0.1"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


class ServerProcessError(RuntimeError):
    """The server exited or did not become healthy in time (each server has a subclass)."""


class LoopbackServer:
    """One server process on ``127.0.0.1:<port>``; a subclass says how to run it.

    Class attributes tune what differs between servers: ``label`` names it in errors,
    ``error`` is the exception type raised, ``poll_seconds`` and ``health_timeout`` pace the
    ``/health`` polling (SGLang's answer waits for its warm-up request), ``tail_lines`` is the
    default size of :meth:`log_tail`, ``ready_path`` the path polled.
    """

    label: ClassVar[str] = "server"
    error: ClassVar[type[ServerProcessError]] = ServerProcessError
    workdir_prefix: ClassVar[str] = "loopback-server-"
    poll_seconds: ClassVar[float] = 0.25
    health_timeout: ClassVar[float] = 2.0
    tail_lines: ClassVar[int] = 60
    ready_path: ClassVar[str] = "/health"
    """What ``wait_ready`` polls until it answers 200 (llama-cpp-python's server has no
    ``/health``; its ``/v1/models`` answers once the model is loaded)."""

    def __init__(
        self,
        *,
        port: int | None,
        startup_timeout: float,
        stop_timeout: float,
        cwd: Path | None = None,
    ) -> None:
        self.port = port if port is not None else free_port()
        self.cwd = cwd
        """The server's working directory; ``None``: this process's."""
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.startup_seconds: float | None = None
        """Wall time from launch to healthy; ``None`` until ready (again after a relaunch)."""
        self._launched_at = 0.0
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._lifeline: Lifeline | None = None
        self._workdir: tempfile.TemporaryDirectory[str] | None = None

    # --- what a subclass says ---------------------------------------------------------------

    @property
    def argv(self) -> list[str]:
        """The full command line."""
        raise NotImplementedError

    def environment(self) -> Mapping[str, str] | None:
        """Variables added to this process's environment; ``None``: inherit it unchanged."""
        return None

    def before_launch(self) -> None:
        """Called once the work folder exists, before the process starts."""

    def on_ready(self) -> None:
        """Called once ``/health`` has answered 200."""

    # --- state --------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash, no ``/v1``)."""
        return f"http://{HOST}:{self.port}"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def launched(self) -> bool:
        """Launched and not stopped since (it may have died meanwhile: see :attr:`running`)."""
        return self._process is not None

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    def path(self, name: str) -> Path:
        """A file in this server's private work folder (exists from launch until stop)."""
        if self._workdir is None:
            raise self.error(f"{self.label} is not started")
        return Path(self._workdir.name) / name

    def log_text(self) -> str:
        """Everything the server wrote to stdout and stderr so far."""
        if self._log is None:
            return ""
        self._log.flush()
        return Path(self._log.name).read_bytes().decode("utf-8", errors="replace")

    def log_tail(self, lines: int | None = None) -> str:
        count = self.tail_lines if lines is None else lines
        return "\n".join(self.log_text().splitlines()[-count:])

    # --- life cycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Launch and wait until healthy (:meth:`launch` then :meth:`wait_ready`)."""
        self.launch()
        self.wait_ready()

    def launch(self) -> None:
        """Start the process and return at once; :meth:`wait_ready` joins it later."""
        if self._process is not None:
            raise self.error(f"{self.label} already started")
        self._workdir = tempfile.TemporaryDirectory(prefix=self.workdir_prefix)
        self.before_launch()
        self._log = open(self.path("server.log"), "w+b")  # noqa: SIM115
        extra = self.environment()
        self.startup_seconds = None
        # The watcher first, so no launched server is ever without one (lifeline.py says why).
        self._lifeline = Lifeline(grace=self.stop_timeout, log=self._log)
        self._launched_at = time.monotonic()
        try:
            self._process = subprocess.Popen(
                self.argv,
                cwd=self.cwd,
                env=None if extra is None else {**os.environ, **extra},
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: stop() ends its children too
            )
        except BaseException:
            self.stop()
            raise
        self._lifeline.watch(self._process.pid)

    def wait_ready(self) -> None:
        """Block until ``/health`` answers 200 (at once if it already did and the process
        lives), at most ``startup_timeout`` after launch. On failure the server is stopped and
        the error quotes the command and the log's tail."""
        if self.startup_seconds is not None and self.running:
            return
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - self._launched_at
        self.on_ready()

    def failure(self, what: str) -> ServerProcessError:
        """The error for ``what`` went wrong, with the command and the log's tail."""
        return self.error(
            f"{self.label} {what}\ncommand: {' '.join(self.argv)}\n"
            f"--- log tail ---\n{self.log_tail()}"
        )

    def _wait_healthy(self) -> None:
        if self._process is None:
            raise self.error(f"{self.label} is not started")
        deadline = self._launched_at + self.startup_timeout
        url = f"{self.base_url}{self.ready_path}"
        while True:
            code = self._process.poll()
            if code is not None:
                raise self.failure(f"exited with code {code} during start-up")
            # 503 while loading is an HTTPError, which is a URLError
            with (
                contextlib.suppress(urllib.error.URLError, OSError),
                urllib.request.urlopen(url, timeout=self.health_timeout) as response,
            ):
                if response.status == 200:
                    return
            if time.monotonic() > deadline:
                raise self.failure(f"not healthy after {self.startup_timeout:g} s")
            time.sleep(self.poll_seconds)

    def stop(self) -> None:
        """SIGTERM to the process group, SIGKILL to what is left of it after ``stop_timeout``;
        then the log and the work folder are removed (read :meth:`log_tail` before)."""
        process, self._process = self._process, None
        if process is not None:
            if process.poll() is None:
                _signal_group(process.pid, signal.SIGTERM)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=self.stop_timeout)
            # The launcher may be gone while a child still runs: the group, not the pid.
            _signal_group(process.pid, signal.SIGKILL)
            process.wait()
        if self._lifeline is not None:  # after the group: the runner lives, nothing to watch
            self._lifeline.release()
            self._lifeline = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None

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


def _signal_group(group: int, signum: signal.Signals) -> None:
    """Signal a group we created (``start_new_session``: its id is the launcher's pid)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)

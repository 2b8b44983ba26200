"""Run the real ``vllm serve`` with the scripted engine on 127.0.0.1, from the dev venv.

    with VllmServer(python, model_dir, "Qwen/Qwen3-0.6B", ["--reasoning-parser", "qwen3"]) as s:
        s.script("<think>\\nHm.\\n</think>\\n\\nIt is sunny.")
        ...  # requests to s.base_url; the engine emits that text for each of them
        s.prompts()[-1].prompt  # the prompt the engine was given, special tokens included

The server is ``python -m tests.integration.rigs.vllm.serve`` run by the vLLM venv's
interpreter, with this checkout on ``PYTHONPATH``; it never imports vLLM here. Its output goes to a
log file: start-up failures quote its tail, and the fixtures attach it to failing tests.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

__all__ = ["EngineRecord", "VllmServer", "VllmServerError"]

PROJECT_ROOT = Path(__file__).resolve().parents[4]
SERVE_MODULE = "tests.integration.rigs.vllm.serve"
DEFAULT_MAX_MODEL_LEN = 4096
HOST = "127.0.0.1"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


class VllmServerError(RuntimeError):
    """The server exited or did not become healthy in time."""


@dataclass(frozen=True)
class EngineRecord:
    """One request as the scripted engine saw it (a line of its prompt log)."""

    request_id: str
    prompt: str
    prompt_tokens: int
    output_tokens: int
    finish: str

    @classmethod
    def from_json(cls, line: Mapping[str, Any]) -> EngineRecord:
        return cls(
            request_id=line["request_id"],
            prompt=line["prompt"],
            prompt_tokens=line["prompt_tokens"],
            output_tokens=line["output_tokens"],
            finish=line["finish"],
        )


class VllmServer:
    """``vllm serve MODEL --served-model-name NAME --max-model-len N [*extra_args]`` with the
    scripted engine, on ``127.0.0.1:<port>``."""

    def __init__(
        self,
        python: Path,
        model_dir: Path,
        served_model_name: str,
        extra_args: Sequence[str] = (),
        *,
        max_model_len: int = DEFAULT_MAX_MODEL_LEN,
        port: int | None = None,
        env: Mapping[str, str] | None = None,
        step_seconds: float = 0.002,
        startup_timeout: float = 240.0,
        stop_timeout: float = 15.0,
    ) -> None:
        self.python = python
        self.model_dir = model_dir
        self.model_id = served_model_name
        self.extra_args = list(extra_args)
        self.max_model_len = max_model_len
        self.port = port if port is not None else free_port()
        self.env = dict(env or {})
        self.step_seconds = step_seconds
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.startup_seconds: float | None = None
        self._launched_at = 0.0
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._workdir: tempfile.TemporaryDirectory[str] | None = None

    # ----------------------------------------------------------------------------------------

    @property
    def argv(self) -> list[str]:
        return [
            str(self.python), "-m", SERVE_MODULE,
            str(self.model_dir),
            "--served-model-name", self.model_id,
            "--max-model-len", str(self.max_model_len),
            "--host", HOST,
            "--port", str(self.port),
            *self.extra_args,
        ]  # fmt: skip

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash, no ``/v1``)."""
        return f"http://{HOST}:{self.port}"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _path(self, name: str) -> Path:
        if self._workdir is None:
            raise VllmServerError("the server is not started")
        return Path(self._workdir.name) / name

    def script(self, text: str) -> None:
        """The text the engine emits (then EOS) for every request from now on."""
        target = self._path("script.json")
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps({"text": text}), encoding="utf-8")
        tmp.replace(target)  # atomic: a request never reads half a script

    def prompts(self) -> list[EngineRecord]:
        """Every request the engine finished (or saw aborted), oldest first."""
        log = self._path("prompts.jsonl")
        if not log.is_file():
            return []
        lines = log.read_text(encoding="utf-8").splitlines()
        return [EngineRecord.from_json(json.loads(line)) for line in lines if line]

    def log_text(self) -> str:
        """Everything the server wrote to stdout and stderr so far."""
        if self._log is None:
            return ""
        self._log.flush()
        return Path(self._log.name).read_bytes().decode("utf-8", errors="replace")

    def log_tail(self, lines: int = 60) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    # ----------------------------------------------------------------------------------------

    def start(self) -> None:
        """Launch the server and wait until ``/health`` answers."""
        self.launch()
        self.wait_ready()

    def launch(self) -> None:
        """Start the process without waiting: several servers can then start side by side
        (start-up is mostly single-threaded imports), and :meth:`wait_ready` joins them."""
        if self._process is not None:
            raise VllmServerError("already started")
        self._workdir = tempfile.TemporaryDirectory(prefix="vllm-rig-")
        self.script("")
        self._log = open(self._path("server.log"), "w+b")  # noqa: SIM115
        env = {
            **os.environ,
            "PYTHONPATH": str(PROJECT_ROOT),
            "VLLM_TARGET_DEVICE": "cpu",
            "VLLM_NO_USAGE_STATS": "1",  # no usage report over the network
            "HF_HUB_OFFLINE": "1",  # the model is a local folder; never ask the Hub
            "OAICOMPAT_RIG_SCRIPT_FILE": str(self._path("script.json")),
            "OAICOMPAT_RIG_PROMPT_LOG": str(self._path("prompts.jsonl")),
            "OAICOMPAT_RIG_STEP_SECONDS": str(self.step_seconds),
            **self.env,
        }
        self._launched_at = time.monotonic()
        self._process = subprocess.Popen(
            self.argv,
            cwd=PROJECT_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stop() ends any children too
        )

    def wait_ready(self) -> None:
        """Wait for ``/health``; on failure the server is stopped and the error quotes its log."""
        if self.startup_seconds is not None and self.running:
            return
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - self._launched_at

    def _wait_healthy(self) -> None:
        if self._process is None:
            raise VllmServerError("the server is not started")
        deadline = self._launched_at + self.startup_timeout
        url = f"{self.base_url}/health"
        while True:
            code = self._process.poll()
            if code is not None:
                raise VllmServerError(
                    f"vllm serve exited with code {code} during start-up\n"
                    f"command: {' '.join(self.argv)}\n--- log tail ---\n{self.log_tail()}"
                )
            with (
                contextlib.suppress(urllib.error.URLError, OSError),
                urllib.request.urlopen(url, timeout=2.0) as response,
            ):
                if response.status == 200:
                    return
            if time.monotonic() > deadline:
                raise VllmServerError(
                    f"vllm serve not healthy after {self.startup_timeout:g} s\n"
                    f"command: {' '.join(self.argv)}\n--- log tail ---\n{self.log_tail()}"
                )
            time.sleep(0.25)

    def stop(self) -> None:
        """SIGTERM to the server's process group, SIGKILL after ``stop_timeout``; the log is
        kept readable (``log_text``) until the work folder is removed here."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
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

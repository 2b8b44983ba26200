"""Run SGLang's real OpenAI server, with the scripted scheduler, on 127.0.0.1 for tests.

    with SglangServer(python, model_dir, served_model_name="Qwen/Qwen3-0.6B",
                      extra_args=["--reasoning-parser", "qwen3"]) as server:
        server.script("<think>\\nHmm.\\n</think>\\n\\nHi.")
        ...  # requests to server.base_url
        server.prompts()[-1].text  # the prompt as the scheduler received it

Runs in the dev venv; the server runs in the SGLang venv (``python``), as
``python -m tests.integration.rigs.sglang.serve`` with the project root on ``PYTHONPATH``. The
server starts a process group of its own (launcher, scheduler, detokenizer): :meth:`stop` ends
the whole group, so nothing outlives the fixture. Ready means ``GET /health`` answers 200, which
SGLang allows only after its own warm-up request has gone through the scheduler.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Self

from tests.integration.llama_server import HOST, free_port
from tests.integration.rigs.sglang.fake_scheduler import (
    MODEL_DIR_ENV,
    PROMPT_LOG_ENV,
    SCRIPT_FILE_ENV,
    STEP_SECONDS_ENV,
)

__all__ = ["ReceivedPrompt", "SglangServer", "SglangServerError"]

PROJECT_ROOT = Path(__file__).resolve().parents[4]
SERVE_MODULE = "tests.integration.rigs.sglang.serve"


class SglangServerError(RuntimeError):
    """The server exited or did not become healthy in time."""


@dataclass(frozen=True)
class ReceivedPrompt:
    """One request as the scheduler received it: the rendered prompt, decoded from its ids."""

    text: str
    token_count: int
    stream: bool
    max_new_tokens: int | None
    script_token_count: int
    """How many ids the scripted text was for this request (end-of-sequence not counted)."""
    rid: str


class SglangServer:
    """SGLang's OpenAI server for one model folder on ``127.0.0.1:<port>``.

    ``python`` is the SGLang venv's interpreter. ``extra_args`` are more ``sglang serve``
    flags (parsers, ``--default-chat-template-kwargs``…). ``step_seconds`` paces the scripted
    tokens, so streams arrive over time as from a model.
    """

    def __init__(
        self,
        python: Path,
        model_dir: Path,
        *,
        served_model_name: str,
        extra_args: Sequence[str] = (),
        context_length: int = 4096,
        port: int | None = None,
        step_seconds: float = 0.01,
        startup_timeout: float = 300.0,
        stop_timeout: float = 15.0,
    ) -> None:
        self.python = python
        self.model_dir = model_dir
        self.model_id = served_model_name
        self.extra_args = list(extra_args)
        self.context_length = context_length
        self.port = port if port is not None else free_port()
        self.step_seconds = step_seconds
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.startup_seconds: float | None = None
        """Wall time from launch to healthy (warm-up included); ``None`` until ready."""
        self._process: subprocess.Popen[bytes] | None = None
        self._workdir: tempfile.TemporaryDirectory[str] | None = None
        self._log: IO[bytes] | None = None
        self._prompts_before_ready = 0
        self._launched_at = 0.0

    # ----------------------------------------------------------------------------------------

    @property
    def args(self) -> list[str]:
        """The ``sglang serve`` flags."""
        return [
            "--model-path", str(self.model_dir),
            "--served-model-name", self.model_id,
            "--context-length", str(self.context_length),
            "--host", HOST,
            "--port", str(self.port),
            "--device", "cpu",
            *self.extra_args,
        ]  # fmt: skip

    @property
    def argv(self) -> list[str]:
        return [str(self.python), "-m", SERVE_MODULE, *self.args]

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT`` (no trailing slash, no ``/v1``)."""
        return f"http://{HOST}:{self.port}"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _path(self, name: str) -> Path:
        if self._workdir is None:
            raise SglangServerError("not started")
        return Path(self._workdir.name) / name

    # ----------------------------------------------------------------------------------------

    def script(self, text: str) -> None:
        """Make the scheduler emit ``text`` (then end-of-sequence) for the next requests.

        Written atomically (rename), so a request arriving meanwhile reads the old or the new
        text, never half of one.
        """
        target = self._path("script.json")
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps({"text": text}), encoding="utf-8")
        tmp.replace(target)

    def prompts(self) -> list[ReceivedPrompt]:
        """Every request the scheduler received since the server became ready, oldest first
        (SGLang's warm-up request and ``/health`` generations are not included)."""
        path = self._path("prompts.jsonl")
        if not path.is_file():
            return []
        lines = path.read_text(encoding="utf-8").splitlines()
        received = []
        for line in lines[self._prompts_before_ready :]:
            entry = json.loads(line)
            received.append(
                ReceivedPrompt(
                    text=entry["prompt"],
                    token_count=entry["prompt_tokens"],
                    stream=entry["stream"],
                    max_new_tokens=entry["max_new_tokens"],
                    script_token_count=entry["script_tokens"],
                    rid=entry["rid"],
                )
            )
        return received

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
        """Launch and wait until healthy (:meth:`launch` then :meth:`wait_ready`)."""
        self.launch()
        self.wait_ready()

    def launch(self) -> None:
        """Start the server process and return at once: several servers can boot side by side
        (most of a start-up is three processes importing SGLang), then :meth:`wait_ready`."""
        if self._process is not None:
            raise SglangServerError("already started")
        self._workdir = tempfile.TemporaryDirectory(prefix="sglang-rig-")
        self._log = open(self._path("server.log"), "w+b")  # noqa: SIM115
        env = {
            **os.environ,
            "PYTHONPATH": str(PROJECT_ROOT),
            SCRIPT_FILE_ENV: str(self._path("script.json")),
            PROMPT_LOG_ENV: str(self._path("prompts.jsonl")),
            MODEL_DIR_ENV: str(self.model_dir),
            STEP_SECONDS_ENV: str(self.step_seconds),
            # Everything is local: never ask a model hub for the folder or its tokenizer.
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        }
        self.startup_seconds = None
        self._launched_at = time.monotonic()
        self._process = subprocess.Popen(
            self.argv,
            cwd=PROJECT_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, for stop()
        )

    def wait_ready(self) -> None:
        """Block until ``/health`` answers 200 (at once if it already did); on failure the
        server is stopped and the error quotes its log."""
        if self.startup_seconds is not None:
            return
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - self._launched_at
        self._prompts_before_ready = self._count_prompt_lines()

    def _count_prompt_lines(self) -> int:
        path = self._path("prompts.jsonl")
        return len(path.read_text(encoding="utf-8").splitlines()) if path.is_file() else 0

    def _failure(self, what: str) -> SglangServerError:
        return SglangServerError(
            f"SGLang {what}\ncommand: {' '.join(self.argv)}\n--- log tail ---\n{self.log_tail()}"
        )

    def _wait_healthy(self) -> None:
        if self._process is None:
            raise SglangServerError("not launched")
        deadline = self._launched_at + self.startup_timeout
        url = f"{self.base_url}/health"
        while True:
            code = self._process.poll()
            if code is not None:
                raise self._failure(f"server exited with code {code} during start-up")
            # 503 until the warm-up request is through (an HTTPError, which is a URLError)
            with (
                contextlib.suppress(urllib.error.URLError, OSError),
                urllib.request.urlopen(url, timeout=10.0) as response,
            ):
                if response.status == 200:
                    return
            if time.monotonic() > deadline:
                raise self._failure(f"server not healthy after {self.startup_timeout:g} s")
            time.sleep(0.5)

    def stop(self) -> None:
        """End the server's process group: SIGTERM, then SIGKILL after ``stop_timeout``."""
        process, self._process = self._process, None
        if process is not None:
            _signal_group(process.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=self.stop_timeout)
            # The launcher may be gone while a child still runs: the group, not the pid.
            _signal_group(process.pid, signal.SIGKILL)
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


def _signal_group(group: int, signum: signal.Signals) -> None:
    """Signal a process group we created (``start_new_session``: its id is the launcher's pid)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)

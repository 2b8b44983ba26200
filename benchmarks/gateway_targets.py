"""The processes of the gateway benchmark: the loopback backend and the two proxies in front of it.

Each runs in its own process group (``start_new_session``), started here and stopped here by
that group's id, its output kept in a log file of the run's temporary directory (shown when it
fails to start). Both proxies are given one worker, the same inbound key (LiteLLM refuses to
start without a master key; the gateway is given ``serve.api_keys_env`` so both pay for the
check) and the same backend, and both are asked to be quiet:

- ``oaicompat serve --config <yaml> --host 127.0.0.1 --port P`` (``python -m providers serve``),
  roles ``main: loop``; ready when ``GET /health`` answers 200.
- ``litellm --config <yaml> --host 127.0.0.1 --port Q --num_workers 1``, the model
  ``openai/bench`` at the backend, with the settings LiteLLM's production page gives
  (``set_verbose: false``, ``json_logs: true``, ``request_timeout: 600``, ``LITELLM_LOG=ERROR``),
  no database, and ``LITELLM_LOCAL_MODEL_COST_MAP=True`` (this machine has no network: without
  it the start waits on three failing downloads of the price list); ready when
  ``GET /health/liveliness`` answers 200.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from benchmarks.gateway_backend import MODEL_ID, Pacing
from benchmarks.sse_server import child_env

__all__ = [
    "API_KEY",
    "API_KEY_ENV",
    "Backend",
    "Proxy",
    "find_litellm",
    "gateway_proxy",
    "litellm_proxy",
]

API_KEY = "sk-oaicompat-bench-0123456789abcdef0123456789abcdef"
"""The inbound key both proxies accept (a loopback benchmark's, not a secret)."""
API_KEY_ENV = "OAICOMPAT_BENCH_KEYS"
LITELLM_ENV = "OAICOMPAT_BENCH_LITELLM"
_ROOT = Path(__file__).resolve().parent.parent
_VENVS_LITELLM = (_ROOT / ".venv-litellm/bin/litellm", Path("/work/venv-litellm/bin/litellm"))
_START_SECONDS = 120.0


def find_litellm(given: str | None = None) -> str | None:
    """The ``litellm`` executable: ``given``, else ``$OAICOMPAT_BENCH_LITELLM``, else
    ``litellm`` on PATH, else the README's ``.venv-litellm`` (or ``/work/venv-litellm``, where
    it was measured); ``None`` when none exists."""
    for candidate in (given, os.environ.get(LITELLM_ENV)):
        if candidate:
            return candidate if Path(candidate).is_file() else shutil.which(candidate)
    found = shutil.which("litellm")
    if found:
        return found
    return next((str(path) for path in _VENVS_LITELLM if path.is_file()), None)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _get(url: str, timeout: float = 2.0) -> bytes | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            return bytes(answer.read()) if answer.status == 200 else None
    except OSError:
        return None


class _Child:
    """A command in its own process group, its output in ``log``; stopped by its group id."""

    def __init__(
        self, command: list[str], log: Path, env: dict[str, str], stop: int = signal.SIGTERM
    ) -> None:
        self.log = log
        self._stop_signal = stop
        with open(log, "wb") as out:
            self.process = subprocess.Popen(
                command, cwd=log.parent, stdout=out, stderr=subprocess.STDOUT, env=env,
                start_new_session=True,
            )  # fmt: skip

    @property
    def pid(self) -> int:
        return self.process.pid

    def tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, self._stop_signal)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


@dataclass(slots=True)
class Proxy:
    """A proxy target: its name, port, the model its clients ask for, the readiness path."""

    name: str
    command: list[str]
    env: dict[str, str]
    port: int
    model: str
    ready_path: str
    stop_signal: int = signal.SIGTERM
    child: _Child | None = None

    def start(self, workdir: Path) -> None:
        log = workdir / f"{self.name}.log"
        self.child = _Child(self.command, log, self.env, self.stop_signal)

    def wait_ready(self, timeout: float = _START_SECONDS) -> None:
        assert self.child is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.child.process.poll() is not None:
                break
            if _get(f"http://127.0.0.1:{self.port}{self.ready_path}", 1.0) is not None:
                return
            time.sleep(0.2)
        tail = self.child.tail()
        self.stop()
        raise RuntimeError(f"{self.name} did not become ready; its log ends:\n{tail}")

    @property
    def pid(self) -> int:
        assert self.child is not None
        return self.child.pid

    def stop(self) -> None:
        if self.child is not None:
            self.child.stop()


def gateway_proxy(workdir: Path, backend_url: str, profile: Path | None = None) -> Proxy:
    """``profile``: run it under cProfile (``gateway_profiled``), written there on stop."""
    port = free_port()
    config = workdir / "gateway.yaml"
    config.write_text(
        "backends:\n"
        f'  loop: {{base_url: "{backend_url}/v1", model_id: "{MODEL_ID}", backend: vllm}}\n'
        "roles: {main: loop}\n"
        f"serve: {{api_keys_env: {API_KEY_ENV}}}\n"
    )
    command = [sys.executable, "-m"]
    command += ["benchmarks.gateway_profiled", str(profile)] if profile else ["providers"]
    command += ["serve", "--config", str(config)]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    env = {**child_env(), API_KEY_ENV: API_KEY}
    # uvicorn re-raises the signal it stopped on; SIGINT's KeyboardInterrupt lets cProfile
    # write its file on the way out, SIGTERM's default action would not.
    stop = signal.SIGINT if profile else signal.SIGTERM
    return Proxy("gateway", command, env, port, "main", "/health", stop)


def litellm_proxy(workdir: Path, backend_url: str, executable: str) -> Proxy:
    port = free_port()
    config = workdir / "litellm.yaml"
    config.write_text(
        "model_list:\n"
        f"  - model_name: {MODEL_ID}\n"
        "    litellm_params:\n"
        f"      model: openai/{MODEL_ID}\n"
        f"      api_base: {backend_url}/v1\n"
        "      api_key: sk-backend-key\n"
        "litellm_settings:\n"
        "  set_verbose: false\n"
        "  json_logs: true\n"
        "  request_timeout: 600\n"
    )
    command = [executable, "--config", str(config), "--host", "127.0.0.1", "--port", str(port)]
    command += ["--num_workers", "1"]
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)  # its own venv; nothing of this repository
    env |= {
        "LITELLM_MASTER_KEY": API_KEY,
        "LITELLM_LOG": "ERROR",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    return Proxy("litellm", command, env, port, MODEL_ID, "/health/liveliness")


class Backend:
    """``with Backend(pacing, chunks, workdir) as url: …``: the loopback backend's process."""

    def __init__(self, pacing: Pacing, chunks: int, workdir: Path) -> None:
        command = [sys.executable, "-m", "benchmarks.gateway_backend", "--chunks", str(chunks)]
        command += ["--first-delay", str(pacing.first_delay), "--pace", str(pacing.pace)]
        command += ["--per-piece", str(pacing.per_piece)]
        self.port = free_port()
        self._command = [*command, "--port", str(self.port)]
        self._workdir = workdir
        self.child: _Child | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Backend:
        self.child = _Child(self._command, self._workdir / "backend.log", child_env())
        deadline = time.monotonic() + 30
        while _get(f"{self.url}/v1/models", 1.0) is None:
            if time.monotonic() > deadline or self.child.process.poll() is not None:
                tail = self.child.tail()
                self.child.stop()
                raise RuntimeError(f"the backend did not start; its log ends:\n{tail}")
            time.sleep(0.1)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.child is not None:
            self.child.stop()

    def arrivals(self) -> list[float]:
        """The chat requests' arrival times since the last call (and a new list)."""
        body = _get(f"{self.url}/_arrivals")
        return [] if body is None else [float(t) for t in json.loads(body)]

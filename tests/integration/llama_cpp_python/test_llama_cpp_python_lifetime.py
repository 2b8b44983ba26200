"""The llama-cpp-python server dies with the test runner, even a SIGKILLed one.

``LlamaCppPythonServer`` inherits its life cycle from ``rigs/process.py`` (its own process group,
and ``rigs/lifeline.py``'s watcher, which ends that group once the runner is gone); this checks it
on the real server: a runner subprocess starts one, reports its pid, and is SIGKILLed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

RUNNER = """
import sys, time
from tests.integration.llama_cpp_python.server import LlamaCppPythonServer
server = LlamaCppPythonServer(sys.argv[1], stop_timeout=5.0)
server.start()
print(server.pid, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for this purpose: only its parent's wait is missing.
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.is_file() and stat.read_text().split(") ", 1)[-1].startswith("Z"))


def test_a_sigkilled_runner_takes_the_server_along(lcp_model: Path) -> None:
    checkout = str(Path(__file__).resolve().parents[3])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [checkout, *sys.path]))}
    runner = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(lcp_model)],
        stdout=subprocess.PIPE,
        env=env,
        cwd=checkout,
    )
    assert runner.stdout is not None
    pid = int(runner.stdout.readline() or 0)
    try:
        assert pid and _alive(pid), "the runner did not start the server"
        runner.send_signal(signal.SIGKILL)
        runner.wait()
        deadline = time.monotonic() + 30.0
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(pid), "the server outlived its SIGKILLed runner"
    finally:
        runner.kill()
        runner.wait()
        runner.stdout.close()
        if pid:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)

"""A server the integration suite starts dies with the test runner, even a SIGKILLed one.

The integration servers (``llama-server``, the vLLM and SGLang rigs) run in a process group of
their own, so ``LoopbackServer.stop()`` can end the children they fork. That same group used to
outlive a runner killed with SIGKILL (CI's timeout, an impatient ``kill -9``): nothing was left
to call ``stop()``, and the servers and their engine processes kept running. No real server is
needed to show it: a loopback server that forks a child is enough. A *runner* subprocess
launches it through ``LoopbackServer`` and reports the pids; the test SIGKILLs the runner and
expects the server and its child to be gone within seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.rigs.process import LoopbackServer

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads process states from /proc"
)

ROOT = Path(__file__).resolve().parents[3]

# The server: answers GET /health with its child's pid, and forks that child first (a sleeper,
# standing in for vLLM's engine core or SGLang's scheduler). argv: port, "ignore-term" or "".
FORKING_SERVER = """
import http.server, json, signal, subprocess, sys
if sys.argv[2] == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the child through exec
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
class Health(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"child": child.pid}).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Health).serve_forever()
"""


class ForkingServer(LoopbackServer):
    label = "forking test server"
    poll_seconds = 0.05

    def __init__(self, *, ignore_term: bool = False, stop_timeout: float = 5.0) -> None:
        super().__init__(port=None, startup_timeout=30.0, stop_timeout=stop_timeout)
        self.ignore_term = ignore_term

    @property
    def argv(self) -> list[str]:
        flag = "ignore-term" if self.ignore_term else ""
        return [sys.executable, "-c", FORKING_SERVER, str(self.port), flag]

    def child_pid(self) -> int:
        with urllib.request.urlopen(f"{self.base_url}/health", timeout=5) as response:
            child: int = json.load(response)["child"]
        return child


def run_runner() -> None:
    """The runner subprocess: start the server, report the pids on stdout, then wait to be
    killed. argv: ``ignore-term`` or ``""``, the stop timeout, ``server-dies-first`` or ``""``
    (the server is SIGKILLed and reaped before the report: its child is left in the group)."""
    ignore_term, stop_timeout, mode = sys.argv[1:4]
    server = ForkingServer(
        ignore_term=ignore_term == "ignore-term", stop_timeout=float(stop_timeout)
    )
    server.start()
    report = {"server": server.pid, "child": server.child_pid()}
    if mode == "server-dies-first":
        assert server.pid is not None
        os.kill(server.pid, signal.SIGKILL)
        while server.running:
            time.sleep(0.01)
    print(json.dumps(report), flush=True)
    time.sleep(600)


def _state(pid: int) -> str | None:
    """The process's state letter, ``None`` when there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def _alive(pid: int) -> bool:
    """Running or sleeping; a zombie is dead (this machine's init may never reap orphans)."""
    return _state(pid) not in (None, "Z", "X")


def _children(pid: int) -> set[int]:
    """Every process whose parent is ``pid``, zombies included (they were not reaped)."""
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid:
                    found.add(int(entry.name))
    return found


def _wait_dead(pids: list[int], seconds: float) -> list[int]:
    """Those of ``pids`` still alive after ``seconds`` (polled)."""
    deadline = time.monotonic() + seconds
    while True:
        alive = [pid for pid in pids if _alive(pid)]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


def _read_line(process: subprocess.Popen[bytes], seconds: float) -> bytes:
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], seconds)
    if not ready:
        raise AssertionError(f"the runner reported nothing within {seconds:g} s")
    return process.stdout.readline()


@contextlib.contextmanager
def _killed_afterwards(pids: list[int]) -> Iterator[None]:
    """Whatever the assertions say, leave no test process running on the shared machine."""
    try:
        yield
    finally:
        for pid in pids:
            if _alive(pid):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize(
    ("ignore_term", "mode"),
    [
        pytest.param(False, "", id="server-ends-on-sigterm"),
        pytest.param(True, "", id="server-ignores-sigterm"),
        pytest.param(False, "server-dies-first", id="server-died-leaving-its-child"),
    ],
)
def test_a_sigkilled_runner_takes_its_server_and_the_servers_child_along(
    ignore_term: bool, mode: str
) -> None:
    stop_timeout = 1.0
    runner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from tests.unit.harness.test_server_lifetime import run_runner; run_runner()",
            "ignore-term" if ignore_term else "",
            str(stop_timeout),
            mode,
        ],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
    )
    try:
        report = json.loads(_read_line(runner, 60.0))
    except BaseException:
        runner.kill()
        runner.wait()
        raise
    server, child = int(report["server"]), int(report["child"])
    with _killed_afterwards([server, child]):
        assert _alive(child)
        if mode != "server-dies-first":
            assert _alive(server)
        runner.send_signal(signal.SIGKILL)
        runner.wait()
        assert runner.stdout is not None
        runner.stdout.close()
        # SIGTERM at once, SIGKILL after the stop timeout, and slack for a loaded machine.
        survivors = _wait_dead([server, child], stop_timeout + 5.0)
        assert survivors == [], f"still running after the runner was killed: {survivors}"


def test_stop_ends_the_server_and_its_child_and_leaves_no_process_behind() -> None:
    before = _children(os.getpid())
    server = ForkingServer(ignore_term=True, stop_timeout=0.5)
    server.start()
    assert server.pid is not None
    pids = [server.pid, server.child_pid()]
    with _killed_afterwards(pids):
        server.stop()
        assert _wait_dead(pids, 5.0) == []
        assert not server.launched
        assert _children(os.getpid()) - before == set()  # every helper reaped


def test_a_server_outlives_the_thread_that_launched_it() -> None:
    """Why no ``PR_SET_PDEATHSIG``: it fires when the *thread* that forked exits, not the
    process, and the launching thread is not necessarily the runner's main one."""
    server = ForkingServer()
    launcher = threading.Thread(target=server.start)
    launcher.start()
    launcher.join()
    assert server.pid is not None
    pids = [server.pid, server.child_pid()]
    with _killed_afterwards(pids):
        try:
            time.sleep(0.5)
            assert server.running
            assert all(_alive(pid) for pid in pids)
        finally:
            server.stop()

"""Run each mutant's tests in a fork of a warm interpreter.

A fresh ``python -m pytest`` spends 2-4 s importing pytest and the plugins installed beside it
(hypothesis's, langsmith's) before a test runs, against well under a second of tests: for the
3800 mutants of the core parsers that is hours. The server imports all of that once and forks
per mutant; the child runs ``pytest.main`` on the tree as it is on disk at that moment. The
server never imports this checkout's own packages, so every child imports the mutated module
afresh.

    python tools/mutation_forkserver.py serve SOCKET            # started by tools/mutation.py
    python -I -S tools/mutation_forkserver.py run SOCKET TIMEOUT -- PYTEST_ARGS...

``run`` exits with the child's pytest exit code (so cosmic-ray reads survived / killed as it
would from pytest itself); a child that outlives TIMEOUT, or whose client goes away, is killed.
``run`` imports only what ``-I -S`` leaves, so the per-mutant cost is the fork and the tests.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OWN_PACKAGES = ("providers", "capabilities", "telemetry", "tests", "benchmarks")
# What the fast tests import from outside the checkout; anything missing is simply not warmed.
WARM = ("httpx", "respx", "orjson", "pydantic", "structlog", "tenacity", "anyio", "yaml")
KILLED = 3  # the exit code reported for a child killed by a signal (a hung or crashed mutant)


def _warm() -> None:
    import importlib
    import importlib.metadata

    import pytest  # noqa: F401

    for entry in importlib.metadata.entry_points(group="pytest11"):
        try:
            entry.load()
        except Exception:  # a plugin that cannot load is for pytest itself to report
            continue
    for name in WARM:
        try:
            importlib.import_module(name)
        except ImportError:
            continue
    leaked = sorted({m.split(".")[0] for m in sys.modules} & set(OWN_PACKAGES))
    if leaked:
        raise SystemExit(
            f"warming imported the checkout's own {leaked}; a fork would not see mutants"
        )


def _child(args: list[str]) -> None:
    import pytest

    os.chdir(ROOT)
    sink = os.open(os.devnull, os.O_WRONLY)
    os.dup2(sink, 1)
    os.dup2(sink, 2)
    code = 1
    try:
        code = int(pytest.main(args))
    finally:
        os._exit(code)


def _supervise(pid: int, client: socket.socket, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else KILLED
        readable, _, _ = select.select([client], [], [], 0.01)
        gone = bool(readable) and not client.recv(1, socket.MSG_PEEK)
        if gone or time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return KILLED


def serve(path: str) -> None:
    _warm()
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    while True:
        client, _ = server.accept()
        with client:
            request = json.loads(client.makefile("rb").readline())
            pid = os.fork()
            if pid == 0:
                server.close()
                _child(request["args"])
            code = _supervise(pid, client, float(request["timeout"]))
            client.sendall(f"{code}\n".encode())


def run(path: str, timeout: float, args: list[str]) -> int:
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.connect(path)
    client.sendall(json.dumps({"args": args, "timeout": timeout}).encode() + b"\n")
    answer = client.makefile("rb").readline()
    return int(answer) if answer.strip() else KILLED


def main(argv: list[str]) -> int:
    if argv[:1] == ["serve"] and len(argv) == 2:
        serve(argv[1])
        return 0
    if argv[:1] == ["run"] and len(argv) >= 4 and argv[3] == "--":
        return run(argv[1], float(argv[2]), argv[4:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""Ties a loopback server's process group to the test runner's life, even a SIGKILLed runner's.

A server runs in a process group of its own so that ``stop()`` reaches every child it forks
(vLLM's engine core, SGLang's scheduler and detokenizer). The same group used to outlive a
runner killed with SIGKILL: nothing was left to call ``stop()``.

The runner keeps the write end of a pipe and never writes to it but once, the group's id. A
*watcher* (this file run as a script, a child of the runner in a session of its own) blocks
reading the other end. Reading returns end-of-file only once no write end is open anywhere,
and the kernel closes a process's descriptors however the process ends, so end-of-file means
the runner is gone; the watcher then sends SIGTERM to the group, waits for it to empty at most
the grace period (the server's ``stop_timeout``) and sends SIGKILL to what is left. A normal
``stop()`` ends the group itself, then kills and reaps the watcher.

Why not ``PR_SET_PDEATHSIG`` on the server: it fires when the *thread* that forked exits, not
the process, so a server launched from a short-lived thread would be killed at once; and it
reaches the direct child only, not the children the server forks. The watcher sits outside
the group, so it also survives the server: a server that died and left its children running
still has them cleaned up if the runner is killed before ``stop()``.

The write end must reach no other process: ``os.pipe`` makes both ends non-inheritable and
``subprocess`` closes what it does not pass, so only the watcher holds the read end (a child
the runner forks without exec would hold the write end too, and delay the watcher to its exit).
What stays open is the instant between the server's fork and the runner sending its group id:
a runner killed exactly then leaves that one server behind.

Only the standard library here: the watcher runs as ``python -I`` (isolated from the server's
``PYTHONPATH``, which names another virtualenv), as a script, not as part of the package.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

__all__ = ["Lifeline"]

_POLL_SECONDS = 0.05


class Lifeline:
    """The runner's end: the watcher process and the pipe's write end.

    Made before the server is launched (so no instant exists when a launched server has no
    watcher yet, except the fork itself), told the group with :meth:`watch` once it exists,
    and ended with :meth:`release` once ``stop()`` has ended the group.
    """

    def __init__(self, *, grace: float, log: IO[bytes] | None = None) -> None:
        read_end, self._write_end = os.pipe()
        try:
            self._watcher: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-I", str(Path(__file__).resolve()), str(read_end), repr(grace)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                pass_fds=(read_end,),
                # Out of the runner's group: Ctrl-C in a terminal must not end the watcher.
                start_new_session=True,
            )
        except BaseException:
            os.close(self._write_end)
            raise
        finally:
            os.close(read_end)

    @property
    def pid(self) -> int | None:
        """The watcher's pid; ``None`` once released."""
        return None if self._watcher is None else self._watcher.pid

    def watch(self, group: int) -> None:
        """The process group to end when the runner dies (a server's, created by
        ``start_new_session``: its id is the server's pid)."""
        os.write(self._write_end, f"{group}\n".encode())

    def release(self) -> None:
        """End the watcher without letting it act (the group is ended already, and its id may
        soon be reused), reap it and close the pipe. Idempotent."""
        watcher, self._watcher = self._watcher, None
        if watcher is None:
            return
        watcher.kill()  # SIGKILL: the watcher ignores SIGTERM
        watcher.wait()
        os.close(self._write_end)


# --- the watcher -------------------------------------------------------------------------------


def _group_exists(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # only some other user's process can have taken the id
        return False
    return True


def _signal_group(group: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)


def watch(read_end: int, grace: float) -> None:
    """Block until the runner is gone, then end the group it named: SIGTERM, then SIGKILL to
    whatever is left after ``grace`` seconds. Nothing named (the runner died before the
    server existed): nothing to do."""
    # Only the runner's end of the pipe ends the watcher, and release()'s SIGKILL.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_IGN)
    received = bytearray()
    while chunk := os.read(read_end, 64):
        received += chunk
    os.close(read_end)
    named = received.decode("ascii", errors="replace").split()
    if not named or not named[0].isdigit():
        return
    group = int(named[0])
    _signal_group(group, signal.SIGTERM)
    deadline = time.monotonic() + grace
    # A zombie still counts as a member (an orphan under an init that never reaps stays one):
    # then the whole grace runs out, and the SIGKILL below finds nobody to end.
    while _group_exists(group) and time.monotonic() < deadline:
        time.sleep(_POLL_SECONDS)
    _signal_group(group, signal.SIGKILL)


def main(argv: list[str]) -> int:
    """``lifeline.py READ_FD GRACE_SECONDS``."""
    read_end, grace = argv
    watch(int(read_end), float(grace))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

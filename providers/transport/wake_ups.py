"""One asyncio timer per event loop for the wake-ups of every stream's deadlines.

Each streamed request has deadlines to watch (``providers.transport.timeouts.Watchdog``). An asyncio
timer per request costs a ``TimerHandle``, its bound callback and its clock reading: about 200 bytes
that every stream waiting for its server holds, and the streams of an agent framework mostly wait.
With 200 streams waiting at once, dropping them lowered the benchmark's peak RSS by about 50 KiB
(``benchmarks/README.md``). So the objects that need waking are themselves the entries of a heap
ordered by their wake-up time, and one asyncio timer is set for the earliest of them.

Cancelling is lazy, as in asyncio's own scheduler: a cancelled entry stays in the heap until its
time comes or until cancelled entries make up most of the heap, which is then rebuilt. An entry
should therefore drop what it holds when it is cancelled.
"""

from __future__ import annotations

import asyncio
import contextvars
import heapq
import math
import threading
import time

__all__ = ["LoopWakeUps", "WakeUp", "wake_ups"]

_INF = math.inf
_REBUILD_AFTER = 64
"""Cancelled entries tolerated before the heap may be rebuilt (then only once they are also
more than half of it): a few kilobytes at most, and no rebuild per request."""


class WakeUp:
    """Something a ``LoopWakeUps`` wakes at ``wake_at`` (``time.monotonic()``) by calling
    ``wake``; at most once in the heap at a time (``queued``)."""

    __slots__ = ("queued", "wake_at")

    def __init__(self) -> None:
        self.wake_at = _INF
        self.queued = False

    def __lt__(self, other: WakeUp) -> bool:
        return self.wake_at < other.wake_at

    def wake(self) -> None:
        raise NotImplementedError


class LoopWakeUps:
    """The pending wake-ups of one event loop, behind one asyncio timer."""

    __slots__ = ("_cancelled", "_context", "_handle", "_handle_at", "_heap", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self._heap: list[WakeUp] = []
        self._cancelled = 0
        self._handle: asyncio.TimerHandle | None = None
        self._handle_at = _INF
        # The timer's callback reads no context variable; an empty context of its own keeps
        # the first scheduler's (an OpenTelemetry span, say) from living as long as the timer.
        self._context = contextvars.Context()

    def __len__(self) -> int:
        """Entries in the heap, the cancelled ones not yet dropped included."""
        return len(self._heap)

    def schedule(self, entry: WakeUp, at: float) -> None:
        """Wake ``entry`` at ``at`` (``time.monotonic()``); it must not be queued already."""
        if entry.queued:
            raise RuntimeError("a wake-up is already scheduled for this entry")
        entry.wake_at = at
        entry.queued = True
        heapq.heappush(self._heap, entry)
        if at < self._handle_at:
            self._set_timer(at)

    def cancel(self, entry: WakeUp) -> None:
        """Do not wake ``entry`` (nothing if it is not queued)."""
        if not entry.queued:
            return
        entry.queued = False
        self._cancelled += 1
        heap = self._heap
        if self._cancelled > _REBUILD_AFTER and 2 * self._cancelled > len(heap):
            heap[:] = [queued for queued in heap if queued.queued]
            heapq.heapify(heap)
            self._cancelled = 0
            if not heap and self._handle is not None:
                self._handle.cancel()
                self._handle, self._handle_at = None, _INF

    def _set_timer(self, at: float) -> None:
        if self._handle is not None:
            self._handle.cancel()
        self._handle_at = at
        self._handle = self.loop.call_later(
            max(0.0, at - time.monotonic()), self._fire, context=self._context
        )

    def _fire(self) -> None:
        self._handle = None
        self._handle_at = -_INF  # (entries scheduled by a `wake` set no timer of their own)
        heap = self._heap
        now = time.monotonic()
        try:
            while heap and heap[0].wake_at <= now:
                entry = heapq.heappop(heap)
                if entry.queued:
                    entry.queued = False
                    entry.wake()
                else:
                    self._cancelled -= 1
        finally:  # (even if a `wake` raised: the others must still be woken)
            self._handle_at = _INF
            if heap:
                self._set_timer(heap[0].wake_at)


_THREAD = threading.local()


def wake_ups() -> LoopWakeUps:
    """The running event loop's wake-ups.

    Kept per thread, since each thread runs at most one loop at a time; a thread that runs
    another loop later (``asyncio.run`` again, a test's fresh loop) gets a fresh one. A loop
    left with entries pending keeps its own, through its timer.
    """
    loop = asyncio.get_running_loop()
    current: LoopWakeUps | None = getattr(_THREAD, "wake_ups", None)
    if current is None or current.loop is not loop:
        current = _THREAD.wake_ups = LoopWakeUps(loop)
    return current

"""``providers.transport.wake_ups``: many deadlines behind one asyncio timer per loop."""

from __future__ import annotations

import asyncio
import gc
import time
import weakref
from collections.abc import Callable
from typing import Any

import pytest

from providers.transport.timeouts import Timeouts, Watchdog
from providers.transport.wake_ups import LoopWakeUps, WakeUp, wake_ups


class Recorded(WakeUp):
    __slots__ = ("log", "name", "then")

    def __init__(self, name: str, log: list[str], then: Callable[[], None] | None = None) -> None:
        super().__init__()
        self.name = name
        self.log = log
        self.then = then

    def wake(self) -> None:
        self.log.append(self.name)
        if self.then is not None:
            self.then()


def _count_timers(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    loop = asyncio.get_running_loop()
    delays: list[float] = []
    original = loop.call_later

    def call_later(delay: float, callback: Any, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
        delays.append(delay)
        return original(delay, callback, *args, **kwargs)

    monkeypatch.setattr(loop, "call_later", call_later)
    return delays


async def _until(predicate: Callable[[], bool], limit: float = 2.0) -> None:
    deadline = time.monotonic() + limit
    while not predicate():
        assert time.monotonic() < deadline, "the wake-ups did not happen"
        await asyncio.sleep(0.005)


async def test_entries_wake_in_time_order_behind_one_timer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    timers = _count_timers(monkeypatch)
    wakes = LoopWakeUps(asyncio.get_running_loop())
    log: list[str] = []
    now = time.monotonic()
    # Scheduled in increasing order (as streams started one after another arm): only the
    # first sets the asyncio timer.
    for index in range(50):
        wakes.schedule(Recorded(f"e{index:02d}", log), now + 0.02 + index * 0.0001)
    assert len(timers) == 1
    await _until(lambda: len(log) == 50)
    assert log == sorted(log)
    assert len(wakes) == 0


async def test_an_earlier_entry_moves_the_timer_forward() -> None:
    wakes = LoopWakeUps(asyncio.get_running_loop())
    log: list[str] = []
    now = time.monotonic()
    wakes.schedule(Recorded("late", log), now + 30.0)
    wakes.schedule(Recorded("soon", log), now + 0.01)
    await _until(lambda: log == ["soon"])
    assert len(wakes) == 1  # the late one still waits


async def test_a_cancelled_entry_is_not_woken() -> None:
    wakes = LoopWakeUps(asyncio.get_running_loop())
    log: list[str] = []
    now = time.monotonic()
    kept, dropped = Recorded("kept", log), Recorded("dropped", log)
    wakes.schedule(dropped, now + 0.01)
    wakes.schedule(kept, now + 0.02)
    wakes.cancel(dropped)
    wakes.cancel(dropped)  # (twice is harmless)
    await _until(lambda: log == ["kept"])
    await asyncio.sleep(0.02)
    assert log == ["kept"]
    assert not dropped.queued


async def test_cancelled_entries_are_dropped_once_they_are_most_of_the_heap() -> None:
    wakes = LoopWakeUps(asyncio.get_running_loop())
    log: list[str] = []
    far = time.monotonic() + 60.0
    entries = [Recorded(str(index), log) for index in range(200)]
    for entry in entries:
        wakes.schedule(entry, far)
    for entry in entries[:100]:
        wakes.cancel(entry)
    assert len(wakes) == 200  # half of them: kept, no rebuild per request
    wakes.cancel(entries[100])
    assert len(wakes) == 99  # most of them: rebuilt, the ended streams' entries dropped
    for entry in entries[101:]:
        wakes.cancel(entry)
    assert len(wakes) <= 64


async def test_an_entry_may_schedule_itself_again_from_its_wake() -> None:
    wakes = LoopWakeUps(asyncio.get_running_loop())
    log: list[str] = []
    entry = Recorded("again", log)

    def again() -> None:
        if len(log) < 3:
            wakes.schedule(entry, time.monotonic() + 0.005)

    entry.then = again
    wakes.schedule(entry, time.monotonic() + 0.005)
    await _until(lambda: len(log) == 3)
    await asyncio.sleep(0.02)
    assert log == ["again"] * 3


async def test_an_entry_cannot_be_queued_twice() -> None:
    wakes = LoopWakeUps(asyncio.get_running_loop())
    entry = Recorded("once", [])
    wakes.schedule(entry, time.monotonic() + 60.0)
    with pytest.raises(RuntimeError):
        wakes.schedule(entry, time.monotonic() + 1.0)
    wakes.cancel(entry)


async def test_a_failing_wake_does_not_strand_the_others() -> None:
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        wakes = LoopWakeUps(loop)
        log: list[str] = []

        def fail() -> None:
            raise ValueError("a broken entry")

        now = time.monotonic()
        wakes.schedule(Recorded("broken", log, then=fail), now + 0.005)
        wakes.schedule(Recorded("later", log), now + 0.03)
        await _until(lambda: log == ["broken", "later"])
        assert isinstance(reported[0]["exception"], ValueError)
    finally:
        loop.set_exception_handler(None)


def test_each_loop_of_a_thread_gets_its_own() -> None:
    async def current() -> tuple[LoopWakeUps, LoopWakeUps]:
        return wake_ups(), wake_ups()

    first, same = asyncio.run(current())
    second, _ = asyncio.run(current())
    assert first is same
    assert second is not first
    assert second.loop is not first.loop


class _Progress:
    def has_token(self) -> bool:
        return False


async def test_a_closed_watchdog_lets_go_of_its_stream() -> None:
    # A cancelled wake-up can stay in the shared heap for a while; what the stream received
    # must not stay with it.
    progress = _Progress()
    watch = Watchdog(Timeouts(), progress, "test", time.monotonic())
    assert watch.queued
    gone = weakref.ref(progress)
    watch.close()
    del progress
    gc.collect()
    assert gone() is None
    assert not watch.queued


async def test_many_watchdogs_share_one_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    timers = _count_timers(monkeypatch)
    now = time.monotonic()
    watches = [Watchdog(Timeouts(), _Progress(), "test", now) for _ in range(100)]
    assert all(watch.queued for watch in watches)
    assert len(timers) == 1
    for watch in watches:
        watch.close()


class _Expired(Exception):
    pass


async def test_a_watchdog_on_the_shared_timer_still_expires() -> None:
    async def wait_for_the_server() -> None:
        budgets = Timeouts(first_token=0.02, idle=None)
        watch = Watchdog(budgets, _Progress(), "test", time.monotonic())
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            error = watch.expiry_error()
            assert error is not None
            assert error.phase == "first_token"
            raise _Expired from None
        finally:
            watch.close()

    with pytest.raises(_Expired):
        await asyncio.wait_for(wait_for_the_server(), 2.0)

"""The private loop thread behind ``SyncChatClient``: work handed to it by a waiting thread.

``_Work`` is something the loop runs for a thread that waits on a ``threading.Event``: one
coroutine (``_Call``) or one stream iterated by one task (``_Pump``). ``serve`` is the thread's
body, ending the loop as ``asyncio.run`` does.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import Any, Generic, TypeVar

from providers.abstractions.chat_client import ChatClient
from providers.abstractions.chat_response import ChatResponseUpdate

__all__ = ["CLEANUP_WAIT", "Call", "Pump", "Work", "abandon", "cancel_others", "serve", "stop"]

_T = TypeVar("_T")

CLEANUP_WAIT = 10.0
"""How long an interrupted call waits for its request's cleanup (closing the response) before
the interrupt propagates anyway: long enough for any close, short enough not to hang Ctrl-C."""


class Work:
    """Something run on the private loop for a waiting thread: it sets ``ready`` when it has
    an outcome (``error`` or a value) and ``done`` once it has finished, cleanup included; it
    can be cancelled from that thread, before it started too (then it never starts)."""

    def __init__(self) -> None:
        self.ready = threading.Event()
        self.done = threading.Event()
        self.error: BaseException | None = None
        self._task: asyncio.Task[None] | None = None
        self._cancelled = False

    def start(self) -> None:
        """On the loop. The coroutine is made here, so work cancelled before it started
        leaves no coroutine that was never awaited."""
        if self._cancelled:
            self._finish(asyncio.CancelledError())
        else:
            self._task = asyncio.get_running_loop().create_task(self._guarded())

    async def _guarded(self) -> None:
        try:
            await self.run()
        except BaseException as exc:  # (handed to the waiting thread, raised there)
            self._finish(exc)
        else:
            self._finish(None)

    async def run(self) -> None:
        raise NotImplementedError

    def _finish(self, error: BaseException | None) -> None:
        if error is not None and self.error is None:
            self.error = error
        self.ready.set()
        self.done.set()

    def cancel(self) -> None:
        """On the loop."""
        self._cancelled = True
        if self._task is not None:
            self._task.cancel()

    def cancel_from(self, loop: asyncio.AbstractEventLoop) -> None:
        """From the waiting thread: cancels the work and waits (a while) for its cleanup."""
        if not self.done.is_set():
            try:
                loop.call_soon_threadsafe(self.cancel)
            except RuntimeError:
                return  # the loop is closed: nothing runs there any more
            self.done.wait(CLEANUP_WAIT)


class Call(Work, Generic[_T]):
    """One coroutine, one result."""

    def __init__(self, make: Callable[[], Coroutine[Any, Any, _T]]) -> None:
        super().__init__()
        self._make: Callable[[], Coroutine[Any, Any, _T]] | None = make
        self.value: _T | None = None

    async def run(self) -> None:
        make, self._make = self._make, None  # (what the call's closure holds is let go)
        assert make is not None
        self.value = await make()


class Pump(Work):
    """One stream, iterated by ONE task from its first update to its close, one update per
    request of the consuming thread. (Per-update tasks would break the stream's deadlines: its
    watchdog cancels the task that opened it.) Between updates the task waits, as an async
    caller that holds an update would; ``stop`` closes the stream from that wait."""

    def __init__(self, make: Callable[[], AsyncIterator[ChatResponseUpdate]]) -> None:
        super().__init__()
        self._make: Callable[[], AsyncIterator[ChatResponseUpdate]] | None = make
        self._wanted: asyncio.Event | None = None
        self.update: ChatResponseUpdate | None = None
        self.ended = False

    async def run(self) -> None:
        make, self._make = self._make, None
        assert make is not None
        wanted = self._wanted = asyncio.Event()
        stream = make()
        try:
            while True:
                try:
                    update = await stream.__anext__()
                except StopAsyncIteration:
                    self.ended = True
                    return
                self.update = update
                self.ready.set()
                await wanted.wait()
                wanted.clear()
        finally:
            self.update = None
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()

    def want_next(self, loop: asyncio.AbstractEventLoop) -> None:
        """From the consuming thread, once it took ``update``. The pump may have finished
        meanwhile (cancelled by ``close()`` from another thread): ``ready`` is then set again,
        since ``_finish`` sets it before ``done``."""
        self.ready.clear()
        try:
            loop.call_soon_threadsafe(self._next_wanted)
        except RuntimeError:  # (its loop is closed, so the pump has finished)
            self.done.wait(CLEANUP_WAIT)
        if self.done.is_set():
            self.ready.set()

    def _next_wanted(self) -> None:
        if self._wanted is not None:
            self._wanted.set()


def serve(loop: asyncio.AbstractEventLoop) -> None:
    """The private thread: the loop until ``stop``, then asyncio.run's own shutdown (tasks
    cancelled, async generators closed, executor joined) and the loop closed."""
    asyncio.set_event_loop(loop)
    try:
        loop.run_forever()
    finally:
        try:
            loop.run_until_complete(_shut_down(loop))
        finally:
            loop.close()


async def _shut_down(loop: asyncio.AbstractEventLoop) -> None:
    await cancel_others()
    await loop.shutdown_asyncgens()
    await loop.shutdown_default_executor()


async def cancel_others() -> None:
    current = asyncio.current_task()
    others = [task for task in asyncio.all_tasks() if task is not current]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


def stop(loop: asyncio.AbstractEventLoop) -> None:
    with contextlib.suppress(RuntimeError):  # (already closed)
        loop.call_soon_threadsafe(loop.stop)


def abandon(loop: asyncio.AbstractEventLoop, client: ChatClient) -> None:
    """A wrapper dropped without ``close()``: the client is closed on the loop (its pool is
    that loop's), then the thread ends and closes the loop."""
    with contextlib.suppress(RuntimeError):  # (already closed)
        loop.call_soon_threadsafe(_close_then_stop, loop, client)


def _close_then_stop(loop: asyncio.AbstractEventLoop, client: ChatClient) -> None:
    loop.create_task(client.aclose()).add_done_callback(lambda _: loop.stop())

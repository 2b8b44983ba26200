"""``BlockingRunner``: an async call made from code that blocks, for the adapters' sync methods
that are not chat (``SyncChatClient`` is the chat one, and this is its loop thread reused).

The coroutine runs on one private event loop in a daemon thread, started on first use; the
caller's thread waits on an event, so it may be a plain script's, several at once, or one that
runs an event loop itself (a notebook cell): that loop is only blocked, never re-entered. An
interrupt while waiting (Ctrl-C) cancels the call on the loop and waits for its cleanup first.
``close()`` ends the thread as ``asyncio.run`` ends a loop (``loop_thread.serve``), which
closes the connection pool a wire client opened on it (``providers.transport.loop_pools``);
a runner dropped without ``close()`` does the same.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from providers.abstractions.errors import EventLoopError
from providers.abstractions.loop_thread import Call, serve, stop

__all__ = ["BlockingRunner"]

_T = TypeVar("_T")
_numbers = itertools.count(1)


class BlockingRunner:
    """``runner.run(lambda: generator.generate(values))`` from any thread; ``close()``."""

    def __init__(self, name: str = "oaicompat-blocking") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=serve, args=(loop,), name=f"{self._name}-{next(_numbers)}", daemon=True
                )
                thread.start()
                self._loop, self._thread = loop, thread
                self._finalizer = weakref.finalize(self, stop, loop)
                self._finalizer.atexit = False
            return self._loop

    def run(self, make: Callable[[], Coroutine[Any, Any, _T]]) -> _T:
        """``make()``'s result, made and awaited on the private loop; what it raised, raised
        here (the same exception object)."""
        if self._thread is not None and threading.current_thread() is self._thread:
            raise EventLoopError("a blocking call from its own loop thread: await it there")
        loop = self._running_loop()
        call: Call[_T] = Call(make)
        loop.call_soon_threadsafe(call.start)
        try:
            call.ready.wait()
        except BaseException:
            call.cancel_from(loop)
            raise
        if call.error is not None:
            raise call.error
        return call.value  # type: ignore[return-value]  # (set when error is None)

    def close(self) -> None:
        """Ends the loop thread (its pools closed with it); a later ``run`` starts a new one."""
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
            finalizer, self._finalizer = self._finalizer, None
        if finalizer is not None:
            finalizer.detach()
        if loop is not None:
            stop(loop)
            if thread is not None and thread is not threading.current_thread():
                thread.join()

"""``SyncChatClient``: any async ``ChatClient`` from code that does not run an event loop.

Scripts, notebooks and synchronous frameworks call a blocking API; the clients are async. The
wrapper runs the client on one private event loop in one daemon thread of its own, and every call
hands its coroutine to that loop and waits on a ``threading.Event``. So the caller's thread may be
a plain script's, any of several threads at once (the loop interleaves their requests over one
connection pool), or a thread that is itself running an event loop (a Jupyter cell, a coroutine
calling a sync library): that loop is only blocked, never re-entered, so nothing deadlocks.

What the caller sees is what the async client raised, in the caller's thread: the same exception
object, with its ``partial_response``. A ``KeyboardInterrupt`` (or any exception, a caller's own
timeout included) while waiting cancels the request on the loop and waits for its cleanup, so the
upstream connection is closed before the interrupt propagates. A stream is a plain generator:
breaking out of it, closing it or dropping it closes the upstream response.

``close()`` cancels what is still running, closes the wrapped client (``aclose``) and ends the
thread; a closed wrapper raises ``EventLoopError``. A wrapper dropped without ``close()`` stops
its thread too (the loop shuts its async generators down, which closes a wire client's pool).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Generator
from types import TracebackType
from typing import Any, Generic, Self, TypeVar

from providers.abstractions.chat_client import ChatClient, ChatInput
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.errors import EventLoopError, ProviderTimeoutError
from providers.abstractions.options import ChatOptions
from providers.abstractions.services import ChatClientMetadata

__all__ = ["SyncChatClient"]

_T = TypeVar("_T")
_Service = TypeVar("_Service")

_CLEANUP_WAIT = 10.0
"""How long an interrupted call waits for its request's cleanup (closing the response) before
the interrupt propagates anyway: long enough for any close, short enough not to hang Ctrl-C."""

_numbers = itertools.count(1)


class _Work:
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

    def _cancel(self) -> None:
        self._cancelled = True
        if self._task is not None:
            self._task.cancel()

    def cancel_from(self, loop: asyncio.AbstractEventLoop) -> None:
        """From the waiting thread: cancels the work and waits (a while) for its cleanup."""
        if not self.done.is_set():
            try:
                loop.call_soon_threadsafe(self._cancel)
            except RuntimeError:
                return  # the loop is closed: nothing runs there any more
            self.done.wait(_CLEANUP_WAIT)


class _Call(_Work, Generic[_T]):
    """One coroutine, one result."""

    def __init__(self, make: Callable[[], Coroutine[Any, Any, _T]]) -> None:
        super().__init__()
        self._make: Callable[[], Coroutine[Any, Any, _T]] | None = make
        self.value: _T | None = None

    async def run(self) -> None:
        make, self._make = self._make, None  # (what the call's closure holds is let go)
        assert make is not None
        self.value = await make()


class _Pump(_Work):
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
        """From the consuming thread, once it took ``update``."""
        self.ready.clear()
        loop.call_soon_threadsafe(self._next_wanted)

    def _next_wanted(self) -> None:
        if self._wanted is not None:
            self._wanted.set()


def _serve(loop: asyncio.AbstractEventLoop) -> None:
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
    await _cancel_others()
    await loop.shutdown_asyncgens()
    await loop.shutdown_default_executor()


async def _cancel_others() -> None:
    current = asyncio.current_task()
    others = [task for task in asyncio.all_tasks() if task is not current]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


def _stop(loop: asyncio.AbstractEventLoop) -> None:
    """A wrapper dropped without ``close()``: its thread ends (and closes its loop)."""
    with contextlib.suppress(RuntimeError):  # (already closed)
        loop.call_soon_threadsafe(loop.stop)


class SyncChatClient:
    """A blocking ``ChatClient``: ``get_response``, ``get_streaming_response`` (an iterator),
    ``close`` and ``with``; the wrapped async client runs on a private loop thread, started on
    first use."""

    def __init__(self, client: ChatClient) -> None:
        self._client = client
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._closed = False

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._client!r})"

    @property
    def client(self) -> ChatClient:
        """The wrapped async client."""
        return self._client

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- the loop thread -----------------------------------------------------------------------

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._closed:
                raise EventLoopError("this SyncChatClient is closed")
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=_serve, args=(loop,), name=f"oaicompat-sync-{next(_numbers)}"
                )
                thread.daemon = True
                thread.start()
                self._loop, self._thread = loop, thread
                weakref.finalize(self, _stop, loop).atexit = False
            return self._loop

    def _on_loop_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def _submit(self, work: _Work) -> asyncio.AbstractEventLoop:
        if self._on_loop_thread():
            raise EventLoopError(
                "SyncChatClient called from its own loop thread; await the async client there"
            )
        loop = self._running_loop()
        loop.call_soon_threadsafe(work.start)
        return loop

    def _wait(self, work: _Work, loop: asyncio.AbstractEventLoop, timeout: float | None) -> None:
        """Waits for ``work``'s next outcome; whatever interrupts the wait (Ctrl-C, the
        caller's ``timeout``) cancels the work and waits for its cleanup first. A call cut
        by ``close()`` from another thread raises ``EventLoopError``."""
        try:
            if not work.ready.wait(timeout):
                raise ProviderTimeoutError(
                    f"no answer within the caller's {timeout} s", phase="total", budget=timeout
                )
        except BaseException:
            work.cancel_from(loop)
            raise
        if isinstance(work.error, asyncio.CancelledError) and self._closed:
            raise EventLoopError("the SyncChatClient was closed during the call") from None

    def _call(
        self, make: Callable[[], Coroutine[Any, Any, _T]], timeout: float | None = None
    ) -> _T:
        """Runs ``make()`` on the loop and waits for its result."""
        call: _Call[_T] = _Call(make)
        self._wait(call, self._submit(call), timeout)
        if call.error is not None:
            raise call.error
        return call.value  # type: ignore[return-value]  # (set when error is None)

    # --- the ChatClient surface, blocking ------------------------------------------------------

    def get_response(
        self,
        messages: ChatInput,
        options: ChatOptions | None = None,
        *,
        timeout: float | None = None,
    ) -> ChatResponse:
        """The whole answer. ``timeout`` bounds the wait in seconds (``ProviderTimeoutError``,
        the request cancelled); the client's own ``Timeouts`` apply as well."""
        return self._call(lambda: self._client.get_response(messages, options), timeout)

    def get_response_as(
        self,
        output_type: type[_T],
        messages: ChatInput,
        options: ChatOptions | None = None,
        *,
        timeout: float | None = None,
    ) -> _T:
        """The answer as a validated ``output_type`` instance, when the wrapped client offers
        ``get_response_as`` (an ``AttributeError`` otherwise)."""
        method = getattr(self._client, "get_response_as", None)
        if method is None:
            raise AttributeError(f"{type(self._client).__name__} has no get_response_as")
        result: _T = self._call(lambda: method(output_type, messages, options), timeout)
        return result

    def get_streaming_response(
        self,
        messages: ChatInput,
        options: ChatOptions | None = None,
        *,
        timeout: float | None = None,
    ) -> Generator[ChatResponseUpdate, None, None]:
        """The answer as it arrives. Nothing is sent before the first ``next``; leaving the
        loop early (``break``, ``close()``, the iterator dropped) closes the upstream response.
        ``timeout`` bounds each wait for the next update."""
        return self._stream(messages, options, timeout)

    def _stream(
        self, messages: ChatInput, options: ChatOptions | None, timeout: float | None
    ) -> Generator[ChatResponseUpdate, None, None]:
        pump = _Pump(lambda: self._client.get_streaming_response(messages, options))
        loop = self._submit(pump)
        try:
            while True:
                self._wait(pump, loop, timeout)
                update = pump.update
                if update is None:
                    if pump.error is not None:
                        raise pump.error
                    return
                yield update
                pump.want_next(loop)
        finally:
            if self._on_loop_thread():  # (dropped by a collection on the loop itself)
                pump._cancel()
            else:
                pump.cancel_from(loop)

    def get_service(self, service_type: type[_Service]) -> _Service | None:
        """The wrapped client's service lookup (no I/O, so no trip to the loop)."""
        if isinstance(self, service_type):
            return self
        lookup = getattr(self._client, "get_service", None)
        return lookup(service_type) if lookup is not None else None

    @property
    def metadata(self) -> ChatClientMetadata | None:
        """Provider name, base URL and model id, when the wrapped client knows them."""
        return self.get_service(ChatClientMetadata)

    def get_capabilities(self, *, refresh: bool = False) -> Any:
        """The wrapped client's ``get_capabilities``, blocking."""
        probe = getattr(self._client, "get_capabilities", None)
        if probe is None:
            raise AttributeError(f"{type(self._client).__name__} has no get_capabilities")
        return self._call(lambda: probe(refresh=refresh))

    def close(self) -> None:
        """Cancels what still runs (its callers get ``EventLoopError``), closes the wrapped
        client and ends the thread. Idempotent."""
        if self._on_loop_thread():
            raise EventLoopError("SyncChatClient.close() called from its own loop thread")
        with self._lock:
            loop, thread, was_closed = self._loop, self._thread, self._closed
            self._closed = True
        if loop is None or was_closed:
            return
        try:
            closing: _Call[None] = _Call(self._close_client)
            loop.call_soon_threadsafe(closing.start)
            self._wait(closing, loop, None)
            if closing.error is not None:
                raise closing.error
        finally:
            _stop(loop)
            if thread is not None:
                thread.join()

    async def _close_client(self) -> None:
        await _cancel_others()
        await self._client.aclose()

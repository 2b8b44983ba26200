"""One streamed chat completion's bookkeeping, for ``OpenAiCompatibleChatClient``'s read loop.

``StreamState`` is what the stream has received so far (so any failure hands it to the caller);
``loads`` is the JSON parse of one event (``orjson`` on the event's bytes, with ``json``'s
results and errors for whatever orjson refuses); ``drain`` reads what follows ``[DONE]``. The loop
itself stays in ``providers.chat_completions.client``, inline: it is the per-chunk path.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import orjson

from providers.abstractions.chat_response import ChatResponseBuilder, ChatResponseUpdate
from providers.abstractions.contents import FunctionCallContent
from providers.abstractions.errors import (
    InvalidResponseError,
    ProviderError,
    StreamInterruptedError,
)
from providers.abstractions.properties import TRANSPORT_TIMESTAMPS, set_property
from providers.chat_completions.normalize import ChunkNormalizer
from providers.chat_completions.tool_call_accumulator import CUT_BY_STREAM_END, mark_cut_call
from providers.transport.json_guard import nests_deeper, too_deep

__all__ = [
    "DRAIN_SECONDS",
    "TRANSPORT_TIMESTAMPS",
    "StreamState",
    "drain",
    "fast_loads",
    "loads",
]

DRAIN_SECONDS = 1.0


async def drain(chunks: AsyncIterator[bytes]) -> None:
    """Read what follows ``[DONE]`` (the end of the chunked body, in practice already received)
    so that the connection goes back to the pool: closing a response that was not read to its
    end closes the connection, and every request then pays a new one (and 200 concurrent
    streams hold 200 of them). Bounded and quiet: the answer is complete, so a server that
    keeps the response open, or breaks it now, costs at most ``DRAIN_SECONDS`` and the
    connection, never an error."""
    try:
        async with asyncio.timeout(DRAIN_SECONDS):
            async for _ in chunks:
                pass
    except (TimeoutError, httpx.HTTPError):
        pass


class StreamState:
    """What one stream has received so far, so any failure can hand it to the caller.

    A ``ChatResponseBuilder`` without raw chunks, not a list of updates: a 10,000-chunk stream
    would otherwise keep every parsed chunk alive until it ends (about 2 KB each, measured).
    """

    __slots__ = ("_partial", "backend", "depth", "done", "finished", "normalizer", "stamps")

    def __init__(self, backend: str, depth: int) -> None:
        self.backend = backend
        self.depth = depth  # limits.max_json_depth
        # Both made when the server answers: nothing to hold while waiting for it.
        self.normalizer: ChunkNormalizer | None = None
        self._partial: ChatResponseBuilder | None = None
        self.finished = False  # a finish_reason arrived
        self.done = False  # `data: [DONE]` arrived
        self.stamps: dict[str, float] | None = None  # given to the first update, then dropped

    @property
    def partial(self) -> ChatResponseBuilder:
        if self._partial is None:
            self._partial = ChatResponseBuilder(keep_raw=False)
        return self._partial

    def has_token(self) -> bool:
        """Has output started: a substantive update, or a tool call still being written?
        (Asked only near a deadline.)"""
        if self._partial is not None and self._partial.substantive:
            return True
        return self.normalizer is not None and self.normalizer.writing_tool_call()

    def consume(self, events: list[bytes]) -> Iterator[ChatResponseUpdate]:
        """The updates of the events' data, lazily (the read loop inlines the same steps)."""
        assert self.normalizer is not None
        add = self.partial.add
        for data in events:
            if data == b"[DONE]":
                self.done = True
                return
            for update in self.normalizer.feed(loads(data, self.backend, self.depth)):
                if update.finish_reason is not None:
                    self.finished = True
                if self.stamps is not None:
                    set_property(update, TRANSPORT_TIMESTAMPS, self.stamps)
                    self.stamps = None
                add(update)
                yield update

    def end(self) -> list[ChatResponseUpdate]:
        """Flush tool calls still pending; a stream with neither finish nor [DONE] was cut."""
        cut = not self.done and not self.finished
        updates = self._pending_calls(cut=cut)
        if cut:
            raise StreamInterruptedError(
                "the stream ended before a finish reason or [DONE]", backend=self.backend
            )
        return updates

    def attach_partial(self, error: ProviderError) -> None:
        """Give the error everything received, including tool calls still being assembled."""
        if error.partial_response is None:
            self._pending_calls(cut=True)
            error.partial_response = self.partial.build()

    def _pending_calls(self, *, cut: bool) -> list[ChatResponseUpdate]:
        """Tool calls no finish reason flushed, added to the partial response.

        ``cut``: the stream broke off. Each choice's last call was then being written, and
        however complete its arguments look, nothing said they were finished: it gets
        ``error``, as a call cut by ``length`` does (issue #20).
        """
        updates = self.normalizer.finish() if self.normalizer is not None else []
        for update in updates:
            if cut:
                mark_cut_call(
                    [c for c in update.contents if type(c) is FunctionCallContent],
                    CUT_BY_STREAM_END,
                )
            self.partial.add(update)
        return updates


fast_loads = orjson.loads
"""The parse of nearly every event, on its bytes: about half the instructions of ``json``'s C
scanner on a typical chunk, and no ``str`` of the event first (decoding it cost a quarter as
much again). What it refuses goes through ``loads``, whose results and errors are ``json``'s:
orjson rejects a few documents ``json`` reads (``NaN``, integers past 64 bits, lone surrogate
escapes, invalid UTF-8, which ``json`` sees replaced), and those keep reading as they did."""


def loads(data: bytes | str, backend: str, depth: int) -> dict[str, Any]:
    """One event's JSON object; past ``depth`` levels, ``ResponseTooLargeError``."""
    try:
        payload = fast_loads(data)
    except ValueError:
        payload = _loads_slowly(data, backend, depth)
    if type(payload) is not dict:
        raise InvalidResponseError("a stream event is not a JSON object", backend=backend)
    if nests_deeper(payload, data, depth):
        raise too_deep(depth, "a stream event", backend)
    return payload


def _loads_slowly(data: bytes | str, backend: str, depth: int) -> Any:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise too_deep(depth, "a stream event", backend) from exc
    except ValueError as exc:
        # The text goes to `body`, not the message: it may be completion text.
        raise InvalidResponseError(
            f"a stream event is not JSON ({len(text)} characters)", backend=backend, body=text
        ) from exc

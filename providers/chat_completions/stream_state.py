"""One streamed chat completion's bookkeeping, for ``OpenAiCompatibleChatClient``'s read loop.

``StreamState`` is what the stream has received so far (so any failure hands it to the caller),
and ``take`` turns one network read's events into updates; ``drain`` reads what follows
``[DONE]``. The read loop itself stays in ``providers.chat_completions.client``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx

from providers.abstractions.chat_response import ChatResponseBuilder, ChatResponseUpdate
from providers.abstractions.contents import FunctionCallContent
from providers.abstractions.errors import (
    ProviderError,
    StreamInterruptedError,
)
from providers.abstractions.limits import Limits
from providers.abstractions.properties import TRANSPORT_TIMESTAMPS, set_property
from providers.chat_completions.normalize import ChunkNormalizer
from providers.chat_completions.output_bound import measure_output
from providers.chat_completions.tool_call_accumulator import CUT_BY_STREAM_END, mark_cut_call
from providers.transport.bodies import read_body
from providers.transport.json_guard import load_object

__all__ = [
    "DRAIN_SECONDS",
    "TRANSPORT_TIMESTAMPS",
    "StreamState",
    "drain",
    "whole_answer",
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

    __slots__ = ("_measured", "_partial", "backend", "depth", "done", "normalizer", "stamps")

    def __init__(self, backend: str, depth: int) -> None:
        self.backend = backend
        self.depth = depth  # limits.max_json_depth
        # Both made when the server answers: nothing to hold while waiting for it.
        self.normalizer: ChunkNormalizer | None = None
        self._partial: ChatResponseBuilder | None = None
        self.done = False  # `data: [DONE]` arrived
        self.stamps: dict[str, float] | None = None  # given to the first update, then dropped
        self._measured: dict[int, tuple[int, int]] | None = None  # (``check_output``'s memo)

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

    def take(self, events: list[bytes]) -> tuple[list[ChatResponseUpdate], Exception | None]:
        """The updates of one read's events (``ChunkNormalizer.read_events``), added to the
        partial response, the first stamped with the transport timestamps; and the error that
        stopped the read, to raise once the updates before it are handed on."""
        normalizer = self.normalizer
        assert normalizer is not None
        updates, error = normalizer.read_events(events)
        if normalizer.done:
            self.done = True
        if updates:
            if self.stamps is not None:
                set_property(updates[0], TRANSPORT_TIMESTAMPS, self.stamps)
                self.stamps = None
            self.partial.add_all(updates)
        return updates, error

    def check_output(self, left: int, limit: int) -> int:
        """Measure the output so far (``providers.chat_completions.output_bound``): past
        ``limit`` bytes, ``ResponseTooLargeError``; else the ``left`` (bytes the stream may
        still carry) at which it is due again."""
        if self._measured is None:
            self._measured = {}
        pending = self.normalizer.pending_argument_bytes() if self.normalizer is not None else 0
        return measure_output(self.partial, self._measured, pending, left, limit, self.backend)

    def end(self) -> list[ChatResponseUpdate]:
        """Flush tool calls still pending; a stream with neither finish nor [DONE] was cut."""
        finished = self.normalizer is not None and self.normalizer.finished
        cut = not self.done and not finished
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


async def whole_answer(
    response: httpx.Response, state: StreamState, limits: Limits
) -> list[ChatResponseUpdate]:
    """A streamed request answered with one completion: its updates, recorded in ``state`` as
    a stream's would be (a whole document is complete: ``done``)."""
    assert state.normalizer is not None
    content = await read_body(response, limits.max_body_bytes, backend=state.backend)
    payload = load_object(content, limits.max_json_depth, state.backend)
    updates = state.normalizer.normalize_completion(payload)
    state.done = True
    for update in updates:
        if state.stamps is not None:
            set_property(update, TRANSPORT_TIMESTAMPS, state.stamps)
            state.stamps = None
        state.partial.add(update)
    state.check_output(0, limits.max_output_bytes)
    return updates

"""What one Responses stream has received so far (the ``PartialStream`` of the error mapping).

The chat client's stream state, for events: a ``ChatResponseBuilder`` without raw chunks so any
failure can hand the caller everything received, and the check that a stream which ended without
a terminal event (``response.completed``, ``incomplete`` or ``failed``) was cut.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from providers.abstractions.chat_response import ChatResponseBuilder, ChatResponseUpdate
from providers.abstractions.errors import ProviderError, StreamInterruptedError
from providers.abstractions.limits import DEFAULT_LIMITS
from providers.abstractions.properties import set_property
from providers.chat_completions.client import TRANSPORT_TIMESTAMPS
from providers.chat_completions.output_bound import measure_output
from providers.responses.normalize import ResponsesEventNormalizer
from providers.transport.json_guard import load_object
from providers.transport.sse import ServerSentEvent

__all__ = ["ResponsesStreamState", "loads_object"]


class ResponsesStreamState:
    __slots__ = ("_measured", "backend", "max_json_depth", "normalizer", "partial", "stamps")

    def __init__(
        self,
        normalizer: ResponsesEventNormalizer,
        backend: str,
        *,
        max_json_depth: int = DEFAULT_LIMITS.max_json_depth,
    ) -> None:
        self.normalizer = normalizer
        self.backend = backend
        self.max_json_depth = max_json_depth
        self.partial = ChatResponseBuilder(keep_raw=False)
        self.stamps: dict[str, float] | None = None  # given to the first update, then dropped
        self._measured: dict[int, tuple[int, int]] = {}  # (``check_output``'s memo)

    def check_output(self, left: int, limit: int) -> int:
        """``StreamState.check_output`` (``providers.chat_completions.output_bound``)."""
        pending = self.normalizer.pending_argument_bytes()
        return measure_output(self.partial, self._measured, pending, left, limit, self.backend)

    @property
    def done(self) -> bool:
        """A terminal event arrived: nothing after it matters (there is no ``[DONE]``)."""
        return self.normalizer.terminal

    def has_token(self) -> bool:
        return self.partial.substantive or self.normalizer.writing_tool_call()

    def consume(self, events: list[ServerSentEvent]) -> Iterator[ChatResponseUpdate]:
        # Lazily, one by one, as on the chat path: updates before a failure event in the same
        # network read reach the caller (and the partial response) before the error does.
        add = self.partial.add
        feed = self.normalizer.feed
        for event in events:
            if self.normalizer.terminal:
                return
            data = event.data
            if data == "[DONE]":  # not sent by Responses servers; harmless from a proxy
                continue
            payload = loads_object(data, self.backend, self.max_json_depth)
            for update in feed(payload, event.event):
                if self.stamps is not None:
                    set_property(update, TRANSPORT_TIMESTAMPS, self.stamps)
                    self.stamps = None
                add(update)
                yield update

    def whole(self, content: bytes) -> list[ChatResponseUpdate]:
        """A whole response object where events were expected, as its updates."""
        payload = loads_object(content, self.backend, self.max_json_depth)
        updates = self.normalizer.normalize_response(payload)
        self.normalizer.terminal = True  # a whole document, even of a response still running
        for update in updates:
            self.partial.add(update)
        return updates

    def end(self) -> list[ChatResponseUpdate]:
        """Calls still being assembled; a stream that ended without a terminal event was cut."""
        updates = self.normalizer.finish()
        for update in updates:
            self.partial.add(update)
        if not self.normalizer.terminal:
            raise StreamInterruptedError(
                "the stream ended before a terminal event (response.completed, "
                "response.incomplete or response.failed)",
                backend=self.backend,
            )
        return updates

    def attach_partial(self, error: ProviderError) -> None:
        if error.partial_response is None:
            for update in self.normalizer.finish():
                self.partial.add(update)
            error.partial_response = self.partial.build()


def loads_object(
    data: str | bytes, backend: str, max_json_depth: int = DEFAULT_LIMITS.max_json_depth
) -> dict[str, Any]:
    """One event's data, or a whole response object: a JSON object, nesting bounded."""
    return load_object(data, max_json_depth, backend)

"""``Limits.max_output_bytes``: how much output (text, reasoning, tool-call arguments) one
response may hold, streamed or not.

The bar is output content, not wire bytes: an event wraps a token of text in a few hundred
bytes of JSON, so a bound on what the stream carried would stop a long healthy answer, and
``max_stream_bytes`` bounds that already. Yet measuring the output on every chunk would add
work to the hot path. So the wire client keeps the count it has anyway, the bytes read: a
string in a JSON event takes at least its UTF-8 size there (a character is written as itself
or as a longer ``\\u`` escape), so the output can pass the bound only once that many bytes
have been read. Only then does ``StreamState.check_output`` measure it (the partial response's
text blocks, incrementally, and the arguments of calls still being assembled), and the next
measure is due once as many more bytes have arrived as the bound leaves room for (at least
``1/MIN_STEPS`` of it, so a stream that creeps up to the bound is measured a bounded number of
times; it may then pass the bound by that much before it fails). Per network read the cost is
one integer comparison.

A whole answer (non-streamed, or one completion answering a stream request) is measured once.
Its body is bounded by ``max_body_bytes`` already, which with the defaults (both 64 MiB) holds
the output under this bound too; a smaller ``max_output_bytes`` is applied all the same, so a
streamed and a non-streamed call fail alike.
"""

from __future__ import annotations

from providers.abstractions.chat_response import ChatResponse, ChatResponseBuilder
from providers.abstractions.contents import FunctionCallContent, TextContent, TextReasoningContent
from providers.abstractions.errors import ResponseTooLargeError
from providers.chat_completions.tool_call_accumulator import text_bytes

__all__ = ["MIN_STEPS", "check_response", "measure_output", "output_too_large"]

MIN_STEPS = 64
"""The smallest step between two measures of a stream's output, as a part of the bound."""


def output_too_large(limit: int, backend: str | None) -> ResponseTooLargeError:
    """The error for output past ``limit``; the caller attaches the partial response."""
    return ResponseTooLargeError(
        f"the output (text, reasoning and tool-call arguments) passed limits.max_output_bytes "
        f"({limit} bytes)",
        limit="max_output_bytes",
        backend=backend,
    )


def measure_output(  # noqa: PLR0917 - the stream state's parts, positionally
    partial: ChatResponseBuilder,
    measured: dict[int, tuple[int, int]],
    pending: int,
    left: int,
    limit: int,
    backend: str | None,
) -> int:
    """A stream's output: what ``partial`` holds (``measured``, its memo) and the argument text
    of calls still being assembled (``pending``). Past ``limit``: ``ResponseTooLargeError``;
    else the bytes the stream may still carry (``left``) at which it is due again."""
    size = partial.output_bytes(measured) + pending
    if size > limit:
        raise output_too_large(limit, backend)
    return left - max(limit - size, limit // MIN_STEPS)


def check_response(response: ChatResponse, limit: int, backend: str | None) -> None:
    """A whole answer's output past ``limit``: ``ResponseTooLargeError``, the answer as its
    partial response (it was received whole)."""
    size = 0
    for message in response.messages:
        for content in message.contents:
            kind = type(content)
            if kind is TextContent or kind is TextReasoningContent:
                size += text_bytes(content.text)  # type: ignore[attr-defined]
            elif kind is FunctionCallContent:
                size += text_bytes(content.raw_arguments)  # type: ignore[attr-defined]
    if size > limit:
        error = output_too_large(limit, backend)
        error.partial_response = response
        raise error

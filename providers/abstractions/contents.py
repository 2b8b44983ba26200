"""Message contents, mirroring Microsoft.Extensions.AI's ``AIContent`` family.

Every content keeps ``raw`` (what the server sent for it, when there was one thing) and
``additional_properties`` (server fields with no typed home), so normalising never throws away
what the server said. Instances are slotted dataclasses: the streaming path makes one per chunk,
and ``additional_properties`` stays ``None`` until something needs it, to keep that cheap.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AIContent",
    "DataContent",
    "ErrorContent",
    "FunctionCallContent",
    "FunctionResultContent",
    "TextContent",
    "TextReasoningContent",
    "UriContent",
    "UsageContent",
    "UsageDetails",
]


@dataclass(slots=True)
class AIContent:
    """Base of every content: the untouched server representation and extra properties."""

    raw: Any = field(default=None, kw_only=True, repr=False, compare=False)
    additional_properties: dict[str, Any] | None = field(default=None, kw_only=True)


@dataclass(slots=True)
class TextContent(AIContent):
    """Visible text."""

    text: str


@dataclass(slots=True)
class TextReasoningContent(AIContent):
    """Reasoning ("thinking") text, kept apart from the answer whatever field or tag carried it."""

    text: str


@dataclass(slots=True)
class FunctionCallContent(AIContent):
    """A tool call the model asked for.

    ``raw_arguments`` is the exact JSON text the server sent (replayed verbatim in history so the
    server's prompt cache sees the same bytes); ``arguments`` is its parsed object. When the text
    is not a JSON object, ``arguments`` is empty and ``error`` says why: the call is surfaced,
    never dropped, and an agent must not execute it.
    """

    call_id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    raw_arguments: str = ""
    error: str | None = None


@dataclass(slots=True)
class FunctionResultContent(AIContent):
    """The result of a tool call, sent back as a `tool` message."""

    call_id: str
    result: Any = None


@dataclass(slots=True)
class DataContent(AIContent):
    """Inline binary data (an image, audio) with its media type; sent as a data URI."""

    data: bytes
    media_type: str

    @property
    def uri(self) -> str:
        """The RFC 2397 data URI the OpenAI wire format expects."""
        return f"data:{self.media_type};base64,{base64.b64encode(self.data).decode('ascii')}"


@dataclass(slots=True)
class UriContent(AIContent):
    """Data the server fetches itself (an image URL)."""

    uri: str
    media_type: str | None = None


@dataclass(slots=True)
class ErrorContent(AIContent):
    """A non-fatal problem reported inside a response (a diagnostic, not an exception)."""

    message: str
    code: str | None = None


@dataclass(slots=True)
class UsageDetails:
    """Token counts for one request.

    Counts the server did not report stay ``None``: a missing ``cached_tokens`` (vLLM without
    ``--enable-prompt-tokens-details``) is unknown, not zero. ``additional_counts`` holds every
    other integer the server reported, keyed by its dotted path
    (``prompt_tokens_details.audio_tokens``).
    """

    input_token_count: int | None = None
    output_token_count: int | None = None
    total_token_count: int | None = None
    cached_input_token_count: int | None = None
    reasoning_token_count: int | None = None
    additional_counts: dict[str, int] | None = None

    def updated_with(self, newer: UsageDetails) -> UsageDetails:
        """Fields of ``newer`` win where it reports them.

        Servers report cumulative usage (vLLM's continuous usage repeats it on every chunk), so
        the latest report replaces the earlier one instead of being added to it.
        """
        counts = dict(self.additional_counts or {})
        counts.update(newer.additional_counts or {})
        return UsageDetails(
            input_token_count=_newer(newer.input_token_count, self.input_token_count),
            output_token_count=_newer(newer.output_token_count, self.output_token_count),
            total_token_count=_newer(newer.total_token_count, self.total_token_count),
            cached_input_token_count=_newer(
                newer.cached_input_token_count, self.cached_input_token_count
            ),
            reasoning_token_count=_newer(newer.reasoning_token_count, self.reasoning_token_count),
            additional_counts=counts or None,
        )


def _newer(newer: int | None, older: int | None) -> int | None:
    return older if newer is None else newer


@dataclass(slots=True)
class UsageContent(AIContent):
    """Usage reported inside a stream (its own chunk with ``choices: []`` on every server)."""

    details: UsageDetails

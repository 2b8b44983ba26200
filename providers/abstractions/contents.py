"""Message contents, mirroring Microsoft.Extensions.AI's ``AIContent`` family.

Every content keeps ``raw`` (what the server sent for it, when there was one thing) and
``additional_properties`` (server fields with no typed home), so normalising never throws away
what the server said. Instances are slotted dataclasses (``value_class``): the streaming path
makes one per chunk, and ``additional_properties`` stays ``None`` until something needs it, to
keep that cheap.
"""

from __future__ import annotations

import base64
import json
from dataclasses import field
from typing import Any

from providers.abstractions.limits import DEFAULT_LIMITS
from providers.abstractions.records import value_class
from providers.abstractions.server_json import nests_deeper, replace_lone_surrogates
from providers.abstractions.usage import UsageDetails

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
    "parse_arguments",
    "too_deep_arguments",
]


@value_class()
class AIContent:
    """Base of every content: the untouched server representation and extra properties."""

    raw: Any = field(default=None, kw_only=True, repr=False, compare=False)
    additional_properties: dict[str, Any] | None = field(default=None, kw_only=True)


@value_class()
class TextContent(AIContent):
    """Visible text."""

    text: str


@value_class()
class TextReasoningContent(AIContent):
    """Reasoning ("thinking") text, kept apart from the answer whatever field or tag carried it."""

    text: str


@value_class()
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

    @classmethod
    def from_json(cls, call_id: str, name: str, raw_arguments: str) -> FunctionCallContent:
        """A call from its JSON argument text, parsed by the rule streamed calls follow
        (``parse_arguments``): text that is not a JSON object sets ``error`` instead of raising,
        so an adapter handing over a model's call gets it flagged, never lost."""
        arguments, error = parse_arguments(raw_arguments)
        return cls(call_id, name, arguments, raw_arguments, error)


def parse_arguments(
    raw: str, max_depth: int = DEFAULT_LIMITS.max_json_depth
) -> tuple[dict[str, Any], str | None]:
    """``(arguments, error)``: empty text means no arguments; anything else must be an object
    nesting at most ``max_depth`` levels (``Limits.max_json_depth``: deeper arguments would
    break whoever walks them next, a tool's ``json.dumps``, a validator).

    The one parsing rule for a call's arguments, whichever wire carried them (chat deltas, the
    Responses API, ``FunctionCallContent.from_json``).
    """
    if not raw.strip():
        return {}, None
    try:
        value = json.loads(raw)
    except ValueError as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        return {}, f"arguments are not valid JSON ({reason}); raw text kept in raw_arguments"
    except RecursionError:
        return {}, too_deep_arguments(max_depth)  # deeper than the interpreter parses
    if nests_deeper(value, raw, max_depth):
        return {}, too_deep_arguments(max_depth)
    if "\\u" in raw:  # (a lone surrogate would crash whoever encodes the arguments next)
        value, _ = replace_lone_surrogates(value, raw)
    if not isinstance(value, dict):
        return {}, f"arguments are JSON but not an object (got {type(value).__name__})"
    return value, None


def too_deep_arguments(max_depth: int) -> str:
    """The ``error`` of a call whose arguments nest past ``Limits.max_json_depth``."""
    return (
        f"arguments nest deeper than limits.max_json_depth ({max_depth}); "
        "raw text kept in raw_arguments"
    )


@value_class()
class FunctionResultContent(AIContent):
    """The result of a tool call, sent back as a `tool` message."""

    call_id: str
    result: Any = None


@value_class()
class DataContent(AIContent):
    """Inline binary data (an image, audio) with its media type; sent as a data URI."""

    data: bytes
    media_type: str

    @property
    def uri(self) -> str:
        """The RFC 2397 data URI the OpenAI wire format expects."""
        return f"data:{self.media_type};base64,{base64.b64encode(self.data).decode('ascii')}"


@value_class()
class UriContent(AIContent):
    """Data the server fetches itself (an image URL)."""

    uri: str
    media_type: str | None = None


@value_class()
class ErrorContent(AIContent):
    """A non-fatal problem reported inside a response (a diagnostic, not an exception)."""

    message: str
    code: str | None = None


@value_class()
class UsageContent(AIContent):
    """Usage reported inside a stream (its own chunk with ``choices: []`` on every server)."""

    details: UsageDetails

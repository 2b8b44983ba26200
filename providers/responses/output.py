"""Output items of a Responses-API response, read into our contents.

Shared by the event normaliser (a done item, the terminal response's output) and the reading of
whole response objects (``POST`` without streaming, ``GET``, cancel), so the two cannot disagree
about what an item means, what a status means, or how a function call is assembled. A call
naming a tool the request did not offer carries ``error`` (``offered``; issue #20), like one
whose arguments do not parse: surfaced, never executed.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any

from providers.abstractions.contents import (
    AIContent,
    ErrorContent,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
)
from providers.abstractions.limits import DEFAULT_LIMITS
from providers.abstractions.open_values import ChatFinishReason, finish_reason_of
from providers.chat_completions.tool_call_accumulator import parse_arguments
from providers.text_tool_calls import not_offered

__all__ = [
    "PendingCall",
    "call_content",
    "finish_reason_for",
    "list_or_empty",
    "offered_in_request",
    "part_content",
    "status_extras",
    "str_or_none",
]

Payload = Mapping[str, Any]

_CANCELLED = ChatFinishReason("cancelled")
_INCOMPLETE_REASONS = {
    "max_output_tokens": ChatFinishReason.LENGTH,
    "content_filter": ChatFinishReason.CONTENT_FILTER,
}


def finish_reason_for(response: Payload, *, made_calls: bool) -> ChatFinishReason | None:
    """The finish reason a response's ``status`` stands for; ``None`` while it still runs.

    ``incomplete`` for ``max_output_tokens`` is ``length`` (a token cut, as on chat); a completed
    response that made function calls is ``tool_calls``, which chat servers send and Responses
    servers do not, so an agent loop reads the same thing from both.
    """
    status = response.get("status")
    if status == "incomplete":
        details = response.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, Mapping) else None
        if isinstance(reason, str) and reason:
            return _INCOMPLETE_REASONS.get(reason) or finish_reason_of(reason)
        return ChatFinishReason.LENGTH
    if status in ("queued", "in_progress"):
        return None
    if status == "cancelled":
        return _CANCELLED
    return ChatFinishReason.TOOL_CALLS if made_calls else ChatFinishReason.STOP


def offered_in_request(body: Payload | None) -> frozenset[str] | None:
    """The function tools a request body offered (``None`` without a body: a stored response
    read back, whose request is not known here).

    Read from the body, not the options: it is exactly what the server was told, a raw
    ``tools`` passed as an extra key included.
    """
    if body is None:
        return None
    names = set()
    for tool in list_or_empty(body.get("tools")):
        function = tool.get("function", tool) if isinstance(tool, Mapping) else None
        name = function.get("name") if isinstance(function, Mapping) else None
        if isinstance(name, str):
            names.add(name)
    return frozenset(names)


class PendingCall:
    """A function call whose item is not done yet: what its events said so far."""

    __slots__ = ("arguments", "call_id", "error", "fragments", "item_id", "name", "size")

    def __init__(self, item: Payload) -> None:
        self.item_id = str_or_none(item.get("id"))
        self.call_id = str_or_none(item.get("call_id"))
        self.name = str_or_none(item.get("name"))
        arguments = item.get("arguments")
        self.fragments: list[str] = [arguments] if isinstance(arguments, str) and arguments else []
        self.arguments: str | None = None  # the `.done` event's full text, when it came
        self.size = 0  # bytes of argument deltas
        self.error: str | None = None  # set when a limit cut the call short


def str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def list_or_empty(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def part_content(part: Payload) -> AIContent | None:
    kind = part.get("type")
    if kind == "output_text":
        text = part.get("text")
        return TextContent(text) if isinstance(text, str) and text else None
    if kind in ("reasoning_text", "summary_text"):
        text = part.get("text")
        return TextReasoningContent(text) if isinstance(text, str) and text else None
    if kind == "refusal":
        refusal = part.get("refusal")
        return ErrorContent(refusal, "refusal") if isinstance(refusal, str) and refusal else None
    return None


def call_content(
    call: PendingCall | None,
    item: Payload | None,
    *,
    cut: bool = False,
    offered: frozenset[str] | None = None,
    max_depth: int = DEFAULT_LIMITS.max_json_depth,
) -> FunctionCallContent:
    """The whole call: the done item's fields win over what the events assembled.

    A call the output ended inside (``cut``: the stream stopped, or the response ended
    ``incomplete`` before the item was done; or the item's own ``status`` is ``incomplete``,
    as vLLM marks a call ``max_output_tokens`` cut) carries ``error`` even when its arguments
    parse: vLLM sends the cut call's name with ``arguments: ""``, which would otherwise read as
    a complete call with no arguments, and a caller must never run a tool on half a call.
    """
    call = call or PendingCall({})
    raw: str | None = None
    call_id = name = item_id = None
    if item is not None:
        cut = cut or item.get("status") == "incomplete"
        arguments = item.get("arguments")
        if isinstance(arguments, str):
            raw = arguments
        elif isinstance(arguments, Mapping):
            raw = json.dumps(arguments, ensure_ascii=False)
        call_id, name, item_id = (
            str_or_none(item.get("call_id")),
            str_or_none(item.get("name")),
            str_or_none(item.get("id")),
        )
    if raw is None:
        raw = call.arguments if call.arguments is not None else "".join(call.fragments)
    name = name or call.name
    arguments, error = parse_arguments(raw, max_depth)
    if cut and error is None:
        error = "the output was cut off in or right after this call, which may be incomplete"
    if not name:
        error = _joined("the server sent no function name for this tool call", error)
    elif offered is not None and name not in offered:
        error = _joined(not_offered(name, sorted(offered)), error)
    if call.error is not None:
        error = _joined(call.error, error)
    item_id = item_id or call.item_id
    return FunctionCallContent(
        call_id or call.call_id or f"call_{uuid.uuid4().hex[:24]}",
        name or "",
        arguments,
        raw,
        error,
        additional_properties={"item_id": item_id} if item_id else None,
    )


def _joined(first: str, then: str | None) -> str:
    return f"{first}; {then}" if then else first


def status_extras(response: Payload) -> dict[str, Any] | None:
    status = response.get("status")
    if not isinstance(status, str):
        return None
    extras: dict[str, Any] = {"status": status}
    details = response.get("incomplete_details")
    if details is not None:
        extras["incomplete_details"] = details
    return extras

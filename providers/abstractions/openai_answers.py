"""Answers as OpenAI dicts: ``chat.completion`` and ``chat.completion.chunk``.

For an adapter that must hand our responses to code expecting OpenAI's (an OpenAI-SDK
transport, a proxy): ``ChatResponse.to_openai()`` and ``ChatResponseUpdate.to_openai_chunk()``
call this. The dicts are what a server would have sent for the same answer, so the chunk
normaliser reads them back to the same response; reasoning is written as ``reasoning_content``.

**A flagged call is never written as ``tool_calls``** (issue 32). OpenAI's format has no
"invalid call": whatever is in ``tool_calls`` a loop that dispatches by name will run. So a
``FunctionCallContent`` with ``error`` set (a tool the request never offered, arguments that
are not a JSON object, a call cut off mid-write, past a limit) goes out as text, in its place
among the text: the text the model wrote when the call was recovered from it (``raw``), else,
for a call the server structured itself, the hermes form a server would have left in the
content, ``<tool_call>\n{"name": NAME, "arguments": ARGUMENTS}\n</tool_call>``, with the
argument text verbatim (``{}`` when empty) even when it is not JSON: nothing is repaired into
a call that parses. Several calls recovered from one block share its text, written once. An
answer whose calls were all flagged ends ``stop``, not ``tool_calls``: what the stock SDK shows
for a call the server left as text. Every path that writes OpenAI's wire format (the SDK
transport, any server) goes through here, so none can disagree; a stream's writer that writes
the finish in a later chunk than the calls applies the last rule itself (``finish_for``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from providers.abstractions.contents import (
    AIContent,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
    UsageContent,
)
from providers.abstractions.open_values import ChatFinishReason, ChatRole
from providers.abstractions.openai_format import MessageFields, call_entry
from providers.abstractions.usage import UsageDetails

__all__ = [
    "ResponseFields",
    "UpdateFields",
    "finish_for",
    "flagged_call_text",
    "write_chunk",
    "write_completion",
]


class UpdateFields(Protocol):
    """What is read of a ``ChatResponseUpdate``."""

    @property
    def contents(self) -> Sequence[AIContent]: ...
    @property
    def role(self) -> ChatRole | None: ...
    @property
    def finish_reason(self) -> ChatFinishReason | None: ...
    @property
    def response_id(self) -> str | None: ...
    @property
    def model_id(self) -> str | None: ...
    @property
    def created_at(self) -> int | None: ...
    @property
    def choice_index(self) -> int: ...
    @property
    def additional_properties(self) -> Mapping[str, Any] | None: ...


class ResponseFields(Protocol):
    """What is read of a ``ChatResponse``."""

    @property
    def messages(self) -> Sequence[MessageFields]: ...
    @property
    def response_id(self) -> str | None: ...
    @property
    def model_id(self) -> str | None: ...
    @property
    def created_at(self) -> int | None: ...
    @property
    def finish_reason(self) -> ChatFinishReason | None: ...
    @property
    def usage(self) -> UsageDetails | None: ...
    @property
    def additional_properties(self) -> Mapping[str, Any]: ...


_TOP_LEVEL = frozenset({"system_fingerprint", "service_tier"})
"""Properties whose OpenAI place is the top of the body; every other one goes in the choice."""


def write_chunk(update: UpdateFields, tool_call_index: int) -> dict[str, Any]:
    """One ``chat.completion.chunk``. Tool calls are whole in the update, so each is written
    whole, numbered from ``tool_call_index``: a reader merges deltas by index."""
    body = _envelope("chat.completion.chunk", update)
    delta: dict[str, Any] = {} if update.role is None else {"role": str(update.role)}
    text, reasoning, calls, usage, flagged = _answer(update.contents)
    if reasoning is not None:
        delta["reasoning_content"] = reasoning
    if text is not None:
        delta["content"] = text
    if calls:
        delta["tool_calls"] = [
            {"index": tool_call_index + i, **call} for i, call in enumerate(calls)
        ]
    choice: dict[str, Any] | None = None
    if delta or update.finish_reason is not None or usage is None:
        finish = update.finish_reason
        choice = {
            "index": update.choice_index,
            "delta": delta,
            "finish_reason": finish_for(finish, bool(calls) or not flagged),
        }
        body["choices"] = [choice]
    else:
        body["choices"] = []  # a usage report, as servers send it
    if usage is not None:
        body["usage"] = usage.to_openai()
    _place(update.additional_properties, body, choice)
    return body


def write_completion(response: ResponseFields) -> dict[str, Any]:
    """A whole ``chat.completion``: one choice per message, each with the response's finish."""
    body = _envelope("chat.completion", response)
    finish = response.finish_reason
    choices = []
    answers = [_answer(message.contents) for message in response.messages]
    callable_ = any(calls for _, _, calls, _, _ in answers) or not any(a[4] for a in answers)
    for index, message in enumerate(response.messages):
        text, reasoning, calls, _, _ = answers[index]
        answer: dict[str, Any] = {"role": message.role.value, "content": text}
        if reasoning is not None:
            answer["reasoning_content"] = reasoning
        if calls:
            answer["tool_calls"] = calls
        choices.append(
            {
                "index": index,
                "message": answer,
                "finish_reason": finish_for(finish, callable_),
            }
        )
    body["choices"] = choices
    if response.usage is not None:
        body["usage"] = response.usage.to_openai()
    _place(response.additional_properties, body, choices[0] if choices else None)
    return body


def _envelope(kind: str, source: UpdateFields | ResponseFields) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if source.response_id is not None:
        body["id"] = source.response_id
    body["object"] = kind
    if source.created_at is not None:
        body["created"] = source.created_at
    if source.model_id is not None:
        body["model"] = source.model_id
    return body


def finish_for(finish: ChatFinishReason | None, callable_: bool) -> str | None:
    """The finish to write: ``tool_calls`` becomes ``stop`` when no call was written as one
    (``callable_`` false: every call of the answer was flagged, and went out as text)."""
    if finish is None:
        return None
    if not callable_ and finish == ChatFinishReason.TOOL_CALLS:
        return str(ChatFinishReason.STOP)
    return str(finish)


def flagged_call_text(call: FunctionCallContent) -> str:
    """The text a flagged call is written as: see the module docstring."""
    if isinstance(call.raw, str) and call.raw:
        return call.raw
    name = json.dumps(call.name, ensure_ascii=False)
    arguments = call.raw_arguments if call.raw_arguments.strip() else "{}"
    return f'<tool_call>\n{{"name": {name}, "arguments": {arguments}}}\n</tool_call>'


def _answer(
    contents: Sequence[AIContent],
) -> tuple[str | None, str | None, list[dict[str, Any]], UsageDetails | None, bool]:
    """``(text, reasoning, calls, usage, flagged)``; text and reasoning are ``None`` when
    empty; ``flagged``: a call was written as text."""
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    usage: UsageDetails | None = None
    written: str | None = None  # the recovered text last written for a flagged call
    flagged = False
    for content in contents:
        if isinstance(content, TextContent):
            texts.append(content.text)
        elif isinstance(content, TextReasoningContent):
            reasoning.append(content.text)
        elif isinstance(content, FunctionCallContent):
            if content.error is None:
                calls.append(call_entry(content, replay=False))
                continue
            flagged = True
            if content.raw is None or content.raw is not written:
                texts.append(flagged_call_text(content))
                written = content.raw if isinstance(content.raw, str) else None
        elif isinstance(content, UsageContent):
            usage = content.details if usage is None else usage.updated_with(content.details)
    return ("".join(texts) or None, "".join(reasoning) or None, calls, usage, flagged)


def _place(
    properties: Mapping[str, Any] | None, body: dict[str, Any], choice: dict[str, Any] | None
) -> None:
    """Properties back among the keys they were read from: the normaliser keeps every field it
    does not model, top-level or in the choice, as a property. Values JSON cannot hold (a
    layer's timing object) are not written: the dict is for JSON readers."""
    for key, value in (properties or {}).items():
        if isinstance(value, _JSON_TYPES) or value is None:
            target = body if choice is None or key in _TOP_LEVEL else choice
            target.setdefault(key, value)


_JSON_TYPES = (str, int, float, bool, list, dict)

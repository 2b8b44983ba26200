"""Answers as OpenAI dicts: ``chat.completion`` and ``chat.completion.chunk``.

For an adapter that must hand our responses to code expecting OpenAI's (an OpenAI-SDK
transport, a proxy): ``ChatResponse.to_openai()`` and ``ChatResponseUpdate.to_openai_chunk()``
call this. The dicts are what a server would have sent for the same answer, so the chunk
normaliser reads them back to the same response; reasoning is written as ``reasoning_content``.
"""

from __future__ import annotations

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

__all__ = ["ResponseFields", "UpdateFields", "write_chunk", "write_completion"]


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
    text, reasoning, calls, usage = _answer(update.contents)
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
            "finish_reason": None if finish is None else str(finish),
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
    for index, message in enumerate(response.messages):
        text, reasoning, calls, _ = _answer(message.contents)
        answer: dict[str, Any] = {"role": message.role.value, "content": text}
        if reasoning is not None:
            answer["reasoning_content"] = reasoning
        if calls:
            answer["tool_calls"] = calls
        choices.append(
            {
                "index": index,
                "message": answer,
                "finish_reason": None if finish is None else str(finish),
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


def _answer(
    contents: Sequence[AIContent],
) -> tuple[str | None, str | None, list[dict[str, Any]], UsageDetails | None]:
    """``(text, reasoning, calls, usage)``; text and reasoning are ``None`` when empty."""
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[dict[str, Any]] = []
    usage: UsageDetails | None = None
    for content in contents:
        if isinstance(content, TextContent):
            texts.append(content.text)
        elif isinstance(content, TextReasoningContent):
            reasoning.append(content.text)
        elif isinstance(content, FunctionCallContent):
            calls.append(call_entry(content, replay=False))
        elif isinstance(content, UsageContent):
            usage = content.details if usage is None else usage.updated_with(content.details)
    return ("".join(texts) or None, "".join(reasoning) or None, calls, usage)


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

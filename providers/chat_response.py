"""``ChatResponseUpdate`` (one streamed step) and ``ChatResponse`` (the whole answer).

``ChatResponse.from_updates`` is the one function that turns a stream into a response; the
non-streaming path builds its response through it too, so a streamed and a non-streamed call
to the same server cannot disagree about what the answer was.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from providers._open_values import ChatFinishReason, ChatRole
from providers.contents import (
    AIContent,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
    UsageContent,
    UsageDetails,
)
from providers.messages import ChatMessage

__all__ = ["ChatResponse", "ChatResponseBuilder", "ChatResponseUpdate"]

_SUBSTANTIVE = (TextContent, TextReasoningContent, FunctionCallContent)


@dataclass(slots=True)
class ChatResponseUpdate:
    """One step of a streamed response: usually one server chunk for one choice.

    An update with no contents is still yielded (the role-only first chunk, a keepalive): it tells
    a watchdog the connection is alive. ``is_substantive`` separates those from real output.
    """

    contents: list[AIContent] = field(default_factory=list)
    role: ChatRole | None = None
    finish_reason: ChatFinishReason | None = None
    response_id: str | None = None
    model_id: str | None = None
    created_at: int | None = None
    choice_index: int = 0
    additional_properties: dict[str, Any] | None = None
    raw: Any = field(default=None, repr=False, compare=False)

    @property
    def text(self) -> str:
        return "".join(c.text for c in self.contents if type(c) is TextContent)

    @property
    def reasoning(self) -> str:
        return "".join(c.text for c in self.contents if type(c) is TextReasoningContent)

    @property
    def is_substantive(self) -> bool:
        """True when the update carries output (text, reasoning or a tool call).

        Retry and failover decisions hinge on this: once a substantive update has reached the
        caller, re-sending the request would duplicate output.
        """
        for content in self.contents:  # noqa: SIM110 - a loop, not any(genexpr): per update
            if isinstance(content, _SUBSTANTIVE):
                return True
        return False


@dataclass(slots=True)
class ChatResponse:
    """A complete answer: one message per choice (usually one), and what the server said."""

    messages: list[ChatMessage] = field(default_factory=list)
    response_id: str | None = None
    model_id: str | None = None
    created_at: int | None = None
    finish_reason: ChatFinishReason | None = None
    usage: UsageDetails | None = None
    additional_properties: dict[str, Any] = field(default_factory=dict)
    raw: Any = field(default=None, repr=False, compare=False)

    @property
    def text(self) -> str:
        return "".join(m.text for m in self.messages)

    @property
    def reasoning(self) -> str:
        return "".join(m.reasoning for m in self.messages)

    @property
    def tool_calls(self) -> list[FunctionCallContent]:
        return [c for m in self.messages for c in m.tool_calls]

    @classmethod
    def from_updates(cls, updates: Iterable[ChatResponseUpdate]) -> ChatResponse:
        """Coalesce a stream into the response a non-streamed call would have returned.

        One pass, appending; adjacent text (and adjacent reasoning) is merged once at the end, so
        10,000 one-character updates cost 10,000 appends and one join. Usage is not summed:
        servers report it cumulatively, so later reports replace earlier ones field by field.
        """
        builder = ChatResponseBuilder()
        for update in updates:
            builder.add(update)
        return builder.build()


class ChatResponseBuilder:
    """``from_updates`` one update at a time, for whoever must be able to stop anywhere.

    The client keeps one per stream (``keep_raw=False``) so a failure can hand the caller a
    partial response without retaining every raw chunk, which the caller already received.
    """

    __slots__ = ("_by_choice", "_keep_raw", "_raws", "_response", "_roles", "count", "substantive")

    def __init__(self, *, keep_raw: bool = True) -> None:
        self._response = ChatResponse()
        self._by_choice: dict[int, list[AIContent]] = {}
        self._roles: dict[int, ChatRole] = {}
        self._raws: list[Any] = []
        self._keep_raw = keep_raw
        self.count = 0
        self.substantive = False
        """Has an update with text, reasoning or a tool call been added?"""

    def add(self, update: ChatResponseUpdate) -> None:
        response = self._response
        self.count += 1
        if response.response_id is None:
            response.response_id = update.response_id
        if response.model_id is None:
            response.model_id = update.model_id
        if response.created_at is None:
            response.created_at = update.created_at
        if update.finish_reason is not None:
            response.finish_reason = update.finish_reason
        if update.role is not None and update.choice_index not in self._roles:
            self._roles[update.choice_index] = update.role
        if update.additional_properties:
            response.additional_properties.update(update.additional_properties)
        if self._keep_raw and update.raw is not None:
            self._raws.append(update.raw)
        contents = self._by_choice.get(update.choice_index)
        if contents is None:
            contents = self._by_choice[update.choice_index] = []
        for content in update.contents:
            if type(content) is UsageContent:
                usage = response.usage
                response.usage = (
                    content.details if usage is None else usage.updated_with(content.details)
                )
            else:
                if not self.substantive and isinstance(content, _SUBSTANTIVE):
                    self.substantive = True
                contents.append(content)

    def build(self) -> ChatResponse:
        """The response so far; the builder can go on accepting updates afterwards."""
        source = self._response
        return ChatResponse(
            [
                ChatMessage(
                    self._roles.get(index, ChatRole.ASSISTANT), _coalesce(self._by_choice[index])
                )
                for index in sorted(self._by_choice)
            ],
            source.response_id,
            source.model_id,
            source.created_at,
            source.finish_reason,
            source.usage,
            dict(source.additional_properties),
            list(self._raws),
        )


def _coalesce(contents: list[AIContent]) -> list[AIContent]:
    """Merge runs of adjacent text and of adjacent reasoning into one content each.

    A run keeps the first content's ``additional_properties``; ``raw`` is dropped because it no
    longer describes one server object (the response keeps every raw chunk).
    """
    merged: list[AIContent] = []
    run: list[str] = []
    run_type: type | None = None
    run_props: dict[str, Any] | None = None
    for content in contents:
        kind = type(content)
        if kind is TextContent or kind is TextReasoningContent:
            if kind is not run_type:
                _close_run(merged, run, run_type, run_props)
                run_type, run_props = kind, content.additional_properties
            run.append(content.text)  # type: ignore[attr-defined]
            continue
        _close_run(merged, run, run_type, run_props)
        run_type, run_props = None, None
        merged.append(content)
    _close_run(merged, run, run_type, run_props)
    return merged


def _close_run(
    merged: list[AIContent], run: list[str], kind: type | None, props: dict[str, Any] | None
) -> None:
    if kind is None or not run:
        return
    text = run[0] if len(run) == 1 else "".join(run)
    run.clear()
    if kind is TextContent:
        merged.append(TextContent(text, additional_properties=props))
    else:
        merged.append(TextReasoningContent(text, additional_properties=props))

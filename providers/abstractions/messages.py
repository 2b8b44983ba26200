"""``ChatMessage``: a role and an ordered list of contents, as in Microsoft.Extensions.AI."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any

from providers.abstractions.contents import (
    AIContent,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
)
from providers.abstractions.open_values import ChatRole
from providers.abstractions.openai_format import read_message, write_message
from providers.abstractions.records import value_class

__all__ = ["ChatMessage"]


@value_class()
class ChatMessage:
    """One message of a conversation.

    The helpers (``ChatMessage.user("hi")``) cover the common shapes; anything richer is built
    from contents directly, e.g. an assistant turn holding reasoning, text and tool calls.
    """

    role: ChatRole
    contents: list[AIContent] = field(default_factory=list)
    """The parts of the message; a plain string given here becomes one ``TextContent``."""
    author_name: str | None = None
    message_id: str | None = None
    raw: Any = field(default=None, repr=False, compare=False)
    """What the message was read from (``from_openai``'s dict), when it was read."""
    additional_properties: dict[str, Any] | None = None
    """Keys of the OpenAI message with no field here (``refusal``, ``prefix``): written back by
    ``to_openai()`` and sent with the request, beside the keys the library writes."""

    def __post_init__(self) -> None:
        # `ChatMessage(role, "text")` must not become a message whose contents are characters
        # (iterating a str) or silently empty: the MEAI constructor takes text here too.
        if isinstance(self.contents, str):
            self.contents = [TextContent(self.contents)]
        if isinstance(self.role, str) and not isinstance(self.role, ChatRole):
            self.role = ChatRole(self.role)

    @classmethod
    def system(cls, text: str) -> ChatMessage:
        return cls(ChatRole.SYSTEM, [TextContent(text)])

    @classmethod
    def user(cls, text: str, *more: AIContent) -> ChatMessage:
        """A user turn; extra contents (images) follow the text."""
        return cls(ChatRole.USER, [TextContent(text), *more])

    @classmethod
    def assistant(cls, text: str = "", *more: AIContent) -> ChatMessage:
        """An assistant turn; pass ``FunctionCallContent``s to replay tool calls in history."""
        contents: list[AIContent] = [TextContent(text)] if text else []
        contents.extend(more)
        return cls(ChatRole.ASSISTANT, contents)

    @classmethod
    def tool(cls, call_id: str, result: Any) -> ChatMessage:
        """The result of one tool call."""
        return cls(ChatRole.TOOL, [FunctionResultContent(call_id, result)])

    @property
    def text(self) -> str:
        """The visible text: every ``TextContent``, concatenated."""
        return "".join(c.text for c in self.contents if isinstance(c, TextContent))

    @property
    def reasoning(self) -> str:
        return "".join(c.text for c in self.contents if isinstance(c, TextReasoningContent))

    @property
    def tool_calls(self) -> list[FunctionCallContent]:
        return [c for c in self.contents if isinstance(c, FunctionCallContent)]

    @classmethod
    def from_openai(cls, message: Mapping[str, Any]) -> ChatMessage:
        """One OpenAI chat message (``{"role": "user", "content": ...}``), any role.

        ``to_openai()`` writes it back as the same dict (see ``openai_format`` for the few
        shapes that come back normalised); ``reasoning_content`` is read as reasoning.
        """
        role, contents, author_name, extras = read_message(message)
        return cls(role, contents, author_name, raw=message, additional_properties=extras)

    def to_openai(self) -> dict[str, Any]:
        """This message as one OpenAI chat message, reasoning as ``reasoning_content``.

        A tool turn holding several results is several OpenAI messages, one per result: for
        such a message this raises ``ValueError``, and ``to_openai_messages()`` gives them all.
        """
        written = self.to_openai_messages()
        if len(written) != 1:
            raise ValueError(
                f"this message is {len(written)} OpenAI messages (one per tool result): "
                "use to_openai_messages()"
            )
        return written[0]

    def to_openai_messages(self) -> list[dict[str, Any]]:
        """The OpenAI messages this message becomes: one, or one per tool result."""
        return write_message(self)

    @classmethod
    def coerce_all(cls, messages: str | ChatMessage | Iterable[ChatMessage]) -> list[ChatMessage]:
        """Accept a bare prompt, one message or many, as MEAI's overloads do."""
        if isinstance(messages, str):
            return [cls.user(messages)]
        if isinstance(messages, ChatMessage):
            return [messages]
        return list(messages)

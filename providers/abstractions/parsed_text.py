"""``ParsedText``: what the text parsers (tool calls, reasoning tags) make of a whole text."""

from __future__ import annotations

from dataclasses import field

from providers.abstractions.contents import (
    AIContent,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
)
from providers.abstractions.records import value_class

__all__ = ["ParsedText"]


@value_class()
class ParsedText:
    """The parts of a text, in the order they appeared.

    ``contents`` is the authoritative, ordered result (text, reasoning, calls interleaved as they
    came); ``content``, ``reasoning`` and ``tool_calls`` are views of it. Nothing of the input is
    lost: every character is in exactly one ``TextContent`` or ``TextReasoningContent``, or was
    markup consumed by a recognised call or tag.
    """

    contents: list[AIContent] = field(default_factory=list)

    @property
    def content(self) -> str:
        return "".join(c.text for c in self.contents if type(c) is TextContent)

    @property
    def reasoning(self) -> str:
        return "".join(c.text for c in self.contents if type(c) is TextReasoningContent)

    @property
    def tool_calls(self) -> list[FunctionCallContent]:
        return [c for c in self.contents if type(c) is FunctionCallContent]

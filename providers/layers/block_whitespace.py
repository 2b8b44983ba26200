"""Whitespace at the edges of reasoning and tool-call blocks, made the same on every server.

For the model text ``<think>\\nX\\n</think>\\n\\nY`` llama.cpp returns reasoning ``X\\n`` and
content ``Y``, vLLM and SGLang return ``\\nX\\n`` and ``\\n\\nY``, and a client recovering the tags
from content sees ``\\nX\\n`` and ``\\n\\nY`` (transcripts/*/captured--*reasoning*). That whitespace
is the chat template's formatting around the tags, not the model's answer, and an agent switching
backends must not see its answers change. So, in the stream:

* reasoning loses leading and trailing whitespace (trailing whitespace is held until more
  reasoning shows it was inside the block);
* text right after a reasoning block or a tool call loses its leading whitespace;
* whitespace-only text right before a tool call or a reasoning block is dropped;
* everything else passes unchanged: trailing whitespace of text is only held until the next
  piece (or the end) decides it, so a plain answer comes out byte-identical.

It is a function of the content sequence alone, so it cannot depend on how bytes were cut.
"""

from __future__ import annotations

from providers.abstractions.contents import (
    AIContent,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
)

__all__ = ["BlockWhitespace"]

_TEXT = 0  # ordinary text (or nothing yet)
_REASONING_START = 1  # inside a reasoning block, nothing emitted yet
_REASONING = 2  # inside a reasoning block
_AFTER_BLOCK = 3  # right after reasoning or a tool call


class BlockWhitespace:
    """``feed(contents) -> contents`` per update, ``finish() -> contents`` once at the end."""

    __slots__ = ("_held_reasoning", "_held_text", "_state")

    def __init__(self) -> None:
        self._state = _TEXT
        self._held_text = ""
        self._held_reasoning = ""

    def feed(self, contents: list[AIContent]) -> list[AIContent]:
        out: list[AIContent] = []
        for content in contents:
            kind = type(content)
            if kind is TextContent:
                _keep(content, self.pass_text(content.text), out)  # type: ignore[attr-defined]
            elif kind is TextReasoningContent:
                _keep(content, self.pass_reasoning(content.text), out)  # type: ignore[attr-defined]
            elif kind is FunctionCallContent:
                self._held_text = self._held_reasoning = ""
                self._state = _AFTER_BLOCK
                out.append(content)
            else:
                out.append(content)
        return out

    def in_text(self) -> bool:
        """Inside ordinary text with nothing held: a ``TextContent`` whose text is not empty and
        does not end in whitespace would now pass ``feed`` unchanged, changing nothing."""
        return self._state == _TEXT and not self._held_text

    def in_reasoning(self) -> bool:
        """``in_text`` for reasoning: inside a reasoning block that has emitted already."""
        return self._state == _REASONING and not self._held_reasoning

    def held_bytes(self) -> int:
        """Whitespace held until the next piece decides it (ASCII nearly always: characters)."""
        return len(self._held_text) + len(self._held_reasoning)

    def finish(self, *, cut: bool = False) -> list[AIContent]:
        """Trailing whitespace of an answer's text is the model's; of reasoning, the template's.

        ``cut``: the stream broke off (or a limit stopped it) inside reasoning, and no edge
        closed the block: the whitespace held is what the server sent mid-block, and the
        partial response keeps it, as the whole response does when more reasoning follows.
        """
        text, reasoning = self._held_text, self._held_reasoning
        self._held_text = self._held_reasoning = ""
        if text and self._state == _TEXT:
            return [TextContent(text)]
        if cut and reasoning and self._state == _REASONING:
            return [TextReasoningContent(reasoning)]
        return []

    def pass_text(self, text: str) -> str:
        """``feed`` of one ``TextContent``, as strings: the text it hands on (``""``: nothing
        yet). For the text-recovery fast path, which keeps a plain update's text a string."""
        if self._state != _TEXT:
            self._held_reasoning = ""
            text = text.lstrip()
            if not text:
                self._state = _AFTER_BLOCK
                return ""
            self._state = _TEXT
        elif self._held_text:
            text = self._held_text + text
        body = text.rstrip()
        self._held_text = text[len(body) :]
        return body

    def pass_reasoning(self, text: str) -> str:
        """``pass_text`` for one ``TextReasoningContent``."""
        if self._state == _REASONING:
            text = self._held_reasoning + text
        else:
            self._held_text = ""  # whitespace before a block is formatting
            text = text.lstrip()
            if not text:
                self._state = _REASONING_START
                return ""
        self._state = _REASONING
        body = text.rstrip()
        self._held_reasoning = text[len(body) :]
        return body


def _keep(content: AIContent, body: str, out: list[AIContent]) -> None:
    """``content`` as the edges stage left it: itself if its text is unchanged, a new one of its
    kind (with its properties) if trimmed, nothing if nothing is left."""
    text: str = content.text  # type: ignore[attr-defined]
    if body:
        out.append(
            content
            if body is text
            else type(content)(body, additional_properties=content.additional_properties)  # type: ignore[call-arg]
        )

"""``ChoiceRecovery``: the text-recovery state of one choice of one response.

It runs the ``ReasoningParser`` and then the ``TextToolCallParser`` over a choice's text, and
the ``BlockWhitespace`` edges stage over what they give, so ``<think>`` and ``<tool_call>``
blocks a server left in ``delta.content`` become ``TextReasoningContent`` and
``FunctionCallContent``. ``TextRecoveryChatClient`` (``providers.layers.text_recovery``) keeps
one per choice, for a stream and for a whole response alike. Most text holds no marker at all,
so the per-update path is a set of guards that recognise it and hand the update's own list back.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Final

from providers.abstractions.contents import (
    AIContent,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
)
from providers.abstractions.options import ToolDeclaration
from providers.layers.block_whitespace import BlockWhitespace
from providers.reasoning import ReasoningParser
from providers.text_tool_calls import TextToolCallParser

__all__ = ["AUTO", "OFF", "ChoiceRecovery"]

OFF: Final = "off"
AUTO: Final = "auto"
_PARSED = frozenset({TextContent, TextReasoningContent, FunctionCallContent})
"""Content types a stage of this layer looks at; the rest pass every stage unchanged."""


@cache
def _fresh_plain(reasoning_mode: str, tools_mode: str) -> tuple[str, str, str] | None:
    """``_plain`` of fresh parsers in these modes (their triggers depend on the format only)."""
    reasoning = "" if reasoning_mode == OFF else ReasoningParser(reasoning_mode).plain_triggers()
    tools = "" if tools_mode == OFF else TextToolCallParser(tools_mode).plain_triggers()
    if reasoning is None or tools is None:
        return None
    return _plain(reasoning + tools)


@cache
def _plain(triggers: str) -> tuple[str, str, str] | None:
    """The characters that could start a marker of either parser, as three ``in`` tests (the
    cheapest search for so few: no format needs more; with more, there is no fast path)."""
    chars = sorted(set(triggers)) or ["\x00"]  # (NUL in a text only costs the full path)
    if len(chars) > 3:
        return None
    return (chars[0], chars[-1], chars[len(chars) // 2])


class ChoiceRecovery:
    """The parsers and bookkeeping of one choice of one response."""

    __slots__ = (
        "_block_whitespace",
        "_calls_recovered",
        "_edges",
        "_edges_in_reasoning",
        "_edges_in_text",
        "_fresh",
        "_in_block",
        "_plain",
        "_reasoning",
        "_reasoning_mode",
        "_server_calls",
        "_server_reasoning",
        "_text_seen",
        "_tool_declarations",
        "_tools",
        "_tools_mode",
    )

    def __init__(
        self,
        reasoning_mode: str,
        tools_mode: str,
        tools: Sequence[ToolDeclaration] | None,
        block_whitespace: bool,
    ) -> None:
        # The parsers and the edges stage are made when first needed (``_start``): most answers
        # hold no marker at all, and many streams at once should not each hold three idle
        # parsers. Until then the guards are those of fresh parsers, which depend on the modes
        # only.
        self._reasoning_mode = reasoning_mode
        self._tools_mode = tools_mode
        self._tool_declarations = tools
        self._block_whitespace = block_whitespace
        self._fresh = True
        self._reasoning: ReasoningParser | None = None
        self._tools: TextToolCallParser | None = None
        self._edges: BlockWhitespace | None = None
        self._server_reasoning = False
        self._text_seen = False
        self._server_calls = False
        self._calls_recovered = False
        self._plain = _fresh_plain(reasoning_mode, tools_mode)
        self._in_block: tuple[str, str, str] | None = None
        self._edges_in_text = True  # (a fresh edges stage is in text, holding nothing)
        self._edges_in_reasoning = not block_whitespace

    def _start(self) -> None:
        """Make the parsers: a piece of text or a server field needs more than the guards."""
        self._fresh = False
        mode = self._reasoning_mode
        self._reasoning = None if mode == OFF else ReasoningParser(mode)
        mode = self._tools_mode
        self._tools = None if mode == OFF else TextToolCallParser(mode, self._tool_declarations)
        self._tool_declarations = None
        self._make_edges()

    def _make_edges(self) -> BlockWhitespace | None:
        if self._edges is None and self._block_whitespace:
            self._edges = BlockWhitespace()
        return self._edges

    @property
    def calls_recovered(self) -> bool:
        return self._calls_recovered

    def process(self, contents: list[AIContent]) -> list[AIContent]:
        """Contents of one update, with the text run through the parsers.

        Most updates hold one piece of ordinary text (or server reasoning) that every stage would
        hand on unchanged. The guards (``_update_guards``) recognise those with three ``in``
        tests, and the update's own list is returned; text inside a tool-call block goes straight
        to the tool-call parser; anything else takes the full path.
        """
        if len(contents) == 1:
            content = contents[0]
            kind = type(content)
            if kind is TextContent:
                plain = self._plain
                text: str = content.text  # type: ignore[attr-defined]
                if plain is not None and text:  # (the parsers drop empty text)
                    a, b, c = plain
                    if (
                        a not in text
                        and b not in text
                        and c not in text
                        and content.additional_properties is None  # (they hand on text only)
                        and content.raw is None
                    ):
                        # The parsers would hand the text on as it is; the edges stage holds
                        # whitespace at the end back.
                        if self._edges_in_text and not text[-1].isspace():
                            return contents
                        edges = self._make_edges()
                        if edges is None:
                            return contents
                        out = edges.feed(contents)
                        self._update_edges()
                        return out
                elif self._in_block is not None and text:
                    # Inside a tool-call block (or a marker prefix) with the reasoning parser
                    # idle: the text goes to the tool-call parser as it is.
                    a, b, c = self._in_block
                    if (
                        a not in text
                        and b not in text
                        and c not in text
                        and content.additional_properties is None
                        and content.raw is None
                    ):
                        return self._to_tools_only(text)
            elif kind is TextReasoningContent and self._server_reasoning:
                text = content.text  # type: ignore[attr-defined]
                if not self._block_whitespace or (
                    self._edges_in_reasoning and text and not text[-1].isspace()
                ):
                    return contents
        out = self._process(contents)
        self._update_guards()
        return out

    def _to_tools_only(self, text: str) -> list[AIContent]:
        """The full path for a text the reasoning stage would hand on as it is."""
        assert self._tools is not None
        parts = self._tools.feed(text)
        if not parts and self._tools.plain_triggers() is None:
            return parts  # (still inside: nothing else changed, the guards hold)
        self._note_calls(parts)
        out = parts if self._edges is None else self._edges.feed(parts)
        self._update_guards()
        return out

    def _process(self, contents: list[AIContent]) -> list[AIContent]:
        if self._fresh:
            if not any(type(content) in _PARSED for content in contents):
                return contents  # (usage and the like: every stage hands them on)
            self._start()
        out: list[AIContent] = []
        for content in contents:
            kind = type(content)
            if kind is TextContent:
                self._text(content.text, out)  # type: ignore[attr-defined]
                continue
            if kind is TextReasoningContent:
                if not self._server_reasoning:
                    self._server_split()
            elif kind is FunctionCallContent:
                self._server_calls = True
            out.append(content)
        return out if self._edges is None else self._edges.feed(out)

    def _update_guards(self) -> None:
        """Work out, after the state changed, which deltas the stages would pass unchanged.

        ``_plain`` is set when both parsers are idle in plain text (no marker prefix held, no
        block open): a plain, non-empty ``TextContent`` holding none of its characters (those
        that could start a marker) then passes them as it is. Such a text also passes
        the edges stage when that holds nothing (``_edges_in_text``) and the text does not end
        in whitespace; ``_edges_in_reasoning`` is the same for server reasoning.
        ``_in_block`` is set when only the reasoning parser is idle (the tool-call parser is
        inside a block, or holds a marker prefix): a text without its characters goes
        straight to the tool-call parser.
        """
        if self._fresh:
            return  # (no parser made yet: the guards of fresh ones, set in __init__, hold)
        reasoning: str | None = ""  # "": not consulted, None: not idle
        if self._reasoning is not None and not (
            self._server_reasoning and self._reasoning_mode == AUTO
        ):
            reasoning = self._reasoning.plain_triggers()
        tools: str | None = ""
        if self._tools is not None and not (self._server_calls and self._tools_mode == AUTO):
            tools = self._tools.plain_triggers()
        if reasoning is None:
            self._plain = self._in_block = None
        elif tools is None:
            self._plain = None
            self._in_block = _plain(reasoning)
        else:
            self._plain = _plain(reasoning + tools)
            self._in_block = None
        self._update_edges()

    def _update_edges(self) -> None:
        edges = self._edges
        if edges is None:  # off, or not made yet (then fresh: in text, holding nothing)
            self._edges_in_text = True
            self._edges_in_reasoning = not self._block_whitespace
        else:
            self._edges_in_text = edges.in_text()
            self._edges_in_reasoning = edges.in_reasoning()

    def finish(self) -> list[AIContent]:
        """Release whatever the parsers still hold (a partial marker, an unclosed block)."""
        self._fresh = False  # (after the end, what remains passes through: no parsers then)
        out: list[AIContent] = []
        if self._reasoning is not None:
            held = self._reasoning.finish()
            self._reasoning = None
            self._route(held, out)
        if self._tools is not None:
            tail = self._tools.finish()
            self._tools = None
            self._note_calls(tail)
            out.extend(tail)
        if self._edges is not None:
            out = self._edges.feed(out)
            out.extend(self._edges.finish())
        self._update_guards()
        return out

    def _server_split(self) -> None:
        """The server sent reasoning of its own: it splits reasoning from the answer.

        A format that starts inside reasoning (``deepseek_r1``: the prompt opened the think
        block) would otherwise read the answer that follows as more reasoning, never closed,
        and the caller would get no text at all. Before any text has arrived, the parser is
        therefore restarted outside reasoning; tags in later text are still recovered.
        """
        self._server_reasoning = True
        if (
            not self._text_seen
            and self._reasoning is not None
            and self._reasoning_mode != AUTO
            and self._reasoning.starts_in_reasoning
        ):
            self._reasoning = ReasoningParser(self._reasoning_mode, starts_in_reasoning=False)

    def _text(self, text: str, out: list[AIContent]) -> None:
        self._text_seen = True
        if self._reasoning is not None and not (
            self._server_reasoning and self._reasoning_mode == AUTO
        ):
            self._route(self._reasoning.feed(text), out)
        else:
            self._to_tools(text, out)

    def _route(self, parts: list[AIContent], out: list[AIContent]) -> None:
        for part in parts:
            if type(part) is TextContent:
                self._to_tools(part.text, out)
            else:
                out.append(part)

    def _to_tools(self, text: str, out: list[AIContent]) -> None:
        if self._tools is None or (self._server_calls and self._tools_mode == AUTO):
            out.append(TextContent(text))
            return
        parts = self._tools.feed(text)
        self._note_calls(parts)
        out.extend(parts)

    def _note_calls(self, parts: list[AIContent]) -> None:
        if not self._calls_recovered:
            self._calls_recovered = any(type(p) is FunctionCallContent for p in parts)

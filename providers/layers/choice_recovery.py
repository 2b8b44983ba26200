"""``ChoiceRecovery``: the text-recovery state of one choice of one response.

It runs the ``ReasoningParser`` and then the ``TextToolCallParser`` over a choice's text, and
the ``BlockWhitespace`` edges stage over what they give, so ``<think>`` and ``<tool_call>``
blocks a server left in ``delta.content`` become ``TextReasoningContent`` and
``FunctionCallContent``. ``TextRecoveryChatClient`` (``providers.layers.text_recovery``) keeps
one per choice, for a stream and for a whole response alike. Most text holds no marker at all,
so the per-update path is a set of guards that recognise it and hand the update's own list back.

What a call must be to come out executable (issue #20): with no tools offered there is no
tool-call parser at all, so markup stays the text it is (the model was not asked to call
anything) and a tool-call marker does not end reasoning; a call naming a tool that was not
offered carries ``error``; markup inside a think block or a Markdown code fence is no call.
Only executable calls count as ``calls_recovered`` (the finish reason the layer claims). What
the parsers may hold, and how many calls they may make, is bounded: past a limit, ``process``
and ``finish`` raise ``LimitPassed``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from providers.abstractions.contents import (
    AIContent,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
)
from providers.abstractions.errors import ResponseTooLargeError
from providers.abstractions.limits import DEFAULT_LIMITS
from providers.abstractions.options import ToolDeclaration
from providers.abstractions.response_update import TextKind
from providers.layers.block_whitespace import BlockWhitespace
from providers.layers.recovery_triggers import AUTO, OFF, free_of, fresh_plain, plain
from providers.reasoning import ReasoningParser

if TYPE_CHECKING:
    from providers.text_tool_calls import TextToolCallParser

__all__ = ["AUTO", "OFF", "ChoiceRecovery", "LimitPassed"]

_PARSED = frozenset({TextContent, TextReasoningContent, FunctionCallContent})
"""Content types a stage of this layer looks at; the rest pass every stage unchanged."""


class LimitPassed(Exception):
    """The parsers held, or recovered, more than a limit allows. ``error`` is what the caller
    gets; ``unsent`` is what the choice had made but not yet handed on (its held text
    released), which belongs in the partial response."""

    def __init__(self, error: ResponseTooLargeError, unsent: list[AIContent]) -> None:
        super().__init__(str(error))
        self.error = error
        self.unsent = unsent


class ChoiceRecovery:
    """The parsers and bookkeeping of one choice of one response."""

    __slots__ = (
        "_block_whitespace",
        "_call_count",
        "_calls_end",
        "_calls_recovered",
        "_edges",
        "_edges_in_reasoning",
        "_edges_in_text",
        "_fresh",
        "_in_block",
        "_line_start",
        "_max_calls",
        "_max_depth",
        "_max_held",
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
        *,
        max_held_bytes: int | None = None,
        max_calls: int | None = None,
        max_json_depth: int = DEFAULT_LIMITS.max_json_depth,
    ) -> None:
        # Parsers and the edges stage are made when first needed (``_start``): most answers hold
        # no marker, and many streams should not each hold idle parsers; until then the guards
        # are a fresh parser's. ``tools``: those offered; none means no call is recovered.
        self._calls_end = bool(tools)
        if not tools:
            tools_mode = OFF
        self._max_held = max_held_bytes
        self._max_calls = max_calls
        self._max_depth = max_json_depth
        self._call_count = 0
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
        self._plain = fresh_plain(reasoning_mode, tools_mode)
        # The tool-call parser stands at the start of a line, where a code fence may open: the
        # fast path skips a text there only if it begins the line (``_begins_line``).
        self._line_start = tools_mode != OFF
        self._in_block: tuple[str, str, str, str] | None = None
        self._edges_in_text = True  # (a fresh edges stage is in text, holding nothing)
        self._edges_in_reasoning = not block_whitespace

    def _start(self) -> None:
        """Make the parsers: a piece of text or a server field needs more than the guards."""
        self._fresh = False
        begun = not self._line_start
        mode, ends = self._reasoning_mode, self._calls_end
        self._reasoning = None if mode == OFF else ReasoningParser(mode, calls_end_reasoning=ends)
        mode, declared, depth = self._tools_mode, self._tool_declarations, self._max_depth
        # deferred: the tool-call formats, ~10 ms of a first request (-X importtime), for tools
        from providers.text_tool_calls import TextToolCallParser

        parser = None if mode == OFF else TextToolCallParser(mode, declared, max_json_depth=depth)
        if parser is not None and begun:
            parser.line_begun()  # (the fast path passed the first line's start)
        self._tools = parser
        self._tool_declarations = None
        self._make_edges()

    def _make_edges(self) -> BlockWhitespace | None:
        if self._edges is None and self._block_whitespace:
            self._edges = BlockWhitespace()
        return self._edges

    def passes(self, text: str, kind: TextKind) -> bool:
        """Would every stage hand ``text`` (an update's one content, of ``kind``, not empty) on
        as it is, and stay as it was? Then no ``process``: text recovery's fast path."""
        if kind is not TextContent:
            return self._server_reasoning and (
                not self._block_whitespace or (self._edges_in_reasoning and not text[-1].isspace())
            )
        plain = self._plain
        if plain is None or self._line_start or not self._edges_in_text or text[-1].isspace():
            return False
        a, b, c, d = plain
        return a not in text and b not in text and c not in text and d not in text

    @property
    def calls_recovered(self) -> bool:
        """Was an executable call (one without ``error``) recovered?"""
        return self._calls_recovered

    def process(self, contents: list[AIContent]) -> list[AIContent]:
        """Contents of one update, with the text run through the parsers.

        Most updates hold one piece of ordinary text (or server reasoning) that every stage
        would hand on unchanged; the guards (``_update_guards``) recognise those and the
        update's own list is returned. Text inside a tool-call block goes straight to the
        tool-call parser; anything else takes the full path.
        """
        if len(contents) == 1:
            content = contents[0]
            kind = type(content)
            if kind is TextContent:
                plain = self._plain
                text: str = content.text  # type: ignore[attr-defined]
                if plain is not None and text:  # (the parsers drop empty text)
                    if (
                        free_of(plain, text)
                        and content.additional_properties is None  # (they hand on text only)
                        and content.raw is None
                        and (not self._line_start or self._begins_line(text))
                    ):
                        # The parsers hand it on as it is; the edges stage may hold its end.
                        if self._edges_in_text and not text[-1].isspace():
                            return contents
                        edges = self._make_edges()
                        if edges is None:
                            return contents
                        out = edges.feed(contents)
                        self._update_edges()
                        if self._max_held is not None and edges.held_bytes() > self._max_held:
                            return self._within_limits(out)  # (a run of whitespace: raises)
                        return out
                elif (
                    self._in_block is not None
                    and text
                    and free_of(self._in_block, text)
                    and content.additional_properties is None
                    and content.raw is None
                ):
                    # Inside a tool-call block (or a marker prefix) with the reasoning parser
                    # idle: the text goes to the tool-call parser as it is.
                    return self._to_tools_only(text)
            elif kind is TextReasoningContent and self._server_reasoning:
                text = content.text  # type: ignore[attr-defined]
                if not self._block_whitespace or (text and self.passes(text, kind)):
                    return contents
        out = self._process(contents)
        self._update_guards()
        return self._within_limits(out)

    def _begins_line(self, text: str) -> bool:
        """May ``text`` (free of the triggers, a newline among them), at the start of a line,
        skip the tool-call parser? Only if it cannot open or close a fence; the parser (or the
        one made later) is then told the line has begun."""
        first = text.lstrip(" \t")[:1]
        if not first or first in "`~":
            return False
        self._line_start = False
        if self._tools is not None:
            self._tools.line_begun()
        return True

    def _to_tools_only(self, text: str) -> list[AIContent]:
        """The full path for a text the reasoning stage would hand on as it is."""
        assert self._tools is not None
        parts = self._tools.feed(text)
        if not parts and self._tools.plain_triggers() is None:
            # Still inside: nothing else changed, the guards hold; only the block grew.
            return self._within_limits(parts)
        self._note_calls(parts)
        out = parts if self._edges is None else self._edges.feed(parts)
        self._update_guards()
        return self._within_limits(out)

    def _within_limits(self, out: list[AIContent]) -> list[AIContent]:
        """``out``, unless the parsers now hold more text, or made more calls, than allowed."""
        limit = self._max_held
        if limit is not None and self._held_bytes() > limit:
            message = f"text recovery held back more than {limit} bytes of an unclosed block"
            self._pass("max_held_text_bytes", message, out)
        limit = self._max_calls
        if limit is not None and self._call_count > limit:
            over = self._call_count - limit
            for call in [c for c in out if type(c) is FunctionCallContent][-over:]:
                call.error = f"past the {limit} tool calls a response may make"
            message = f"text recovery found more than {limit} tool calls"
            self._pass("max_tool_calls", message, out)
        return out

    def _held_bytes(self) -> int:
        held = 0 if self._reasoning is None else self._reasoning.held_bytes()
        if self._tools is not None:
            held += self._tools.held_bytes()
        if self._edges is not None:
            held += self._edges.held_bytes()
        return held

    def _pass(self, limit: str, message: str, out: list[AIContent]) -> None:
        self._max_held = self._max_calls = None  # (releasing what is held must not raise)
        unsent = out + self.finish(cut=True)
        raise LimitPassed(ResponseTooLargeError(f"{message} (limits.{limit})", limit=limit), unsent)

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
        """Work out, after the state changed, which texts the stages would pass unchanged.

        ``_plain``: both parsers are idle in plain text (no marker prefix held, no block open),
        and a text without these characters (those that could start a marker) passes them.
        ``_in_block``: only the reasoning parser is idle, and a text without its characters
        goes straight to the tool-call parser. ``_line_start``: the tool-call parser stands at
        a line's start, which a text passes only if it begins the line (``_begins_line``). The
        edges stage's two (``_update_edges``): it holds nothing, in text or in reasoning.
        """
        if self._fresh:
            return  # (no parser made yet: the guards of fresh ones, set in __init__, hold)
        reasoning: str | None = ""  # "": not consulted, None: not idle
        if self._reasoning is not None and not (
            self._server_reasoning and self._reasoning_mode == AUTO
        ):
            reasoning = self._reasoning.plain_triggers()
        tools: str | None = ""
        self._line_start = False
        if self._tools is not None and not (self._server_calls and self._tools_mode == AUTO):
            tools = self._tools.plain_triggers()
            self._line_start = self._tools.at_line_start()
        if reasoning is None:
            self._plain = self._in_block = None
        elif tools is None:
            self._plain = None
            self._in_block = plain(reasoning)
        else:
            self._plain = plain(reasoning + tools)
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

    def finish(self, *, cut: bool = False, broken: bool = False) -> list[AIContent]:
        """Release what the parsers hold (a marker's start; an unclosed block, text if ``cut``:
        not read to its end). ``cut``/``broken`` (a partial): held reasoning whitespace stays."""
        self._fresh = False  # (after the end, what remains passes through: no parsers then)
        out: list[AIContent] = []
        if self._reasoning is not None:
            held = self._reasoning.finish()
            self._reasoning = None
            self._route(held, out)
        if self._tools is not None:
            tail = self._tools.finish(cut=cut)
            self._tools = None
            self._note_calls(tail)
            out.extend(tail)
        if self._edges is not None:
            out = self._edges.feed(out)
            out.extend(self._edges.finish(cut=cut or broken))
        self._update_guards()
        return self._within_limits(out)

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
            self._reasoning = ReasoningParser(
                self._reasoning_mode,
                starts_in_reasoning=False,
                calls_end_reasoning=self._calls_end,
            )

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
        for part in parts:
            if type(part) is FunctionCallContent:
                self._call_count += 1
                if part.error is None:
                    self._calls_recovered = True

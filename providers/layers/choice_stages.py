"""``ChoiceStages``: text recovery's full path for one choice of one response.

The ``ReasoningParser`` and then the ``TextToolCallParser`` run over a choice's text, and the
``BlockWhitespace`` edges stage over what they give, so ``<think>`` and ``<tool_call>`` blocks a
server left in ``delta.content`` become ``TextReasoningContent`` and ``FunctionCallContent``.
``ChoiceRecovery`` (``providers.layers.choice_recovery``) is this with the fast path in front:
most text holds no marker at all, and never reaches these stages.

What a call must be to come out executable (issue #20): with no tools offered there is no
tool-call parser at all, so markup stays the text it is (the model was not asked to call
anything) and a tool-call marker does not end reasoning; a call naming a tool that was not
offered carries ``error``; markup inside a think block or a Markdown code fence is no call.
Only executable calls count as ``calls_recovered`` (the finish reason the layer claims). What
the parsers may hold, and how many calls they may make, is bounded: past a limit,
``LimitPassed``.
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
from providers.layers.block_whitespace import BlockWhitespace
from providers.layers.recovery_triggers import AUTO, OFF
from providers.reasoning import ReasoningParser

if TYPE_CHECKING:
    from providers.text_tool_calls import TextToolCallParser

__all__ = ["ChoiceStages", "LimitPassed"]

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


class ChoiceStages:
    """The parsers, the edges stage and the limits of one choice; see the module docstring."""

    __slots__ = (
        "_block_whitespace",
        "_call_count",
        "_calls_end",
        "_calls_recovered",
        "_edges",
        "_fresh",
        "_line_start",
        "_max_calls",
        "_max_depth",
        "_max_held",
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
        # no marker, and many streams should not each hold idle parsers. ``tools``: those
        # offered; none means no call is recovered.
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
        # Whether the tool-call parser stands at a line's start, where a code fence may open:
        # texts that skip the parsers move it, and a parser made later starts from it.
        self._line_start = tools_mode != OFF
        self._fresh_guards()

    def _fresh_guards(self) -> None:
        """Where a fast path in front of the stages (``ChoiceRecovery``) sets its guards for
        stages that have seen nothing yet."""

    def _start(self) -> None:
        """Make the parsers: a piece of text or a server field needs more than the guards."""
        self._fresh = False
        begun = not self._line_start
        mode, ends = self._reasoning_mode, self._calls_end
        # The server split reasoning before any text came (``_server_split``): the answer
        # follows, so a format that starts inside reasoning must not start there.
        starts = False if self._server_reasoning else None
        self._reasoning = (
            None if mode == OFF else ReasoningParser(mode, starts, calls_end_reasoning=ends)
        )
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

    @property
    def calls_recovered(self) -> bool:
        """Was an executable call (one without ``error``) recovered?"""
        return self._calls_recovered

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
        unsent = out + self._release(cut=True)
        raise LimitPassed(ResponseTooLargeError(f"{message} (limits.{limit})", limit=limit), unsent)

    def _process(self, contents: list[AIContent]) -> list[AIContent]:
        if self._fresh:
            kinds = {type(content) for content in contents}
            if kinds.isdisjoint(_PARSED):
                return contents  # (usage and the like: every stage hands them on)
            if TextContent in kinds:
                self._start()
            else:  # (the server's reasoning or calls: no parser reads them, only the edges)
                self._make_edges()
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

    def _release(self, *, cut: bool = False, broken: bool = False) -> list[AIContent]:
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

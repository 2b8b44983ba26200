"""``ChoiceRecovery``: the text-recovery state of one choice of one response.

``TextRecoveryChatClient`` (``providers.layers.text_recovery``) keeps one per choice, for a
stream and for a whole response alike. It is the full path (``ChoiceStages``: the reasoning and
tool-call parsers and the edges stage, with their limits) with a fast path in front. Most text
holds no marker at all, so the per-update path is a set of guards, worked out whenever the
stages' state changes (``_update_guards``), that recognise such text and hand it on as it is:
a run of updates at a time (``take_passing``), one text as a string (``edit_text``), or the
update's own list (``process``).
"""

from __future__ import annotations

from providers.abstractions.contents import AIContent, TextContent, TextReasoningContent
from providers.abstractions.response_update import ChatResponseUpdate, TextKind
from providers.layers.choice_stages import ChoiceStages, LimitPassed
from providers.layers.recovery_triggers import (
    AUTO,
    OFF,
    free_of,
    free_of_each,
    fresh_lines,
    fresh_plain,
    lines,
    plain,
)
from providers.text_tool_calls.fences import ends_at_line_start

__all__ = ["AUTO", "OFF", "ChoiceRecovery", "LimitPassed"]


_NONE_PASSES = ("", "", "", "")


class ChoiceRecovery(ChoiceStages):
    """The stages of one choice with the fast path in front; see the module docstring."""

    __slots__ = ("_edges_in_reasoning", "_edges_in_text", "_in_block", "_lines", "_plain")

    def _fresh_guards(self) -> None:
        # Until the parsers are made, the guards are fresh parsers' (``_update_guards``).
        reasoning_mode, tools_mode = self._reasoning_mode, self._tools_mode
        self._plain = fresh_plain(reasoning_mode, tools_mode)
        self._lines = fresh_lines(reasoning_mode, tools_mode) if self._plain else None
        self._in_block: tuple[str, str, str, str] | None = None
        self._edges_in_text = True  # (a fresh edges stage is in text, holding nothing)
        self._edges_in_reasoning = not self._block_whitespace

    def passes_reasoning(self, text: str) -> bool:
        """Would every stage hand the server's reasoning ``text`` (not empty) on as it is, and
        stay as it was? Then no ``process``."""
        return self._server_reasoning and (
            not self._block_whitespace or (self._edges_in_reasoning and not text[-1].isspace())
        )

    def take_passing(
        self,
        run: list[ChatResponseUpdate],
        start: int,
        index: int,
        kind: TextKind,
        texts: list[str],
    ) -> int:
        """Text recovery's fast path over a run of updates (``update_runs``): from ``run[start]``
        on, the updates every stage would hand on as they are, changing nothing (plain, of
        choice ``index``, one text of ``kind``), have their texts appended to ``texts``; the
        position of the first update that is not one of them is returned. One call per run
        rather than one per update: the guards are read once, and most runs are all prose."""
        # A text passes if it holds none of a, b, c, d: "" (in every string) when no text of
        # this kind may pass now, while empty updates (tool-call fragments') still do.
        strict = True
        if kind is TextContent:
            plain = self._plain
            if plain is None or self._line_start or not self._edges_in_text:
                plain = _NONE_PASSES
            a, b, c, d = plain
        elif not self._server_reasoning or (
            self._block_whitespace and not self._edges_in_reasoning
        ):
            a = b = c = d = ""
        else:
            strict = self._block_whitespace
            a = b = c = d = "\x00"  # (reasoning: no trigger; NUL only costs the full path)
        append = texts.append
        for i in range(start, len(run)):
            update = run[i]
            text = update.plain_text
            if text is None or update.choice_index != index:
                return i
            if text:  # ("": plain and empty, a tool-call fragment's update: nothing to pass)
                if (
                    update.head.kind is not kind
                    or (strict and text[-1].isspace())
                    or a in text
                    or b in text
                    or c in text
                    or d in text
                ):
                    return i
                append(text)
        return len(run)

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
                text: str = content.text  # type: ignore[attr-defined]
                if (
                    text  # (the parsers drop empty text)
                    and content.additional_properties is None  # (they hand on text only)
                    and content.raw is None
                ):
                    edited = self.edit_text(text)
                    if edited is not None:
                        if edited is text:
                            return contents
                        return [TextContent(edited)] if edited else []
                    if self._in_block is not None and free_of(self._in_block, text):
                        # Inside a tool-call block (or a marker prefix) with the reasoning
                        # parser idle: the text goes to the tool-call parser as it is.
                        return self._to_tools_only(text)
            elif kind is TextReasoningContent and self._server_reasoning:
                text = content.text  # type: ignore[attr-defined]
                if text and self.passes_reasoning(text):
                    return contents
        out = self._process(contents)
        self._update_guards()
        return self._within_limits(out)

    def edit_text(self, text: str) -> str | None:
        """One ordinary text (not empty, no extra fields) through every stage without the
        parsers, when they would hand it on as it is: the text to hand on instead (the edges
        stage may hold its trailing whitespace, or put what it held before it; ``""``: nothing
        yet). ``None``: it needs ``process``. A string in, a string out, so that a plain
        update stays plain (a newline in ordinary prose is about one token in thirty)."""
        plain = self._plain
        if plain is None:
            return None
        if free_of(plain, text):
            if self._line_start and not self._begins_line(text):
                return None
        elif not self._passes_lines(text):
            return None
        if (self._edges_in_text and not text[-1].isspace()) or not self._block_whitespace:
            return text
        edges = self._make_edges()
        assert edges is not None
        return self._edged(edges.pass_text(text), TextContent)

    def edit_reasoning(self, text: str) -> str | None:
        """``edit_text`` for the server's reasoning, which no parser reads once the server has
        split it (only the edges stage trims it): ``None`` before that, for ``process``."""
        if not self._server_reasoning:
            return None
        if self.passes_reasoning(text):
            return text
        edges = self._make_edges()
        assert edges is not None
        return self._edged(edges.pass_reasoning(text), TextReasoningContent)

    def _edged(self, edited: str, kind: TextKind) -> str:
        """What the edges stage handed on of a text, once its guards and limits are updated."""
        self._update_edges()
        if self._max_held is not None and self._held_bytes() > self._max_held:
            self._within_limits([kind(edited)] if edited else [])  # (raises)
        return edited

    def _passes_lines(self, text: str) -> bool:
        """May ``text``, holding a newline, skip the parsers? Only if it is free of every other
        trigger and of fence characters (``recovery_triggers.lines``): then the tool-call
        parser's line state is all that moves, and it is moved here (a newline is one token in
        thirty of ordinary prose, so this keeps prose off the full path)."""
        chars = self._lines
        if chars is None or "\n" not in text or not free_of_each(chars, text):
            return False
        tools = self._tools
        if tools is None:  # (not made yet: its line state is ``_line_start``, no fence run)
            self._line_start = ends_at_line_start(text)
            return True
        if not tools.pass_lines(text):
            return False
        self._line_start = tools.at_line_start()
        return True

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

    def _update_guards(self) -> None:
        """Work out, after the state changed, which texts the stages would pass unchanged.

        ``_plain``: both parsers are idle in plain text (no marker prefix held, no block open),
        and a text without these characters (those that could start a marker) passes them.
        ``_in_block``: only the reasoning parser is idle, and a text without its characters
        goes straight to the tool-call parser. ``_line_start``: the tool-call parser stands at
        a line's start, which a text passes only if it begins the line (``_begins_line``). The
        edges stage's two (``_update_edges``): it holds nothing, in text or in reasoning.
        """
        if self._fresh:  # (no parser made yet: the guards of fresh ones, set in __init__, hold)
            self._update_edges()  # (the edges stage may be made first: for server reasoning)
            return
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
        self._lines = None
        if reasoning is None:
            self._plain = self._in_block = None
        elif tools is None:
            self._plain = None
            self._in_block = plain(reasoning)
        else:
            self._plain = plain(reasoning + tools)
            self._in_block = None
            if self._plain is not None:
                self._lines = lines(reasoning, tools)
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
        out = self._release(cut=cut, broken=broken)
        self._update_guards()
        return self._within_limits(out)

"""The one streaming scanner every format runs on.

Two states. Between blocks, the text of each delta is searched for the active start markers
(one precompiled regex); text before a marker is released at once, and only the longest suffix
that could still grow into a marker (``<tool_``, ``[TOOL_``, ``<|``…) is held back. Inside a
Markdown code fence (``fences``) no marker is looked for: a call quoted there is text. Inside a
block, the format's ``BlockTracker`` is fed each delta and the delta is appended to a list; the
list is joined once, when the tracker reports the end. So each character is classified once and
the work per delta is proportional to the delta, whatever came before.

What a finished block means is not decided here: ``resolve(marker, block)`` (the parser) asks
the formats. A block still open at end of stream goes to ``unclosed(marker, block)``. Both
``parse`` and ``feed``/``finish`` run this same code, which is why any cutting of a text into
deltas gives the same contents.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from providers.abstractions.contents import AIContent, TextContent
from providers.abstractions.records import value_class
from providers.text_tool_calls.fences import FenceTracker
from providers.text_tool_calls.protocol import BlockTracker, Stop, ToolCallFormat

__all__ = ["MarkerTable", "Scanner", "append_text"]


@value_class(frozen=True)
class MarkerTable:
    """The start markers in force, which formats each may open, and how to find them."""

    candidates: Mapping[str, tuple[ToolCallFormat, ...]]
    pattern: re.Pattern[str]
    firsts: re.Pattern[str]
    prefixes: frozenset[str]
    window: int  # longest marker length minus one
    starts: str  # the first characters of the markers (what ``firsts`` matches)

    @classmethod
    def build(cls, candidates: Mapping[str, tuple[ToolCallFormat, ...]]) -> MarkerTable:
        markers = sorted(candidates, key=len, reverse=True)
        for marker in markers:
            if any(other != marker and other.startswith(marker) for other in markers):
                # A delta cut right after the shorter one could not tell which one it is.
                raise ValueError(f"marker {marker!r} is a prefix of another marker")
        starts = "".join(sorted({m[0] for m in markers}))
        return cls(
            candidates=dict(candidates),
            pattern=re.compile("|".join(map(re.escape, markers))),
            firsts=re.compile("[" + re.escape(starts) + "]"),
            prefixes=frozenset(m[:k] for m in markers for k in range(1, len(m))),
            window=max(map(len, markers)) - 1,
            starts=starts,
        )

    def held_from(self, text: str, pos: int) -> int:
        """Where the longest suffix of ``text[pos:]`` that may still become a marker begins."""
        start = max(pos, len(text) - self.window)
        match = self.firsts.search(text, start)
        while match is not None:
            if text[match.start() :] in self.prefixes:
                return match.start()
            match = self.firsts.search(text, match.start() + 1)
        return len(text)


def append_text(out: list[AIContent], text: str) -> None:
    """Append plain text, merged into a plain ``TextContent`` just before it."""
    if not text:
        return
    last = out[-1] if out else None
    if type(last) is TextContent and last.additional_properties is None:
        last.text += text
    else:
        out.append(TextContent(text))


Resolve = Callable[[str, str], list[AIContent]]


class Scanner:
    """Splits a stream into ordinary text and blocks; see the module docstring."""

    __slots__ = (
        "_fences",
        "_held",
        "_marker",
        "_open_bytes",
        "_pieces",
        "_resolve",
        "_table",
        "_tracker",
        "_unclosed",
    )

    def __init__(self, table: MarkerTable, resolve: Resolve, unclosed: Resolve) -> None:
        self._table = table
        self._resolve = resolve
        self._unclosed = unclosed
        self._held = ""  # a suffix that may still become a marker
        self._marker = ""  # the marker of the open block
        self._tracker: BlockTracker | None = None  # set while a block is open
        self._pieces: list[str] = []  # the open block's text, unjoined
        self._open_bytes = 0  # the size of ``_pieces``
        self._fences = FenceTracker()

    def use(self, table: MarkerTable) -> None:
        """Switch the markers in force (``auto`` once a format is detected)."""
        self._table = table

    def plain_triggers(self) -> str | None:
        """The characters that could start a marker or a line, if ``feed`` would now return a
        delta free of them as one plain ``TextContent`` (outside a block, nothing held; at a
        line's start, see ``at_line_start``); else ``None``."""
        if self._tracker is not None or self._held:
            return None
        return "\n" if self._fences.inside else self._table.starts + "\n"

    def at_line_start(self) -> bool:
        return not self._fences.in_line()

    def line_begun(self) -> None:
        if self._tracker is None and not self._held:
            self._fences.mid_line()

    def pass_lines(self, text: str) -> bool:
        if self._tracker is None and not self._held:
            return self._fences.pass_lines(text)
        return False

    def held_bytes(self) -> int:
        """What ``feed`` holds back: a possible marker, and an open block."""
        return len(self._held) + self._open_bytes

    def feed(self, delta: str) -> list[AIContent]:
        tracker = self._tracker
        if tracker is not None:
            stop = tracker.feed(delta, 0)
            if stop is None:  # the common case inside a long block: just keep the delta
                self._pieces.append(delta)
                self._open_bytes += _size(delta)
                return []
            out: list[AIContent] = []
            text, pos = self._close(delta, 0, stop, out)
        else:
            out = []
            text, pos = self._held + delta, 0
            self._held = ""
        self._scan(text, pos, out)
        return out

    def finish(self) -> list[AIContent]:
        out: list[AIContent] = []
        while self._tracker is not None:
            stop = self._tracker.finish()
            block, marker = "".join(self._pieces), self._marker
            self._reset()
            if stop is None:
                out.extend(self._unclosed(marker, block))
            else:
                self._emit(marker, block[: stop.at], stop.is_block, out)
                self._scan(block, stop.at, out)  # what followed the block is text again
        append_text(out, self._held)
        self._held = ""
        return out

    def _scan(self, text: str, pos: int, out: list[AIContent]) -> None:
        """Classify ``text[pos:]``: release text, open and close blocks, hold a marker prefix."""
        fences = self._fences
        while pos < len(text):
            if self._tracker is None:
                if fences.inside:  # quoted: plain text up to the fence's end
                    turn = fences.advance(text, pos, len(text))
                    end = len(text) if turn < 0 else turn
                    append_text(out, text[pos:end])
                    pos = end
                    continue
                table = self._table
                match = table.pattern.search(text, pos)
                end = table.held_from(text, pos) if match is None else match.start()
                turn = fences.advance(text, pos, end)
                if turn >= 0:  # a fence opened before it: what follows is quoted
                    append_text(out, text[pos:turn])
                    pos = turn
                    continue
                append_text(out, text[pos:end])
                if match is None:
                    self._held = text[end:]
                    return
                pos = end
                self._marker = match.group()
                self._tracker = table.candidates[self._marker][0].tracker(self._marker)
            stop = self._tracker.feed(text, pos)
            if stop is None:
                piece = text[pos:] if pos else text
                self._pieces.append(piece)
                self._open_bytes += _size(piece)
                return
            text, pos = self._close(text, pos, stop, out)

    def _close(self, text: str, pos: int, stop: Stop, out: list[AIContent]) -> tuple[str, int]:
        """End the open block at ``stop``; return where scanning resumes."""
        consumed = sum(map(len, self._pieces))  # once per block: no per-delta bookkeeping
        cut = pos + stop.at - consumed  # index of the stop in ``text``
        if cut >= pos:
            self._pieces.append(text[pos:cut])
            block, pos = "".join(self._pieces), cut
        else:  # the stop lies in an earlier delta: re-read the part after it
            joined = "".join(self._pieces)
            block, text, pos = joined[: stop.at], joined[stop.at :] + text[pos:], 0
        marker = self._marker
        self._reset()
        self._emit(marker, block, stop.is_block, out)
        return text, pos

    def _emit(self, marker: str, block: str, is_block: bool, out: list[AIContent]) -> None:
        if not is_block:
            self._fences.skip(block)  # prose: its newlines count
            append_text(out, block)
            return
        self._fences.mid_line()
        for content in self._resolve(marker, block):
            if type(content) is TextContent and content.additional_properties is None:
                append_text(out, content.text)
            else:
                out.append(content)

    def _reset(self) -> None:
        self._tracker = None
        self._marker = ""
        self._pieces = []
        self._open_bytes = 0


def _size(text: str) -> int:
    """UTF-8 length, without encoding ASCII text (nearly all of it)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "replace"))

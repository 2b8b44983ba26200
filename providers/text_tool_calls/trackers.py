"""Block trackers shared by several formats: "up to an end marker" and "up to a balanced close".

Both look at each character once. ``EndMarkerTracker`` keeps only the few characters at the end
of the last delta that could begin an end marker, so a ``</tool_call>`` cut anywhere is found
without joining the block; ``JsonBalance`` counts brackets outside strings, jumping between the
characters that matter with a regex, so a megabyte of argument text costs one C-level scan.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache

from providers.abstractions.records import value_class
from providers.text_tool_calls.protocol import Stop

__all__ = ["EndMarkerTracker", "JsonBalance", "first_non_space"]

_NON_SPACE = re.compile(r"\S")


def first_non_space(text: str, pos: int) -> int:
    """Index of the first non-whitespace character at or after ``pos``, or -1."""
    match = _NON_SPACE.search(text, pos)
    return -1 if match is None else match.start()


@value_class(frozen=True)
class _Ends:
    """Precompiled search data for one set of end and restart markers."""

    pattern: re.Pattern[str]
    firsts: re.Pattern[str]
    first: str  # the first character shared by every marker, or "" (a str.find beats a regex)
    prefixes: frozenset[str]
    restarts: frozenset[str]
    lone_first: bool  # ``first`` occurs in each marker only as its first character
    window: int  # longest marker length minus one: how much of a marker a delta can cut off


@cache
def _ends(ends: tuple[str, ...], restarts: tuple[str, ...]) -> _Ends:
    markers = sorted({*ends, *restarts}, key=len, reverse=True)
    firsts = {m[0] for m in markers}
    return _Ends(
        pattern=re.compile("|".join(map(re.escape, markers))),
        firsts=re.compile("[" + "".join(sorted(map(re.escape, firsts))) + "]"),
        first=next(iter(firsts)) if len(firsts) == 1 else "",
        lone_first=len(firsts) == 1 and all(m.count(m[0]) == 1 for m in markers),
        prefixes=frozenset(m[:k] for m in markers for k in range(1, len(m))),
        restarts=frozenset(restarts),
        window=max(map(len, markers)) - 1,
    )


class EndMarkerTracker:
    """A block that runs from its marker to the first end marker (included).

    ``restarts`` are markers that open a new block: meeting one ends the current block just
    before it (so ``<tool_call>{bad <tool_call>{good}</tool_call>`` loses only the bad one, where
    the servers' ``<tool_call>(.*?)</tool_call>`` would swallow both). ``lead`` checks the first
    non-space character after the marker; if it cannot begin a body, the marker was prose and is
    released as text at once instead of holding the rest of the answer until end of stream.
    ``eof_ok`` accepts a block cut by the end of the stream (harmony, whose ``<|call|>`` is a
    stop token the server does not return).
    """

    __slots__ = ("_eof_ok", "_lead", "_quiet", "_seen", "_skip", "_spec", "_tail", "ended_by")

    def __init__(
        self,
        marker: str,
        ends: tuple[str, ...],
        *,
        restarts: tuple[str, ...] = (),
        lead: Callable[[str], bool] | None = None,
        eof_ok: bool = False,
    ) -> None:
        self._spec = _ends(ends, restarts)
        self._skip = len(marker)
        self._lead = lead
        self._eof_ok = eof_ok
        self._seen = 0  # characters of the block consumed so far
        self._tail = ""  # end of the consumed text that may begin an end marker
        # Set while only an occurrence of ``_spec.first`` can matter: the per-delta fast path.
        self._quiet = ""
        self.ended_by = ""  # the end marker that closed the block ("" for a restart or none)

    def feed(self, text: str, pos: int) -> Stop | None:
        quiet = self._quiet
        if quiet and (quiet not in text if not pos else text.find(quiet, pos) < 0):
            self._seen += len(text) - pos
            return None
        base = self._seen - pos  # block offset of text[0]
        self._seen += len(text) - pos
        spec = self._spec
        i = pos + self._skip
        self._skip = 0
        if self._lead is not None:
            i = first_non_space(text, i)
            if i < 0:
                return None
            lead, self._lead = self._lead, None
            if not lead(text[i]):
                return Stop(base + i, is_block=False)
        tail = self._tail
        if not tail and (
            text.find(spec.first, i) < 0 if spec.first else spec.firsts.search(text, i) is None
        ):
            self._quiet = spec.first
            return None  # the common case inside a long block: nothing that could end it
        if tail:
            window = tail + text[i : i + spec.window]
            match = spec.pattern.search(window)
            if match is not None and match.start() < len(tail):
                return self._stop(base + i - len(tail) + match.start(), match.group())
        match = spec.pattern.search(text, i)
        if match is not None:
            return self._stop(base + match.start(), match.group())
        self._tail = self._partial(text, i, tail)
        self._quiet = "" if self._tail else spec.first
        return None

    def finish(self) -> Stop | None:
        if self._lead is not None:
            return Stop(self._seen, is_block=False)  # only whitespace followed the marker
        return Stop(self._seen) if self._eof_ok else None

    def _stop(self, at: int, marker: str) -> Stop:
        if marker in self._spec.restarts:
            return Stop(at)
        self.ended_by = marker
        return Stop(at + len(marker))

    def _partial(self, text: str, i: int, tail: str) -> str:
        """The longest suffix of what was consumed that is a proper prefix of a marker."""
        spec = self._spec
        if spec.lone_first:  # such a suffix can only start at the last ``first``
            k = text.rfind(spec.first, i)
            candidate = text[k:] if k >= 0 else tail + text[i:] if tail else ""
            return candidate if candidate in spec.prefixes else ""
        n = len(text)
        end = text[n - spec.window :] if n - i >= spec.window else (tail + text[i:])[-spec.window :]
        match = spec.firsts.search(end)
        while match is not None:
            if end[match.start() :] in spec.prefixes:
                return end[match.start() :]
            match = spec.firsts.search(end, match.start() + 1)
        return ""


_JSON_OUTSIDE = re.compile(r'[\[\]{}"]')
_JSON_INSIDE = re.compile(r'["\\]')


class JsonBalance:
    """Finds where a JSON object or array that starts at the first ``scan`` position closes.

    Only nesting and strings are tracked; whether the text is valid JSON is decided later by
    ``json`` on the complete block. Deltas may cut anywhere, including after a backslash.
    """

    __slots__ = ("_depth", "_escaped", "_in_string")

    def __init__(self) -> None:
        self._depth = 0
        self._in_string = False
        self._escaped = False

    def scan(self, text: str, i: int) -> int:
        """Index just after the closing bracket, or -1 if ``text[i:]`` does not close it."""
        n = len(text)
        if self._escaped and i < n:
            self._escaped = False
            i += 1
        while i < n:
            if self._in_string:
                match = _JSON_INSIDE.search(text, i)
                if match is None:
                    return -1
                i = match.end()
                if match.group() == '"':
                    self._in_string = False
                elif i < n:
                    i += 1  # the escaped character
                else:
                    self._escaped = True
                continue
            match = _JSON_OUTSIDE.search(text, i)
            if match is None:
                return -1
            i = match.end()
            char = match.group()
            if char == '"':
                self._in_string = True
            elif char in "[{":
                self._depth += 1
            else:
                self._depth -= 1
                if self._depth <= 0:
                    return i
        return -1

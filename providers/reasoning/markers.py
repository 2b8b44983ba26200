"""Marker sets: a leftmost-match search, and which suffixes may still become a marker."""

from __future__ import annotations

import re
from functools import cache

__all__ = ["Markers", "markers"]


class Markers:
    """A set of markers: a leftmost-match search, and which suffixes may still become one.

    No marker may be a prefix of another: a stream cut right after the shorter one would then
    find it where the whole text finds the longer one.
    """

    __slots__ = ("any_start", "longest", "pattern", "prefixes", "starts")

    def __init__(self, markers: tuple[str, ...]) -> None:
        if any(a != b and b.startswith(a) for a in markers for b in markers):
            raise ValueError(f"a marker is a prefix of another: {markers}")
        self.pattern = re.compile("|".join(map(re.escape, markers)))
        self.prefixes = frozenset(m[:i] for m in markers for i in range(1, len(m)))
        self.starts = "".join(sorted({m[0] for m in markers}))
        self.any_start = re.compile(f"[{re.escape(self.starts)}]")
        self.longest = max(map(len, markers))

    def held_from(self, text: str, pos: int) -> int:
        """Where the longest suffix of ``text[pos:]`` that could still become a marker begins.

        Only the last ``longest - 1`` characters can be such a suffix, so the work is bounded
        by the marker length, not by the text.
        """
        end = len(text)
        best = end
        low = max(pos, end - self.longest + 1)
        for char in self.starts:
            i = text.find(char, low, best)
            while i != -1:
                if text[i:] in self.prefixes:
                    best = i
                    break
                i = text.find(char, i + 1, best)
        return best


@cache
def markers(found: tuple[str, ...]) -> Markers:
    return Markers(found)

"""Markdown code fences in the text between blocks: a call quoted in one is text, not a call.

A model explaining a tool writes an example call inside a fenced code block; executing it would
act on an illustration (issue #20). The rule is CommonMark's, without the details models never
exercise: a line whose first non-blank characters are three or more backticks (or tildes) opens
a fence; a line of at least as many of the same character, with nothing after them but blanks,
closes it. The whole text is one document, so a fence at the very start counts.

Only line starts are examined, and lines are skipped with ``str.find``: the cost is per line,
not per character. The state is a function of the characters alone, never of how they were cut
into deltas, which the scanner's guarantee (any cutting gives ``parse``'s contents) needs.
"""

from __future__ import annotations

__all__ = ["FenceTracker", "ends_at_line_start"]

_START = 0  # at the start of a line (blanks seen, if any)
_RUN = 1  # counting fence characters at the start of a line
_REST = 2  # in the rest of a line: nothing matters before the next newline
_TAIL = 3  # after a closing run: only blanks may follow before the newline
_FENCE_CHARS = "`~"


def ends_at_line_start(text: str) -> bool:
    """Does ``text`` (read from a line's start, or holding a newline) leave the next text at a
    line's start: nothing but blanks after its last newline?"""
    return not text[text.rfind("\n") + 1 :].strip(" \t")


class FenceTracker:
    """Whether the text seen so far leaves an open code fence (``inside``)."""

    __slots__ = ("_char", "_opening", "_run", "_run_char", "_state", "_width")

    def __init__(self) -> None:
        self._state = _START
        self._char = ""  # the open fence's character; "" outside a fence
        self._width = 0  # the open fence's length
        self._run_char = ""
        self._run = 0  # fence characters counted at the start of this line
        self._opening = False  # that run is the opening fence (its line is the info string)

    @property
    def inside(self) -> bool:
        return bool(self._char)

    def in_line(self) -> bool:
        """In the rest of a line: text without a newline cannot change the state."""
        return self._state == _REST

    def mid_line(self) -> None:
        """What follows is in the middle of a line (it comes right after a tool-call block, or
        the caller skipped a text that begins with a character other than a blank or a fence
        character). A run of fence characters at the line's start ends there, as that
        character would end it: an opening run's width is final, or the next run would be
        counted as more of it and the fence would never close."""
        if self._state == _RUN:
            self._after_run()
        self._state = _REST

    def pass_lines(self, text: str) -> bool:
        """Take in a text with no fence character, if a line's start or its rest is where it
        begins: no fence can open or close in it, so only where its last line ends matters (at
        a line's start after a newline and blanks, else in the rest). ``False``, and nothing
        taken in, when a fence run is being counted or has just closed."""
        if self._state in (_RUN, _TAIL):
            return False
        if "\n" in text or self._state == _START:
            self._state = _START if ends_at_line_start(text) else _REST
        return True

    def skip(self, text: str) -> None:
        """Take in text that is plain whatever the fences say (a marker that was prose)."""
        i = 0
        while (i := self.advance(text, i, len(text))) >= 0:
            pass

    def advance(self, text: str, i: int, end: int) -> int:
        """Take in ``text[i:end]``; return the index right after a fence opened or closed, or
        -1 when neither happened (all of it was taken in)."""
        while i < end:
            state = self._state
            if state == _REST:
                i = text.find("\n", i, end)
                if i < 0:
                    return -1
                i += 1
                self._state = _START
                continue
            char = text[i]
            if state == _START:
                if char in " \t\n":
                    i += 1
                elif char in _FENCE_CHARS and self._char in ("", char):
                    self._state, self._run_char, self._run = _RUN, char, 1
                    i += 1
                else:
                    self._state = _REST
            elif state == _RUN:
                if char == self._run_char:
                    self._run += 1
                    i += 1
                    if self._opening:
                        self._width += 1
                    elif not self._char and self._run == 3:
                        self._char, self._width, self._opening = char, 3, True
                        return i
                else:
                    self._state = self._after_run()
            elif char in " \t":  # _TAIL
                i += 1
            elif char == "\n":
                self._char, self._width, self._state = "", 0, _START
                return i + 1
            else:
                self._state = _REST
        return -1

    def _after_run(self) -> int:
        """The state once the run at a line's start has ended (its length is final)."""
        if self._opening:
            self._opening = False
            return _REST  # the info string
        if self._char and self._run >= self._width:
            return _TAIL  # closes the fence if only blanks follow
        return _REST

"""gpt-oss harmony with its special tokens stripped (``analysis…assistantfinal…``).

A server that detokenises with ``skip_special_tokens=True`` (or a misconfigured one) returns
harmony without ``<|start|>``, ``<|channel|>`` and ``<|message|>``: what is left reads
``analysisI need to think.assistantfinalThe answer is 42.``, each later message prefixed by its
role ``assistant``. SGLang's harmony parser reads this form (``TextStrategy``); so does this
module, for ``ReasoningParser("gpt_oss")`` only, and only when the stream starts with it.

A segment runs from its channel word to the next ``assistantanalysis``, ``assistantcommentary``
or ``assistantfinal`` (case-insensitive, as SGLang matches them). ``analysis`` is reasoning,
``final`` and a ``commentary`` preamble are content (parts joined by a line break, as in the
canonical form); each segment is stripped of surrounding whitespace, as SGLang strips it. A
``commentary`` segment addressed ``to=`` someone is a call whose markup is gone: it is kept
verbatim as content, its channel word included, for the caller to see. ``analysis`` and
``final`` stream; a ``commentary`` segment is held until it ends (preambles and calls are short,
and only its end tells which it is); trailing whitespace is held until text follows it.
"""

from __future__ import annotations

import re
from functools import cache

from providers.abstractions.contents import AIContent, TextContent, TextReasoningContent

__all__ = ["HarmonyText", "TextFormGate"]

_OPENINGS = (
    "analysis",
    "commentary",
    "assistantanalysis",
    "assistantcommentary",
    "assistant analysis",
    "assistant commentary",
    "assistantfinal",
)
_MARKS = ("assistantanalysis", "assistantcommentary", "assistantfinal")
_PREFIXES = frozenset(m[:k] for m in _MARKS for k in range(1, len(m)))
_WINDOW = max(map(len, _MARKS)) - 1


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The channel-word and trailing-space patterns, compiled when a harmony text first needs
    them rather than on every client's first import (only gpt-oss writes this form)."""
    return re.compile("|".join(_MARKS), re.IGNORECASE), re.compile(r"\s+\Z")


class TextFormGate:
    """Holds the start of a ``gpt_oss`` stream until it shows whether it is the stripped form."""

    __slots__ = ("text",)

    def __init__(self) -> None:
        self.text = ""

    def feed(self, delta: str, *, final: bool) -> bool | None:
        """``True`` (stripped form), ``False`` (anything else), ``None`` (not yet known)."""
        self.text += delta
        head = self.text.lstrip().lower()
        if any(head.startswith(opening) for opening in _OPENINGS):
            return True
        if not final and (not head or any(o.startswith(head) for o in _OPENINGS)):
            return None
        return False


def _channel(header: str) -> str:
    word = header.lower().removeprefix("assistant").strip()
    return word if word in ("analysis", "commentary") else "final"


class HarmonyText:
    """The stripped form, fed incrementally; see the module docstring."""

    __slots__ = ("_channel", "_lead", "_parts", "_pending", "_segment", "_space")

    def __init__(self) -> None:
        self._channel = ""  # of the open segment; "" before the first
        self._segment: list[str] = []  # a commentary segment, held whole (its header first)
        self._lead = True  # at the start of a segment: whitespace is dropped
        self._space = ""  # trailing whitespace held until text follows it
        self._pending = ""  # a suffix that may become a segment mark
        self._parts = False  # a content part was emitted: the next starts a new line

    def held_bytes(self) -> int:
        return len(self._pending) + len(self._space) + sum(map(len, self._segment))

    def feed(self, delta: str, *, final: bool = False) -> list[AIContent]:
        text, out = self._pending + delta, list[AIContent]()
        self._pending = ""
        pos = 0
        if not self._channel:  # the opening word, as the gate saw it
            head = re.match(r"\s*(?:assistant\s*)?(?:analysis|commentary|final)", text, re.I)
            if head is None:
                return []  # (the gate only lets a matching start through)
            self._open(head.group(), out)
            pos = head.end()
        for mark in _patterns()[0].finditer(text, pos):
            self._body(text[pos : mark.start()], out)
            self._close(out)
            self._open(mark.group(), out)
            pos = mark.end()
        end = len(text) if final else self._held_from(text, pos)
        self._body(text[pos:end], out)
        self._pending = text[end:]
        if final:
            self._close(out)
        return out

    def _held_from(self, text: str, pos: int) -> int:
        low = max(pos, len(text) - _WINDOW)
        for i in range(low, len(text)):
            if text[i:].lower() in _PREFIXES:
                return i
        return len(text)

    def _open(self, header: str, out: list[AIContent]) -> None:
        self._channel, self._lead, self._space = _channel(header), True, ""
        if self._channel == "commentary":
            self._segment = [header]

    def _body(self, text: str, out: list[AIContent]) -> None:
        if self._channel == "commentary":
            self._segment.append(text)
            return
        if self._lead:
            text = text.lstrip()
            if not text:
                return
            self._lead = False
            self._start_part(out)
        trailing = _patterns()[1].search(text)
        cut = trailing.start() if trailing else len(text)
        if cut:
            self._emit(self._space + text[:cut], out)
            self._space = ""
        self._space += text[cut:]

    def _close(self, out: list[AIContent]) -> None:
        if self._channel == "commentary":
            header, raw = self._segment[0], "".join(self._segment[1:])
            body = raw.strip()
            self._segment = []
            if body.startswith("to="):  # a call, its markup gone: kept as it came
                self._start_part(out)
                out.append(TextContent(header.lstrip() + raw.rstrip()))
            elif body:
                self._start_part(out)
                out.append(TextContent(body))
        self._space = ""

    def _start_part(self, out: list[AIContent]) -> None:
        if self._channel == "analysis":
            return
        if self._parts:
            out.append(TextContent("\n"))
        self._parts = True

    def _emit(self, text: str, out: list[AIContent]) -> None:
        kind = TextReasoningContent if self._channel == "analysis" else TextContent
        out.append(kind(text))

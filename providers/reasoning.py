"""Separating reasoning from the answer when a server leaves the reasoning markup in ``content``.

A server whose reasoning parser is off (llama.cpp ``--reasoning-format none``, vLLM or SGLang
started without ``--reasoning-parser``) returns ``<think>…</think>`` or harmony channels as plain
text. ``ReasoningParser`` splits such text into ``TextReasoningContent`` and ``TextContent``, in
order, for a whole text (``parse``) or a stream (``feed``/``finish``). docs/formats.md §6 has
the grammars and what the servers' own parsers do; the choices below follow them.

Formats:

* ``think``, ``qwen3``, ``kimi_k2``: ``<think>`` opens reasoning, ``</think>`` closes it. Text
  before any tag is content, as in SGLang's detectors (vLLM's ``kimi_k2`` assumes reasoning
  instead: say so with ``starts_in_reasoning=True``).
* ``deepseek_r1``: the same tags, but the chat template put ``<think>`` into the prompt, so the
  output starts inside reasoning (``starts_in_reasoning`` defaults to ``True``, as on both
  servers). Everything up to ``</think>`` is reasoning; a leading ``<think>`` is consumed. Qwen3
  thinking models whose template pre-fills ``<think>`` need ``starts_in_reasoning=True`` too.
* ``kimi``: ``◁think▷`` … ``◁/think▷`` (U+25C1, U+25B7).
* ``gpt_oss``: harmony messages. ``analysis`` is reasoning; ``final``, a ``commentary`` preamble
  (no recipient) and a tool's response (``<|start|>functions.X to=assistant``) are content, one
  part each, joined by a line break as vLLM joins preambles and the answer; their headers and
  the ``<|end|>``/``<|return|>``/``<|call|>`` terminators are markup. Messages of the prompt's
  roles (``system``, ``developer``, ``user``: a rendered conversation echoed) are dropped, as
  both servers drop them, and so is a bare ``<|start|>assistant`` at the end. A message with a
  ``to=`` recipient, or of an unknown channel, is copied into the content verbatim, header and
  terminator included: tool calls are the tool-call parser's job, and it needs
  ``to=functions.NAME`` and ``<|call|>`` to find them. A header that never reaches
  ``<|message|>`` is malformed and kept as raw text.
* ``auto``: the first marker decides: ``<think>``/``</think>`` give ``think``, ``◁think▷``/
  ``◁/think▷`` give ``kimi``, ``<|channel|>``/``<|start|>`` give ``gpt_oss``.

Rules shared by the tag formats, and why:

* A tool-call marker (``TOOL_CALL_MARKERS``) seen in reasoning may end it: Qwen3 and Kimi-K2
  call tools without closing ``</think>``, and both servers split there so that the tool parser
  sees the marker. But a model also *thinks about* calls, markup included, and markup inside
  ``<think>…</think>`` is reasoning, never a call (issue #20). So what follows the marker is
  held until it is decided: a closing tag makes all of it reasoning; the end of the stream
  without one makes the marker and all that follows content. ``calls_end_reasoning=False``
  (no tools were offered: there is no call to find) leaves the markers as reasoning text.
* An opening tag inside reasoning is consumed (R1-0528 emits the one its prompt already had;
  SGLang collapses ``<think><think>``). An opening tag in content opens a new reasoning block, so
  interleaved thinking keeps its order.
* A stray closing tag in content is consumed and the text before it stays content. That text was
  already released: holding every answer back in case a ``</think>`` comes would end streaming.
  vLLM's Qwen3 engine absorbs a duplicate ``</think>`` the same way. A server that put ``<think>``
  into the prompt is declared with ``deepseek_r1`` or ``starts_in_reasoning=True``; ``auto``
  cannot recover that case after the fact.
* An unclosed ``<think>`` at end of stream leaves its text as reasoning: the model was cut off
  while thinking (vLLM treats output without ``</think>`` the same way).

Nothing is lost or rewritten: every input character ends up in exactly one output content, in
order, except recognised markup; whitespace is kept exactly. Streaming releases text as soon as it
cannot be the start of a marker, so only a suffix such as ``<``, ``</thi``, ``◁`` or ``<|`` is held
back (a harmony header is held until its ``<|message|>`` decides what the message is, reasoning
after a tool-call marker until ``</think>`` or the end; ``held_bytes`` says how much). Any cutting
of a text into deltas yields the same contents as ``parse`` of the whole text.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Final

from providers.abstractions.contents import AIContent, TextContent, TextReasoningContent
from providers.abstractions.parsed_text import ParsedText

__all__ = ["FORMATS", "TOOL_CALL_MARKERS", "ReasoningParser"]

_Kind = type[TextContent] | type[TextReasoningContent]

_THINK: Final = ("<think>", "</think>")
_TAGS: Final[dict[str, tuple[str, str]]] = {
    "think": _THINK,
    "deepseek_r1": _THINK,
    "qwen3": _THINK,
    "kimi_k2": _THINK,
    "kimi": ("◁think▷", "◁/think▷"),
}
FORMATS: Final = (*_TAGS, "gpt_oss", "auto")

TOOL_CALL_MARKERS: Final = (
    "<tool_call>",  # hermes, Qwen2.5/Qwen3, GLM
    "<function=",  # Qwen3-Coder XML, Llama 3.1 function tags
    "<|tool_calls_section_begin|>",  # Kimi-K2
    "<|tool_call_begin|>",  # Kimi-K2, when the section marker is missing
    "<\uff5ctool\u2581calls\u2581begin\uff5c>",  # DeepSeek V3/V3.1/R1-0528, full-width bars
    "[TOOL_CALLS]",  # Mistral
    "<TOOLCALL>",  # NVIDIA Llama-Nemotron
)
"""Markers that end reasoning implicitly; they and what follows are left to the tool parser."""

_TAG_DETECT: Final = (*_THINK, *_TAGS["kimi"])
_START, _CHANNEL, _MESSAGE = "<|start|>", "<|channel|>", "<|message|>"
_ENDS: Final = ("<|end|>", "<|return|>", "<|call|>")
_DETECT: Final = (*_THINK, *_TAGS["kimi"], _CHANNEL, _START)
_CHANNEL_NAME: Final = re.compile(r"<\|channel\|>\s*(\w+)")
_RECIPIENT: Final = re.compile(r"\bto=")
_ROLE: Final = re.compile(r"<\|start\|>\s*([^\s<]*)")
_BARE_HEADER: Final = re.compile(r"<\|start\|>\s*\w*\s*")
_PROMPT_ROLES: Final = frozenset({"system", "developer", "user"})
_HARMONY_KINDS: Final[dict[str, _Kind]] = {
    "analysis": TextReasoningContent,
    "final": TextContent,
    "commentary": TextContent,  # without recipient: a preamble the user sees
}


class _Markers:
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
def _markers(markers: tuple[str, ...]) -> _Markers:
    return _Markers(markers)


class ReasoningParser:
    """Splits reasoning from content in one text or one stream.

    ``parse(text)`` handles a whole text (with a fresh state, leaving this parser's stream alone).
    For a stream, call ``feed(delta)`` for each piece and ``finish()`` once at the end; both return
    the contents that became certain, adjacent ones of the same kind merged. Use one parser per
    stream. ``starts_in_reasoning=None`` takes the format's default: ``True`` for
    ``deepseek_r1``, ``False`` otherwise.
    """

    __slots__ = (
        "_calls_end",
        "_dropping",
        "_harmony",
        "_header",
        "_held",
        "_kind",
        "_markers",
        "_out",
        "_parts",
        "_pending",
        "_suspect",
        "_tags",
        "_verbatim",
        "format",
        "starts_in_reasoning",
    )

    def __init__(
        self,
        format: str = "auto",  # noqa: A002 - the public name used by every text parser
        starts_in_reasoning: bool | None = None,
        *,
        calls_end_reasoning: bool = True,
    ) -> None:
        if format not in FORMATS:
            raise ValueError(f"unknown reasoning format {format!r}; expected one of {FORMATS}")
        self.format = format
        self._calls_end = calls_end_reasoning
        self._suspect: list[str] | None = None  # reasoning after a tool-call marker, undecided
        self._held = 0  # bytes in ``_suspect`` or ``_header``
        self.starts_in_reasoning = (
            format == "deepseek_r1" if starts_in_reasoning is None else starts_in_reasoning
        )
        self._tags: tuple[str, str] | None = _TAGS.get(format)  # None: harmony or not detected
        self._harmony = format == "gpt_oss"
        self._kind: _Kind = TextReasoningContent if self.starts_in_reasoning else TextContent
        self._header: list[str] | None = None  # a harmony header waiting for <|message|>
        self._verbatim = False  # inside a harmony message copied as it is
        self._dropping = False  # inside a harmony message of the prompt's roles
        self._parts = False  # a harmony content part was opened: the next starts a new line
        self._pending = ""  # a suffix that may still become a marker
        self._out: list[tuple[_Kind, list[str]]] = []
        self._markers = self._active()  # changes only when a marker changes the state

    def parse(self, text: str) -> ParsedText:
        """The contents of a whole text; the same as feeding it in any pieces, then finishing."""
        fresh = ReasoningParser(
            self.format, self.starts_in_reasoning, calls_end_reasoning=self._calls_end
        )
        fresh._scan(text, final=True)
        return ParsedText(fresh._flush())

    def feed(self, delta: str) -> list[AIContent]:
        """The contents that ``delta`` made certain; a possible marker start is held back."""
        if (
            not self._pending
            and self._header is None
            and self._suspect is None
            and not self._dropping
            and not self._markers.any_start.search(delta)
        ):
            # Nothing could start a marker: the delta is text of the current kind as it is.
            return [self._kind(delta)] if delta else []
        self._scan(self._pending + delta, final=False)
        return self._flush()

    def plain_triggers(self) -> str | None:
        """The characters that could start a marker, if ``feed`` would now return a delta free
        of them as one unchanged ``TextContent`` (nothing held back, outside any block and
        header); ``None`` otherwise. A caller may then skip ``feed`` for such deltas, as long as
        it asks again after each ``feed``.
        """
        if (
            self._pending
            or self._header is not None
            or self._kind is not TextContent
            or self._dropping
        ):
            return None
        return self._markers.starts

    def held_bytes(self) -> int:
        """What ``feed`` holds back (a marker prefix, a harmony header, undecided reasoning)."""
        return len(self._pending) + self._held

    def finish(self) -> list[AIContent]:
        """Release what was held back: a partial marker is text of the current kind."""
        self._scan(self._pending, final=True)
        return self._flush()

    # -- scanning ------------------------------------------------------------------------------

    def _active(self) -> _Markers:
        """The markers that mean something in the current state."""
        if self._harmony:
            if self._header is not None:
                return _markers((_MESSAGE, _START, *_ENDS))
            return _markers((_START, _CHANNEL, *_ENDS))
        if self._suspect is not None:  # only a tag can decide it
            return _markers(_TAG_DETECT if self._tags is None else self._tags)
        tags = _DETECT if self._tags is None else self._tags
        if self._kind is TextReasoningContent and self._calls_end:
            return _markers((*tags, *TOOL_CALL_MARKERS))
        return _markers(tags)

    def _scan(self, text: str, *, final: bool) -> None:
        """Classify ``text``; unless ``final``, keep back a suffix that may become a marker.

        ``text`` is the held-back suffix plus the new delta, so each character is searched at
        most once more than the marker length: the work is proportional to the delta.
        """
        pos = 0
        while (match := self._markers.pattern.search(text, pos)) is not None:
            self._text(text[pos : match.start()])
            self._marker(match.group())
            self._markers = self._active()
            pos = match.end()
        end = len(text) if final else self._markers.held_from(text, pos)
        self._text(text[pos:end])
        self._pending = text[end:]
        if final and self._header is not None:
            # The stream ended inside a harmony header: keep it as text, unless it is the bare
            # ``<|start|>assistant`` a rendered conversation ends with.
            header = "".join(self._header)
            if not _BARE_HEADER.fullmatch(header):
                self._emit(TextContent, header)
            self._header, self._held = None, 0
            self._markers = self._active()
        if final and self._suspect is not None:
            # No </think> after the tool-call marker: the model called a tool from reasoning,
            # and the marker and what follows are the answer.
            self._emit(TextContent, "".join(self._suspect))
            self._suspect, self._held, self._kind = None, 0, TextContent
            self._markers = self._active()

    def _marker(self, marker: str) -> None:
        if self._harmony:
            self._harmony_marker(marker)
        elif marker in TOOL_CALL_MARKERS:  # (active only in reasoning)
            self._suspect, self._held = [marker], len(marker)
        elif self._tags is None and marker in (_START, _CHANNEL):
            self._harmony = True
            self._harmony_marker(marker)
        else:
            if self._tags is None:
                self._tags = _TAGS["kimi"] if marker.startswith("◁") else _THINK
            closing = marker == self._tags[1]
            if self._suspect is not None:
                if not closing:
                    return  # an opening tag inside reasoning: consumed
                # Closed: the markup was thought about, not called.
                self._emit(TextReasoningContent, "".join(self._suspect))
                self._suspect, self._held = None, 0
            # An opening tag enters (or stays in) reasoning; a closing one, stray or not, leaves.
            self._kind = TextContent if closing else TextReasoningContent

    def _harmony_marker(self, marker: str) -> None:
        if self._header is not None:
            header = "".join(self._header)
            self._header, self._held = None, 0
            if marker == _MESSAGE:
                self._open_message(header + marker)
                return
            # A new message or a terminator before <|message|>: the header is malformed and,
            # as in vLLM's parse(), the message is kept as text.
            self._emit(TextContent, header)
            self._kind, self._verbatim, self._dropping = TextContent, True, False
        if marker in (_START, _CHANNEL):
            self._header, self._held = [marker], len(marker)
            return
        if self._verbatim:
            self._emit(TextContent, marker)
        self._kind, self._verbatim, self._dropping = TextContent, False, False

    def _open_message(self, header: str) -> None:
        """Route a harmony message by its complete header (``<|message|>`` included).

        Only ``analysis`` and ``final`` without a recipient are ours; everything else goes to
        the content whole, for the tool-call parser (or the user) to read.
        """
        self._dropping = False
        role = _ROLE.match(header)
        names = _CHANNEL_NAME.findall(header)
        if role is not None and role.group(1) in _PROMPT_ROLES:
            self._kind, self._verbatim, self._dropping = TextContent, False, True
            return
        if role is not None and role.group(1) != "assistant":  # a tool's response
            kind: _Kind | None = TextContent
        elif _RECIPIENT.search(header) or not names:
            kind = None
        else:
            kind = _HARMONY_KINDS.get(names[-1])
        if kind is None:
            self._emit(TextContent, header)
            self._kind, self._verbatim = TextContent, True
            return
        if kind is TextContent:
            if self._parts:
                self._emit(TextContent, "\n")
            self._parts = True
        self._kind, self._verbatim = kind, False

    # -- output --------------------------------------------------------------------------------

    def _text(self, text: str) -> None:
        if not text:
            return
        held = self._suspect if self._suspect is not None else self._header
        if held is not None:
            held.append(text)
            self._held += len(text) if text.isascii() else len(text.encode("utf-8", "replace"))
        elif not self._dropping:
            self._emit(self._kind, text)

    def _emit(self, kind: _Kind, text: str) -> None:
        if not text:
            return
        if self._out and self._out[-1][0] is kind:
            self._out[-1][1].append(text)
        else:
            self._out.append((kind, [text]))

    def _flush(self) -> list[AIContent]:
        out: list[AIContent] = [kind("".join(parts)) for kind, parts in self._out]
        self._out = []
        return out

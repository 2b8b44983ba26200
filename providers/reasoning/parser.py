"""``ReasoningParser``: the formats and rules are in the package docstring
(``providers.reasoning``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from providers.abstractions.contents import AIContent, TextContent, TextReasoningContent
from providers.reasoning.markers import Markers
from providers.reasoning.markers import markers as _markers

if TYPE_CHECKING:
    from providers.abstractions.parsed_text import ParsedText
    from providers.reasoning.harmony_text import HarmonyText, TextFormGate

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
# Harmony headers only (gpt-oss), a few per answer: the patterns stay strings for ``re``'s own
# cache, which compiles them on first use, not on every client's first import.
_CHANNEL_NAME: Final = r"<\|channel\|>\s*(\w+)"
_RECIPIENT: Final = r"\bto="
_ROLE: Final = r"<\|start\|>\s*([^\s<]*)"
_BARE_HEADER: Final = r"<\|start\|>\s*\w*\s*"
_PROMPT_ROLES: Final = frozenset({"system", "developer", "user"})
_HARMONY_KINDS: Final[dict[str, _Kind]] = {
    "analysis": TextReasoningContent,
    "final": TextContent,
    "commentary": TextContent,  # without recipient: a preamble the user sees
}


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
        "_ended",
        "_fresh",
        "_gate",
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
        "_text_form",
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
        self._ended = False  # a closing tag ended reasoning: later tags are text
        # gpt_oss: the start is held until it shows whether special tokens were stripped.
        self._gate: TextFormGate | None = None
        if format == "gpt_oss":
            # deferred: harmony's stripped text form, which only gpt-oss answers need
            from providers.reasoning.harmony_text import TextFormGate

            self._gate = TextFormGate()
        self._text_form: HarmonyText | None = None
        self._fresh = True  # reasoning has said nothing yet (an opening tag is then consumed)
        self._pending = ""  # a suffix that may still become a marker
        self._out: list[tuple[_Kind, list[str]]] = []
        self._markers = self._active()  # changes only when a marker changes the state

    def parse(self, text: str) -> ParsedText:
        """The contents of a whole text; the same as feeding it in any pieces, then finishing."""
        # deferred: a dataclass (~0.5 ms of cold start) that a streamed answer never makes
        from providers.abstractions.parsed_text import ParsedText

        fresh = ReasoningParser(
            self.format, self.starts_in_reasoning, calls_end_reasoning=self._calls_end
        )
        if fresh._gate is not None:
            return ParsedText(_merged(fresh._through_gate(text, final=True)))
        fresh._scan(text, final=True)
        return ParsedText(fresh._flush())

    def feed(self, delta: str) -> list[AIContent]:
        """The contents that ``delta`` made certain; a possible marker start is held back."""
        if self._gate is not None or self._text_form is not None:
            return self._through_gate(delta, final=False)
        if (
            not self._pending
            and self._header is None
            and self._suspect is None
            and not self._dropping
            and not self._markers.any_start.search(delta)
        ):
            # Nothing could start a marker: the delta is text of the current kind as it is.
            if self._fresh and delta and not delta.isspace():
                self._fresh = False
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
            or self._gate is not None
            or self._text_form is not None
            or self._header is not None
            or self._kind is not TextContent
            or self._dropping
        ):
            return None
        return self._markers.starts

    def held_bytes(self) -> int:
        """What ``feed`` holds back (a marker prefix, a harmony header, undecided reasoning)."""
        if self._gate is not None:
            return len(self._gate.text)
        if self._text_form is not None:
            return self._text_form.held_bytes()
        return len(self._pending) + self._held

    def finish(self) -> list[AIContent]:
        """Release what was held back: a partial marker is text of the current kind."""
        if self._gate is not None or self._text_form is not None:
            return self._through_gate("", final=True)
        self._scan(self._pending, final=True)
        return self._flush()

    def _through_gate(self, delta: str, *, final: bool) -> list[AIContent]:
        """``gpt_oss`` streams: the stripped form (``harmony_text``), or the canonical one."""
        if self._gate is not None:
            verdict = self._gate.feed(delta, final=final)
            if verdict is None:
                return []
            delta, self._gate = self._gate.text, None
            if verdict:
                # deferred: as TextFormGate above
                from providers.reasoning.harmony_text import HarmonyText

                self._text_form = HarmonyText()
        if self._text_form is not None:
            return self._text_form.feed(delta, final=final)
        self._scan(self._pending + delta, final=final)
        return self._flush()

    # -- scanning ------------------------------------------------------------------------------

    def _active(self) -> Markers:
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
            if not re.fullmatch(_BARE_HEADER, header):
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
            self._tag(marker)

    def _tag(self, marker: str) -> None:
        if self._tags is None:
            self._tags = _TAGS["kimi"] if marker.startswith("◁") else _THINK
        reasoning = self._kind is TextReasoningContent
        if marker != self._tags[1]:  # opening
            if not reasoning and not self._ended:
                self._kind, self._fresh = TextReasoningContent, True
            elif self._ended or not self._fresh:
                self._text(marker)  # inner (or after the first closing tag): text
            return  # else consumed: reasoning starts again (R1-0528, <think><think>)
        if self._ended or not reasoning:
            self._text(marker)  # a later or stray closing tag is text of its part
            return
        if self._suspect is not None:  # closed: the markup was thought about, not called
            self._emit(TextReasoningContent, "".join(self._suspect))
            self._suspect, self._held = None, 0
        self._kind, self._ended = TextContent, True

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
        role = re.match(_ROLE, header)
        names = re.findall(_CHANNEL_NAME, header)
        if role is not None and role.group(1) in _PROMPT_ROLES:
            self._kind, self._verbatim, self._dropping = TextContent, False, True
            return
        if role is not None and role.group(1) not in ("", "assistant"):  # a tool's response
            kind: _Kind | None = TextContent
        elif re.search(_RECIPIENT, header) or not names:
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
        if self._fresh and not text.isspace():
            self._fresh = False
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


def _merged(contents: list[AIContent]) -> list[AIContent]:
    """Adjacent contents of one kind joined, as ``parse`` returns them."""
    out: list[AIContent] = []
    for content in contents:
        last = out[-1] if out else None
        if last is not None and type(last) is type(content):
            out[-1] = type(content)(last.text + content.text)  # type: ignore[attr-defined,call-arg]
        else:
            out.append(content)
    return out

"""``gpt_oss``: harmony messages whose recipient is a function, and commentary preambles.

``[<|start|>ROLE[ to=R]]<|channel|>CHANNEL[ to=R][ <|constrain|>json]<|message|>BODY[END]``
(docs/formats.md §6.4). The recipient may sit in the role header or after the channel; both
orders are real. A message is a call when its recipient is a function (``functions.NAME``, or a
bare or dotted name that is not a built-in: ``browser.*``, ``container.*``, ``python``,
``assistant``) and its channel is ``commentary`` or ``analysis``; its body is the JSON
arguments. A ``commentary`` message without recipient is a preamble the user should see: its
body is returned as text, without the markup, as both servers do.

Every other message (``analysis``, ``final``, built-in tools, tool results) is left untouched:
separating reasoning from the answer is ``ReasoningParser``'s job, which runs first in the
recovery layer and copies these messages through verbatim. The tracker decides at
``<|message|>``, so such messages are released as soon as their header is complete, not held to
their end. A call message may end without ``<|call|>``: it is a stop token the server does not
return, so end of stream closes the call.
"""

from __future__ import annotations

import re

from providers.abstractions.contents import AIContent, TextContent
from providers.text_tool_calls._json import decode_arguments
from providers.text_tool_calls._protocol import Stop
from providers.text_tool_calls._tools import ToolBook
from providers.text_tool_calls._trackers import EndMarkerTracker

__all__ = ["GptOss"]

START, CHANNEL, MESSAGE = "<|start|>", "<|channel|>", "<|message|>"
ENDS = ("<|call|>", "<|end|>", "<|return|>")
_HEADER_STOP = re.compile(r"<\|(?:message|end|call|return|start)\|>")
_CHANNEL_NAME = re.compile(r"<\|channel\|>\s*(\w+)")
_RECIPIENT = re.compile(r"\bto=([^\s<]+)")
_MAX_HEADER = 512  # a header longer than this is not harmony
_BUILT_INS = frozenset(
    {"assistant", "user", "system", "developer", "python", "browser", "container"}
)

_CALL, _PREAMBLE = "call", "preamble"


def _function(recipient: str) -> str | None:
    if recipient.startswith("functions."):
        return recipient.removeprefix("functions.") or None
    return None if recipient.split(".", maxsplit=1)[0] in _BUILT_INS else recipient


def _kind(header: str) -> tuple[str | None, str]:
    """``(_CALL, name)``, ``(_PREAMBLE, "")``, or ``(None, "")`` for messages left alone."""
    channel = _CHANNEL_NAME.search(header)
    name = channel.group(1) if channel else None
    recipient = _RECIPIENT.search(header)
    if recipient is not None:
        function = _function(recipient.group(1))
        if function is not None and name in (None, "commentary", "analysis"):
            return _CALL, function
        return None, ""
    return (_PREAMBLE, "") if name == "commentary" else (None, "")


class _HarmonyTracker:
    """Reads the header (bounded) until ``<|message|>``, then the body up to its end token."""

    __slots__ = ("_body", "_body_base", "_header", "_marker_len", "_seen")

    def __init__(self, marker: str) -> None:
        self._marker_len = len(marker)
        self._header = ""
        self._body: EndMarkerTracker | None = None
        self._body_base = 0  # block offset where the body starts
        self._seen = 0

    def feed(self, text: str, pos: int) -> Stop | None:
        self._seen += len(text) - pos
        if self._body is not None:
            return self._shift(self._body.feed(text, pos))
        old = len(self._header)
        self._header += text[pos : pos + _MAX_HEADER - old]
        match = _HEADER_STOP.search(self._header, max(self._marker_len, old - len(MESSAGE)))
        if match is None:
            if len(self._header) >= _MAX_HEADER:
                return Stop(self._marker_len, is_block=False)
            return None
        if match.group() != MESSAGE:
            return Stop(self._marker_len, is_block=False)  # no body: not a message to parse
        if _kind(self._header[: match.start()])[0] is None:
            return Stop(match.end(), is_block=False)  # let its body stream as text
        self._body_base = match.end()
        self._body = EndMarkerTracker("", ENDS, restarts=(START,), eof_ok=True)
        return self._shift(self._body.feed(text, pos + match.end() - old))

    def _shift(self, stop: Stop | None) -> Stop | None:
        return None if stop is None else Stop(self._body_base + stop.at, stop.is_block)

    def finish(self) -> Stop | None:
        if self._body is None:
            return Stop(self._seen, is_block=False)
        return self._shift(self._body.finish())


class GptOss:
    name = "gpt_oss"
    markers = (START, CHANNEL)
    auto_markers = (START, CHANNEL)

    def tracker(self, marker: str) -> _HarmonyTracker:
        return _HarmonyTracker(marker)

    def parse_block(self, block: str, tools: ToolBook) -> list[AIContent]:
        header, _, body = block.partition(MESSAGE)
        for end in ENDS:
            body = body.removesuffix(end)
        kind, name = _kind(header)
        if kind == _PREAMBLE:
            return [TextContent(body)]
        if kind != _CALL:
            return [TextContent(block)]
        raw = body.strip()
        return [tools.call(name, decode_arguments(raw), raw or "{}", raw=block)]

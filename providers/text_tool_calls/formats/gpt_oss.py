"""``gpt_oss``: harmony messages, the whole grammar as vLLM's and SGLang's parsers read it.

``[<|start|>ROLE[ to=R]]<|channel|>CHANNEL[ to=R][ <|constrain|>CTYPE]<|message|>BODY[END]``
(docs/formats.md §6.4). Each message is one block, and its header decides what the body is:

* a recipient that is a function (``functions.NAME``, or a bare or dotted name that is not a
  built-in) on ``commentary``, ``analysis`` or no channel: a call, the body its JSON arguments.
  The recipient may sit in the role header or after the channel; both orders are real;
* ``analysis``: reasoning (``TextReasoningContent``);
* ``final`` and ``commentary`` without recipient (a preamble the user should see): content.
  Such parts are joined with a line break, as vLLM joins preambles and the final answer;
* a tool's response (``<|start|>functions.X to=assistant…``): its body, as content (SGLang);
* a message of the prompt's roles (``system``, ``developer``, ``user``, echoed when a whole
  rendered conversation is parsed): dropped, as both servers drop it;
* anything else (a built-in recipient such as ``browser.search``, an unknown channel), and a
  header that never reaches ``<|message|>`` (malformed): the raw text, unchanged.

A message may end without its terminator: ``<|call|>`` is a stop token the server does not
return, so end of stream closes a message. A call cut there whose arguments are not complete
JSON is surfaced with the partial text and an ``error``. A bare ``<|start|>assistant`` at the
end (the header a rendered conversation ends with) is markup.

Separating reasoning is normally ``ReasoningParser``'s job, and it runs first in the recovery
layer; this format reads ``analysis`` too so that it stands alone on a whole harmony text.
"""

from __future__ import annotations

import re

from providers.abstractions.contents import AIContent, TextContent, TextReasoningContent
from providers.text_tool_calls.json_calls import decode_arguments
from providers.text_tool_calls.protocol import PART_KEY, MalformedBlockError, Stop
from providers.text_tool_calls.tools import ToolBook
from providers.text_tool_calls.trackers import EndMarkerTracker

__all__ = ["GptOss"]

START, CHANNEL, MESSAGE = "<|start|>", "<|channel|>", "<|message|>"
ENDS = ("<|call|>", "<|end|>", "<|return|>")
_HEADER_STOP = re.compile(r"<\|(?:message|end|call|return|start)\|>")
_CHANNEL_NAME = re.compile(r"<\|channel\|>\s*(\w+)")
_RECIPIENT = re.compile(r"\bto=([^\s<]+)")
_ROLE = re.compile(r"<\|start\|>\s*([^\s<]*)")
_BARE_HEADER = re.compile(r"<\|start\|>\s*\w*\s*")
_MAX_HEADER = 512  # a header longer than this is not harmony
_BUILT_INS = frozenset(
    {"assistant", "user", "system", "developer", "python", "browser", "container"}
)
_PROMPT_ROLES = frozenset({"system", "developer", "user"})
_CONTENT_CHANNELS = frozenset({"final", "commentary"})


def _function(recipient: str) -> str | None:
    if recipient.startswith("functions."):
        return recipient.removeprefix("functions.") or None
    return None if recipient.split(".", maxsplit=1)[0] in _BUILT_INS else recipient


def _part(text: str) -> TextContent:
    """User-visible text of one message, joined to the previous one by the parser."""
    return TextContent(text, additional_properties={PART_KEY: True})


class _HarmonyTracker:
    """Reads the header (bounded) until ``<|message|>``, then the body up to its end token, then
    any repeats of end tokens right after it (SGLang's tests send ``<|call|><|call|>``): those
    are markup of the message, read ahead one token at a time and kept in the block."""

    __slots__ = ("_body", "_body_base", "_end", "_header", "_marker_len", "_seen", "_tail")

    def __init__(self, marker: str) -> None:
        self._marker_len = len(marker)
        self._header = ""
        self._body: EndMarkerTracker | None = None
        self._body_base = 0  # block offset where the body starts
        self._seen = 0
        self._end: int | None = None  # block offset after the last terminator read
        self._tail = ""  # text read after it, not yet known to be another terminator

    def feed(self, text: str, pos: int) -> Stop | None:
        self._seen += len(text) - pos
        if self._end is not None:
            return self._trail(text[pos:])
        if self._body is not None:
            return self._after(self._shift(self._body.feed(text, pos)), text)
        old = len(self._header)
        self._header += text[pos : pos + _MAX_HEADER - old]
        match = _HEADER_STOP.search(self._header, max(self._marker_len, old - len(MESSAGE)))
        if match is None:
            if len(self._header) >= _MAX_HEADER:
                return Stop(self._marker_len, is_block=False)
            return None
        if match.group() != MESSAGE:
            return Stop(self._marker_len, is_block=False)  # no body: malformed, kept as text
        self._body_base = match.end()
        self._body = EndMarkerTracker("", ENDS, restarts=(START, CHANNEL), eof_ok=True)
        return self._after(self._shift(self._body.feed(text, pos + match.end() - old)), text)

    def _after(self, stop: Stop | None, text: str) -> Stop | None:
        """A body closed by a terminator: look for repeats before ending the block."""
        if stop is None or self._body is None or not self._body.ended_by:
            return stop
        self._end = stop.at
        return self._trail(text[len(text) - (self._seen - stop.at) :])

    def _trail(self, new: str) -> Stop | None:
        assert self._end is not None  # (only called once the body ended)
        tail = self._tail + new
        while tail:
            end = next((e for e in ENDS if tail.startswith(e)), None)
            if end is None:
                if any(e.startswith(tail) for e in ENDS):
                    break  # maybe another terminator: wait for more
                return Stop(self._end)
            self._end += len(end)
            tail = tail[len(end) :]
        self._tail = tail
        return None

    def _shift(self, stop: Stop | None) -> Stop | None:
        return None if stop is None else Stop(self._body_base + stop.at, stop.is_block)

    def finish(self) -> Stop | None:
        if self._end is not None:
            return Stop(self._end)
        if self._body is None:  # a header cut by the end: parse_block decides
            return Stop(self._seen)
        return self._shift(self._body.finish())


class GptOss:
    name = "gpt_oss"
    markers = (START, CHANNEL)
    auto_markers = (START, CHANNEL)

    def tracker(self, marker: str) -> _HarmonyTracker:
        return _HarmonyTracker(marker)

    def parse_block(self, block: str, tools: ToolBook) -> list[AIContent]:
        header, found, body = block.partition(MESSAGE)
        if not found:  # only at end of stream
            return [] if _BARE_HEADER.fullmatch(header) else [TextContent(block)]
        closed = body.endswith(ENDS)
        while body.endswith(ENDS):  # a repeated terminator (``<|call|><|call|>``) too
            body = body[: body.rindex("<|")]
        role_match = _ROLE.match(header)
        role = (role_match.group(1) if role_match else "") or "assistant"
        channel_match = _CHANNEL_NAME.search(header)
        channel = channel_match.group(1) if channel_match else None
        recipient_match = _RECIPIENT.search(header)
        recipient = recipient_match.group(1) if recipient_match else None
        if role in _PROMPT_ROLES:
            return []
        if role != "assistant":  # a tool's response to the assistant
            return [_part(body)]
        if recipient is not None:
            function = _function(recipient)
            if function is None or channel not in (None, "commentary", "analysis"):
                return [TextContent(block)]
            return [_call(function, body, block, closed, tools)]
        if channel == "analysis":
            return [TextReasoningContent(body)]
        if channel in _CONTENT_CHANNELS:
            return [_part(body)]
        return [TextContent(block)]


def _call(name: str, body: str, block: str, closed: bool, tools: ToolBook) -> AIContent:
    """A call; arguments that are not a JSON object are kept raw with an ``error``."""
    raw = body.strip()
    try:
        arguments = decode_arguments(raw)
    except MalformedBlockError as exc:
        call = tools.call(name, {}, raw, raw=block)
        reason = "call not closed at end of stream" if not closed else str(exc)
        call.error = call.error or f"gpt_oss: {reason}; raw text kept in raw_arguments"
        return call
    return tools.call(name, arguments, raw, raw=block)  # an empty body stays "", as on vLLM

"""``mistral``: ``[TOOL_CALLS]`` followed by a JSON array (pre-v11 tokenizers) or by
``NAME{args}`` / ``NAME[ARGS]{args}``, the token repeated per call (v11+).

Grammar and server behaviour: docs/formats.md §3. The block has no end marker: it ends where
the JSON closes, which ``JsonBalance`` finds without parsing. Deliberate differences:

* Arguments that are not valid JSON make the block error text; vLLM returns them as a call with
  the broken text as arguments, which an agent might execute.
* ``[TOOL_CALLS]`` followed by something that is neither JSON nor a name (``[TOOL_CALLS] !``)
  is ordinary text. A name followed by other words (``[TOOL_CALLS] not json at all``) is error
  text without the token, which is markup (vLLM returns that text as content).
* A call the stream cut (``[TOOL_CALLS]name`` with no arguments yet, or arguments cut short)
  is surfaced with its name, the partial argument text and an ``error`` (vLLM returns the
  partial text as arguments, or skips a call with none).
* One word of junk between the token and a pre-v11 array (``[TOOL_CALLS] junk [{…}]``) is kept
  as text, and the array is read (vLLM's regex fallback).
"""

from __future__ import annotations

import re

from providers.abstractions.contents import AIContent, TextContent
from providers.text_tool_calls.json_calls import (
    call_array,
    call_from_object,
    decode_arguments,
    skip_space,
)
from providers.text_tool_calls.protocol import MalformedBlockError, Stop, error_text
from providers.text_tool_calls.tools import ToolBook
from providers.text_tool_calls.trackers import JsonBalance
from providers.text_tool_calls.unclosed import json_call_prefix, partial_call

__all__ = ["Mistral"]

MARKER = "[TOOL_CALLS]"
ARGS = "[ARGS]"
_NAMED = re.compile(r"([^\s{\[]+)\s*(?:\[ARGS\])?\s*(?=\{)")
_PARTIAL = re.compile(r"([^\s{\[]+)\s*(?:\[ARGS\])?")

# Tracker phases: right after the marker, whitespace before any name, the name, whitespace
# after it, inside ``[ARGS]``, and the JSON.
_LEAD, _SPACE, _NAME, _NAME_SPACE, _ARGS, _JSON = range(6)
_REJECT, _MALFORMED = False, True
_RESCAN = "rescan"  # the ``[`` after a word opened an array: read this character as JSON
_JUNK = re.compile(r"[^\s{\[]+\s*(?=\[)")


def _name_char(char: str) -> bool:
    return char.isalnum() or char in "_-."


class _MistralTracker:
    """Reads the name (if any) character by character, then balances the JSON."""

    __slots__ = ("_args", "_json", "_phase", "_seen", "_skip")

    def __init__(self) -> None:
        self._phase = _LEAD
        self._skip = len(MARKER)
        self._seen = 0
        self._args = 0  # how much of ``[ARGS]`` has been matched
        self._json = JsonBalance()

    def feed(self, text: str, pos: int) -> Stop | None:
        base = self._seen - pos
        self._seen += len(text) - pos
        i = pos + self._skip
        self._skip = 0
        while i < len(text):
            if self._phase == _JSON:
                end = self._json.scan(text, i)
                return None if end < 0 else Stop(base + end)
            verdict = self._step(text[i])
            if verdict == _RESCAN:
                continue
            if verdict is not None:
                return Stop(base + i, is_block=verdict is _MALFORMED)
            i += 1
        return None

    def _step(self, char: str) -> bool | str | None:
        """Move past ``char``, or stop before it: ``_REJECT`` (not a call) or ``_MALFORMED``;
        ``_RESCAN``: the ``[`` after a word was an array, read ``char`` again as JSON."""
        phase = self._phase
        if phase == _ARGS:
            if char != ARGS[self._args]:
                if self._args == 1:
                    self._phase = _JSON
                    self._json.scan("[", 0)
                    return _RESCAN
                return _MALFORMED
            self._args += 1
            if self._args == len(ARGS):
                self._phase = _NAME_SPACE
            return None
        if char == "{" or (char == "[" and phase in (_LEAD, _SPACE)):
            self._phase = _JSON
            self._json.scan(char, 0)
        elif char == "[":  # after a name
            self._phase, self._args = _ARGS, 1
        elif char.isspace():
            self._phase = _SPACE if phase == _LEAD else _NAME_SPACE if phase == _NAME else phase
        elif _name_char(char) and phase in (_LEAD, _SPACE, _NAME):
            self._phase = _NAME
        else:
            return _REJECT if phase in (_LEAD, _SPACE) else _MALFORMED
        return None

    def finish(self) -> Stop | None:
        if self._phase in (_LEAD, _SPACE):
            return Stop(self._seen, is_block=False)
        return None


class Mistral:
    name = "mistral"
    markers = (MARKER,)
    auto_markers = (MARKER,)

    def tracker(self, marker: str) -> _MistralTracker:
        return _MistralTracker()

    def parse_block(self, block: str, tools: ToolBook) -> list[AIContent]:
        i = skip_space(block, len(MARKER))
        if block.startswith("[", i):
            return self._array(block, i, tools)
        if block.startswith("{", i):
            call, _ = call_from_object(block, i, tools)
            call.raw = block
            return [call]
        named = _NAMED.match(block, i)
        if named is None:
            junk = _JUNK.match(block, i)
            if junk is not None:
                return [TextContent(block[i : junk.end()]), *self._array(block, junk.end(), tools)]
            reason = f"{MARKER} is followed by a name without JSON arguments"
            return [error_text(block[len(MARKER) :], f"mistral: {reason}")]
        raw = block[named.end() :].strip()
        arguments = decode_arguments(raw)
        return [tools.call(named.group(1), arguments, raw, raw=block)]

    def parse_unclosed(self, block: str, tools: ToolBook, reason: str) -> list[AIContent]:
        i = skip_space(block, len(MARKER))
        if block.startswith(("[", "{"), i):
            return [json_call_prefix(block, i, tools, reason)]
        named = _PARTIAL.match(block, i)
        if named is None:
            raise MalformedBlockError("no name before the end of the stream")
        raw = block[named.end() :].strip()
        return [partial_call(named.group(1), raw, tools, reason, raw=block)]

    def _array(self, block: str, i: int, tools: ToolBook) -> list[AIContent]:
        calls, _ = call_array(block, i, tools, f"after {MARKER}")
        return list(calls)

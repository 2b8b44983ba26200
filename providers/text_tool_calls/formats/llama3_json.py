"""``llama3_json``: Llama 3.1/3.2 JSON calls, ``<|python_tag|>`` then ``{…}; {…}``, or bare JSON.

Grammar and server behaviour: docs/formats.md §4. Each call object needs ``name`` and
``arguments`` or ``parameters`` (``arguments`` wins, as in vLLM). Deliberate differences:

* Text around the calls is kept (vLLM discards it).
* Bare JSON has no special marker, so it is recognised only when this format is chosen by name
  (or after ``auto`` detected it by ``<|python_tag|>``), and only for objects that start with a
  ``"name"`` key (``{"name"`` or ``{ "name"``): any ``{`` would hold back every JSON answer.
* Several objects in one block are all-or-nothing, like vLLM: they were written as one unit.
* An object that never closes before the end of the stream is error text, but a complete call
  object after it is still read (SGLang: "invalid then valid"), as a call the end of the stream
  cut (``unclosed``: surfaced with ``error``).

The block ends after the last object; to know there is no ``; {`` after it, the tracker reads
ahead, and the scanner re-reads what it looked at as ordinary text.
"""

from __future__ import annotations

from providers.abstractions.contents import AIContent
from providers.text_tool_calls.json_calls import call_from_object, skip_space
from providers.text_tool_calls.protocol import MalformedBlockError, Stop, error_text
from providers.text_tool_calls.tools import ToolBook
from providers.text_tool_calls.trackers import JsonBalance

__all__ = ["Llama3Json"]

PYTHON_TAG = "<|python_tag|>"
_BARE = ('{"name"', '{ "name"')

# Tracker phases: before the first object, inside one, after one, after a ';'.
_LEAD, _JSON, _AFTER, _SEPARATOR = range(4)


class _Llama3Tracker:
    __slots__ = ("_json", "_last_end", "_phase", "_seen", "_skip")

    def __init__(self, marker: str) -> None:
        tagged = marker == PYTHON_TAG
        self._skip = len(marker) if tagged else 0
        self._phase = _LEAD if tagged else _JSON
        self._json = JsonBalance()
        self._seen = 0
        self._last_end = 0  # block offset just after the last complete object

    def feed(self, text: str, pos: int) -> Stop | None:
        base = self._seen - pos
        self._seen += len(text) - pos
        i = pos + self._skip
        self._skip = 0
        while i < len(text):
            if self._phase == _JSON:
                end = self._json.scan(text, i)
                if end < 0:
                    return None
                self._phase, self._last_end, self._json, i = _AFTER, base + end, JsonBalance(), end
                continue
            char = text[i]
            if char.isspace():
                i += 1
            elif char == "{" and self._phase != _AFTER:
                self._phase = _JSON
            elif char == ";" and self._phase == _AFTER:
                self._phase = _SEPARATOR
                i += 1
            elif self._phase == _LEAD:
                return Stop(base + i, is_block=False)  # the tag was not followed by JSON
            else:
                return Stop(self._last_end)
        return None

    def finish(self) -> Stop | None:
        if self._phase == _LEAD:
            return Stop(self._seen, is_block=False)
        return None if self._phase == _JSON else Stop(self._last_end)


class Llama3Json:
    name = "llama3_json"
    markers = (PYTHON_TAG, *_BARE)
    auto_markers = (PYTHON_TAG,)

    def tracker(self, marker: str) -> _Llama3Tracker:
        return _Llama3Tracker(marker)

    def parse_block(self, block: str, tools: ToolBook) -> list[AIContent]:
        i = skip_space(block, len(PYTHON_TAG) if block.startswith(PYTHON_TAG) else 0)
        calls: list[AIContent] = []
        while True:
            call, i = call_from_object(block, i, tools, require_arguments=True)
            calls.append(call)
            i = skip_space(block, i)
            if i >= len(block):
                return calls
            if not block.startswith(";", i):
                raise MalformedBlockError(f"expected ';' between calls at offset {i}")
            i = skip_space(block, i + 1)

    def parse_unclosed(self, block: str, tools: ToolBook, reason: str) -> list[AIContent]:
        """The last complete call object of a block whose first object never closed."""
        start = len(block)
        while (start := max(block.rfind(bare, 1, start) for bare in _BARE)) > 0:
            try:
                call, end = call_from_object(block, start, tools, require_arguments=True)
            except MalformedBlockError:
                continue
            if skip_space(block, end) == len(block):
                return [error_text(block[:start], reason), call]
        raise MalformedBlockError("no complete call object")

"""``nemotron``: ``<TOOLCALL>[{"name": …, "arguments": {…}}, …]</TOOLCALL>`` (NVIDIA
Llama-Nemotron; vLLM ``nemotron_json``).

Grammar and server behaviour: docs/formats.md §5. The block holds a JSON array of call objects,
or one object alone; ``arguments`` may be an object or a JSON string holding one. The model
usually thinks first (``<think>…</think>``), which is the reasoning parser's to take; this
format leaves it as text, as vLLM's tool parser does. As on vLLM, a block whose JSON does not
parse is returned whole (here as error text). A block the stream cut is surfaced as a call with
``error`` when a name can be read (``unclosed``).
"""

from __future__ import annotations

from providers.abstractions.contents import AIContent
from providers.text_tool_calls.json_calls import call_array, call_from_object, skip_space
from providers.text_tool_calls.protocol import MalformedBlockError
from providers.text_tool_calls.tools import ToolBook
from providers.text_tool_calls.trackers import EndMarkerTracker
from providers.text_tool_calls.unclosed import json_call_prefix

__all__ = ["Nemotron"]

OPEN = "<TOOLCALL>"
CLOSE = "</TOOLCALL>"


def _json_start(char: str) -> bool:
    # Anything but JSON after the tag means it was mentioned in prose: release it at once.
    return char in "[{"


class Nemotron:
    name = "nemotron"
    markers = (OPEN,)
    auto_markers = (OPEN,)

    def tracker(self, marker: str) -> EndMarkerTracker:
        return EndMarkerTracker(marker, (CLOSE,), restarts=(OPEN,), lead=_json_start)

    def parse_block(self, block: str, tools: ToolBook) -> list[AIContent]:
        if not block.endswith(CLOSE):
            raise MalformedBlockError(f"{OPEN} not closed before the next {OPEN}")
        end = len(block) - len(CLOSE)
        i = skip_space(block, len(OPEN))
        if block.startswith("{", i):
            first, i = call_from_object(block, i, tools)
            calls: list[AIContent] = [first]
        elif block.startswith("[", i):
            found, i = call_array(block, i, tools, f"in {OPEN}")
            calls = list(found)
        else:
            raise MalformedBlockError(f"{OPEN} holds neither a JSON array nor an object")
        if skip_space(block, i) != end:
            raise MalformedBlockError(f"text after the calls before {CLOSE}")
        for call in calls:
            call.raw = block
        return calls

    def parse_unclosed(self, block: str, tools: ToolBook, reason: str) -> list[AIContent]:
        try:
            return self.parse_block(block + CLOSE, tools)
        except MalformedBlockError:
            return [json_call_prefix(block, len(OPEN), tools, reason)]

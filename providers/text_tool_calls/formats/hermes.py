"""``hermes``: ``<tool_call>{"name": …, "arguments": {…}}</tool_call>`` (Hermes-2-Pro, Qwen2.5/3).

Grammar and server behaviour: docs/formats.md §1. Deliberate differences from the servers:

* Each block stands alone. vLLM is all-or-nothing (one bad block turns the whole output into
  content); here a bad block becomes error text and the good blocks are still calls.
* Text before, between and after blocks is kept (vLLM drops everything after the first tag).
* A block cut by the end of the stream is surfaced as a call with ``error`` (``unclosed``):
  vLLM accepts it when its JSON happens to be complete
  (``test_hermes_parser_non_streaming_tool_call_until_eos``), but a truncated stream is not
  trusted to carry a complete call, so it is shown and never executed.
* ``raw_arguments`` is the model's own argument text, not a re-dump.
"""

from __future__ import annotations

from providers.abstractions.contents import AIContent
from providers.text_tool_calls.formats._tool_call_tag import CLOSE, OPEN, tool_call_tracker
from providers.text_tool_calls.json_calls import call_from_object, skip_space
from providers.text_tool_calls.protocol import MalformedBlockError
from providers.text_tool_calls.tools import ToolBook
from providers.text_tool_calls.trackers import EndMarkerTracker
from providers.text_tool_calls.unclosed import json_call_prefix

__all__ = ["Hermes"]


class Hermes:
    name = "hermes"
    markers = (OPEN,)
    auto_markers = (OPEN,)

    def tracker(self, marker: str) -> EndMarkerTracker:
        return tool_call_tracker(marker)

    def parse_block(self, block: str, tools: ToolBook) -> list[AIContent]:
        if not block.endswith(CLOSE):
            raise MalformedBlockError(f"{OPEN} not closed before the next {OPEN}")
        end = len(block) - len(CLOSE)
        i = skip_space(block, len(OPEN))
        if i >= end:
            raise MalformedBlockError(f"empty {OPEN} block")
        calls: list[AIContent] = []
        while i < end:  # some fine-tunes put several objects in one block
            # (An object cannot end past `end`: the closing tag holds no "}".)
            call, i = call_from_object(block, i, tools)
            call.raw = block
            calls.append(call)
            i = skip_space(block, i)
            if block.startswith(",", i):  # ``{…}, {…}``: SGLang reads such a list too
                i = skip_space(block, i + 1)
        return calls

    def parse_unclosed(self, block: str, tools: ToolBook, reason: str) -> list[AIContent]:
        try:
            return self.parse_block(block + CLOSE, tools)
        except MalformedBlockError:
            return [json_call_prefix(block, len(OPEN), tools, reason)]

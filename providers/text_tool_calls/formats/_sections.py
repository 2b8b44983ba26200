"""Formats whose calls sit in a section of special tokens (kimi_k2, deepseek_v3, deepseek_v31).

``SECTION_BEGIN (CALL_BEGIN body CALL_END)* SECTION_END``. The section is one block; each call
inside is judged alone (``assemble``), so one bad call does not sink its neighbours. A call
outside any section (the section tokens stripped or never emitted) is its own block. What a
call body means is the subclass's ``parse_call``.
"""

from __future__ import annotations

import re

from providers.abstractions.contents import AIContent, FunctionCallContent, TextContent
from providers.text_tool_calls.protocol import MalformedBlockError, Segment, assemble
from providers.text_tool_calls.tools import ToolBook
from providers.text_tool_calls.trackers import EndMarkerTracker

__all__ = ["SectionFormat"]


def _tag_start(char: str) -> bool:
    return char == "<"


class SectionFormat:
    """Base of the section formats; subclasses set the four tokens and ``parse_call``."""

    name = ""
    section_begin = ""
    section_end = ""
    call_begin = ""
    call_end = ""
    drop_gaps = False  # text between the markers: dropped (Kimi-K2's servers) or error text

    def __init__(self) -> None:
        begin, end = re.escape(self.call_begin), re.escape(self.call_end)
        # A call ends at the first CALL_END, and a CALL_BEGIN inside it starts over: a call
        # missing its end becomes text, not part of the next call's name.
        self._call = re.compile(f"{begin}((?:(?!{begin}).)*?){end}", re.DOTALL)

    @property
    def markers(self) -> tuple[str, ...]:
        return (self.section_begin, self.call_begin)

    @property
    def auto_markers(self) -> tuple[str, ...]:
        return self.markers

    def tracker(self, marker: str) -> EndMarkerTracker:
        if marker == self.section_begin:
            # Where the servers drop text inside the section, it may hold any noise.
            lead = None if self.drop_gaps else _tag_start
            return EndMarkerTracker(marker, (self.section_end,), restarts=(marker,), lead=lead)
        return EndMarkerTracker(
            marker, (self.call_end,), restarts=(self.call_begin, self.section_begin)
        )

    def parse_block(self, block: str, tools: ToolBook) -> list[AIContent]:
        start, end = 0, len(block)
        if block.startswith(self.section_begin):
            if not block.endswith(self.section_end):
                raise MalformedBlockError("section not closed before the next section")
            start, end = len(self.section_begin), end - len(self.section_end)
        segments = []
        for match in self._call.finditer(block, start, end):
            try:
                call = self.parse_call(match.group(1), tools)
            except MalformedBlockError as exc:
                segments.append(Segment(match.start(), match.end(), str(exc)))
                continue
            call.raw = match.group()
            segments.append(Segment(match.start(), match.end(), call))
        if self.drop_gaps and not segments:
            return []  # an empty section is markup
        return assemble(block, start, end, segments, drop_gaps=self.drop_gaps)

    def parse_unclosed(self, block: str, tools: ToolBook, reason: str) -> list[AIContent]:
        """Close what the stream left open: the last call, then the section."""
        added = ""
        if block.rfind(self.call_begin) > block.rfind(self.call_end):
            added += self.call_end
        contents = self.parse_block(
            block + added + self.section_end * self._in_section(block), tools
        )
        last = contents[-1] if contents else None
        if added and isinstance(last, TextContent) and last.text.endswith(added):
            last.text = last.text.removesuffix(added)  # the cut call, as it came
        return contents

    def _in_section(self, block: str) -> bool:
        return block.startswith(self.section_begin)

    def parse_call(self, body: str, tools: ToolBook) -> FunctionCallContent:
        raise NotImplementedError

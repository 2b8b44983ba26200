"""``deepseek_v3``: DeepSeek-V3 calls, with a type, the name and a fenced JSON block.

Shape (docs/formats.md §5; the bars are full-width U+FF5C and ``▁`` is U+2581, written
here as ASCII ``|``): ``<|tool▁calls▁begin|><|tool▁call▁begin|>function<|tool▁sep|>NAME``,
a newline, a ```` ```json ```` fence around the arguments, ``<|tool▁call▁end|>``, more calls,
``<|tool▁calls▁end|>``. The fence is required: it is what tells a V3 call from a V3.1 one in
``auto``, which shares the markers.
"""

from __future__ import annotations

import re

from providers.abstractions.contents import FunctionCallContent
from providers.text_tool_calls.formats._sections import SectionFormat
from providers.text_tool_calls.json_calls import decode_arguments
from providers.text_tool_calls.protocol import MalformedBlockError
from providers.text_tool_calls.tools import ToolBook

__all__ = ["DeepSeekV3"]

SEPARATOR = "<\uff5ctool\u2581sep\uff5c>"
_CALL = re.compile(rf"\s*(\w+){SEPARATOR}([^\n]+)\n```(?:json)?[ \t]*\n(.*?)\n?```\s*", re.DOTALL)


class DeepSeekV3(SectionFormat):
    name = "deepseek_v3"
    section_begin = "<\uff5ctool\u2581calls\u2581begin\uff5c>"
    section_end = "<\uff5ctool\u2581calls\u2581end\uff5c>"
    call_begin = "<\uff5ctool\u2581call\u2581begin\uff5c>"
    call_end = "<\uff5ctool\u2581call\u2581end\uff5c>"

    def parse_call(self, body: str, tools: ToolBook) -> FunctionCallContent:
        match = _CALL.fullmatch(body)
        if match is None:
            raise MalformedBlockError(f"call is not TYPE{SEPARATOR}NAME then a ```json block")
        if match.group(1) != "function":
            raise MalformedBlockError(f"call type {match.group(1)!r} is not 'function'")
        raw = match.group(3).strip()
        return tools.call(match.group(2).strip(), decode_arguments(raw), raw or "{}")

"""``deepseek_v31``: DeepSeek-V3.1 calls, ``NAME<|tool▁sep|>{…}`` with no type and no fence.

``<|tool▁calls▁begin|><|tool▁call▁begin|>NAME<|tool▁sep|>{…}<|tool▁call▁end|>…<|tool▁calls▁end|>``
(docs/formats.md §5; the bars are full-width U+FF5C, written here as ASCII ``|``). Text
around the section is allowed and kept.
"""

from __future__ import annotations

from providers.abstractions.contents import FunctionCallContent
from providers.text_tool_calls.formats._sections import SectionFormat
from providers.text_tool_calls.json_calls import decode_arguments
from providers.text_tool_calls.protocol import MalformedBlockError
from providers.text_tool_calls.tools import ToolBook

__all__ = ["DeepSeekV31"]

SEPARATOR = "<\uff5ctool\u2581sep\uff5c>"


class DeepSeekV31(SectionFormat):
    name = "deepseek_v31"
    section_begin = "<\uff5ctool\u2581calls\u2581begin\uff5c>"
    section_end = "<\uff5ctool\u2581calls\u2581end\uff5c>"
    call_begin = "<\uff5ctool\u2581call\u2581begin\uff5c>"
    call_end = "<\uff5ctool\u2581call\u2581end\uff5c>"

    def parse_call(self, body: str, tools: ToolBook) -> FunctionCallContent:
        name, found, arguments = body.partition(SEPARATOR)
        name = name.strip()
        if not found or not name or "\n" in name:
            raise MalformedBlockError(f"call is not NAME{SEPARATOR}ARGUMENTS")
        raw = arguments.strip()
        return tools.call(name, decode_arguments(raw), raw or "{}")

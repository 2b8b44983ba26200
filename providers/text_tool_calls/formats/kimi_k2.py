"""``kimi_k2``: Kimi-K2 ``<|tool_calls_section_begin|>`` sections of
``<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{…}<|tool_call_end|>``.

Grammar and server behaviour: docs/formats.md §5. The id the model wrote is the call id (as
in vLLM); the name is what lies between an optional ``functions.`` and the last ``:``, so dotted
and hyphenated names survive. Deliberate differences: an id without ``:INDEX`` and arguments that
are not a JSON object are error text (vLLM skips the first and returns the second as a call);
text after the section is kept (vLLM drops it); SGLang's bare-counter ids with the name inferred
from the tools are not guessed at.
"""

from __future__ import annotations

import re

from providers.abstractions.contents import FunctionCallContent
from providers.text_tool_calls._json import decode_arguments
from providers.text_tool_calls._protocol import MalformedBlockError
from providers.text_tool_calls._tools import ToolBook
from providers.text_tool_calls.formats._sections import SectionFormat

__all__ = ["KimiK2"]

ARGUMENT_BEGIN = "<|tool_call_argument_begin|>"
_ID = re.compile(r"(?:functions\.)?(.+):(\d+)", re.DOTALL)


class KimiK2(SectionFormat):
    name = "kimi_k2"
    section_begin = "<|tool_calls_section_begin|>"
    section_end = "<|tool_calls_section_end|>"
    call_begin = "<|tool_call_begin|>"
    call_end = "<|tool_call_end|>"

    def parse_call(self, body: str, tools: ToolBook) -> FunctionCallContent:
        call_id, found, arguments = body.partition(ARGUMENT_BEGIN)
        if not found:
            raise MalformedBlockError(f"call without {ARGUMENT_BEGIN}")
        call_id = call_id.strip()
        named = _ID.fullmatch(call_id)
        if named is None or not named.group(1).strip():
            raise MalformedBlockError(f"call id {call_id!r} is not [functions.]NAME:INDEX")
        raw = arguments.strip()
        return tools.call(
            named.group(1).strip(), decode_arguments(raw), raw or "{}", call_id=call_id
        )

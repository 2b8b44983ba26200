"""``kimi_k2``: Kimi-K2 ``<|tool_calls_section_begin|>`` sections of
``<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{…}<|tool_call_end|>``.

Grammar and server behaviour: docs/formats.md §5. The id the model wrote is the call id (as
in vLLM); the name is what lies between an optional ``functions.`` and the last ``:``, so dotted
and hyphenated names survive. As on the servers, text between the section's markers is dropped,
a bare counter id (``0``) takes its name from the offered tools when that is unambiguous (the
only tool, or the only one whose parameters hold every argument), and arguments that are not a
JSON object still make a call, with the raw text and an ``error`` (never executed). Deliberate
differences: an id without ``:INDEX`` is surfaced as a call with ``error`` (vLLM skips it), and
text after the section is kept (vLLM drops it).
"""

from __future__ import annotations

import re

from providers.abstractions.contents import FunctionCallContent
from providers.text_tool_calls.formats._sections import SectionFormat
from providers.text_tool_calls.json_calls import decode_arguments
from providers.text_tool_calls.protocol import MalformedBlockError
from providers.text_tool_calls.tools import ToolBook
from providers.text_tool_calls.unclosed import partial_call

__all__ = ["KimiK2"]

ARGUMENT_BEGIN = "<|tool_call_argument_begin|>"
_ID = re.compile(r"(?:functions\.)?(.+):(\d+)", re.DOTALL)


class KimiK2(SectionFormat):
    name = "kimi_k2"
    section_begin = "<|tool_calls_section_begin|>"
    section_end = "<|tool_calls_section_end|>"
    call_begin = "<|tool_call_begin|>"
    call_end = "<|tool_call_end|>"
    drop_gaps = True

    def parse_call(self, body: str, tools: ToolBook) -> FunctionCallContent:
        call_id, found, arguments = body.partition(ARGUMENT_BEGIN)
        if not found:
            raise MalformedBlockError(f"call without {ARGUMENT_BEGIN}")
        call_id = call_id.strip()
        raw = arguments.strip()
        named = _ID.fullmatch(call_id)
        if named is not None and named.group(1).strip():
            name, error = named.group(1).strip(), None
        elif call_id.isdigit():  # a bare counter: the tools may say which one
            name, error = tools.infer_name(raw) or "", None
            if not name:
                raise MalformedBlockError(f"bare call id {call_id!r} matches no single tool")
        elif call_id.removeprefix("functions."):
            name = call_id.removeprefix("functions.")
            error = f"kimi_k2: call id {call_id!r} is not [functions.]NAME:INDEX"
        else:
            raise MalformedBlockError("empty call id")
        try:
            call = tools.call(name, decode_arguments(raw), raw or "{}", call_id=call_id)
        except MalformedBlockError as exc:
            call = partial_call(name, raw, tools, f"kimi_k2: {exc}")
            call.call_id = call_id
        call.error = call.error or error
        return call

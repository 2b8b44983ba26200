"""``qwen3_coder``: ``<tool_call><function=F><parameter=K>v</parameter>…</function></tool_call>``.

Grammar and server behaviour: docs/formats.md §2. Values are raw text (newlines, quotes and
backslashes literal) and are typed by the tool's JSON Schema (``schema.py``). Following the
servers, this parser also accepts:

* ``<function=…>`` without the ``<tool_call>`` wrapper (tags stripped by the server);
* several functions in one block, and a second ``<tool_call>`` after ``</function>`` with no
  ``</tool_call>`` in between (vLLM's engine);
* a missing ``</parameter>`` (the value ends at the next ``<parameter=`` or ``</function>``) and a
  missing ``</function>`` inside a closed block;
* zero parameters (``{}``).

Value trimming follows the older vLLM parser and SGLang: exactly one leading and one trailing
newline are removed, because that is the template's layout; anything more is the model's
(indentation in code matters; vLLM's newer ``strip()`` would change it). Inside an indented
layout, a one-line value is stripped entirely (``_trimmed``). Names are stripped.
Text between parameters inside a function is markup and ignored, as on the servers. A repeated
parameter keeps its last value, as on the servers.
"""

from __future__ import annotations

import json
import re
from typing import Any

from providers.abstractions.contents import AIContent, FunctionCallContent
from providers.text_tool_calls.formats._tool_call_tag import CLOSE, OPEN, tool_call_tracker
from providers.text_tool_calls.protocol import MalformedBlockError, Segment, assemble
from providers.text_tool_calls.schema import convert
from providers.text_tool_calls.tools import ToolBook
from providers.text_tool_calls.trackers import EndMarkerTracker

__all__ = ["Qwen3Coder"]

FUNCTION = "<function="
END_FUNCTION = "</function>"
PARAMETER = "<parameter="
END_PARAMETER = "</parameter>"
_HEADER = re.compile(r"<(function|parameter)=([^>\n]*)>")
_FUNCTION = re.compile(re.escape(FUNCTION))
_MARKUP = re.compile(r"(?:\s|</?tool_call>)+")  # between functions: layout and wrapper tags


def _skip_markup(block: str, i: int, limit: int) -> int:
    match = _MARKUP.match(block, i, limit)
    return i if match is None else match.end()


def _trimmed(value: str) -> str:
    """One leading and one trailing newline removed (the template's layout). When the closing
    tag is indented (the value ends in a newline and spaces) the layout is indented, and a value
    that is one line once stripped loses all of it, as SGLang and vLLM's engine read it; other
    values keep their own whitespace (code indentation)."""
    stripped = value.strip()
    closing_indent = value.rpartition("\n")[2]
    if "\n" in value and closing_indent.isspace() and "\n" not in stripped:
        return stripped
    return value.removeprefix("\n").removesuffix("\n")


def _name_start(char: str) -> bool:
    return char.isalpha() or char == "_"


class Qwen3Coder:
    name = "qwen3_coder"
    markers = (OPEN, FUNCTION)
    auto_markers = (OPEN, FUNCTION)

    def tracker(self, marker: str) -> EndMarkerTracker:
        if marker == OPEN:
            return tool_call_tracker(marker)
        return EndMarkerTracker(
            marker, (END_FUNCTION,), restarts=(FUNCTION, OPEN), lead=_name_start
        )

    def parse_block(self, block: str, tools: ToolBook) -> list[AIContent]:
        start, end = 0, len(block)
        if block.startswith(OPEN):
            start = len(OPEN)
            if block.endswith(CLOSE):
                end -= len(CLOSE)
        starts = [m.start() for m in _FUNCTION.finditer(block, start, end)]
        if not starts:
            raise MalformedBlockError(f"no {FUNCTION}…> in the block")
        segments = []
        for k, begin in enumerate(starts):
            limit = starts[k + 1] if k + 1 < len(starts) else end
            result, stop = self._function(block, begin, limit, tools)
            segments.append(Segment(begin, _skip_markup(block, stop, limit), result))
        return assemble(block, _skip_markup(block, start, end), end, segments)

    def parse_unclosed(self, block: str, tools: ToolBook, reason: str) -> list[AIContent]:
        closer = CLOSE if block.startswith(OPEN) else END_FUNCTION
        return self.parse_block(block + closer, tools)

    def _function(
        self, block: str, begin: int, limit: int, tools: ToolBook
    ) -> tuple[FunctionCallContent | str, int]:
        """One function in ``block[begin:limit]``: the call (or why not) and where it ends."""
        close = block.find(END_FUNCTION, begin, limit)
        stop = limit if close < 0 else close + len(END_FUNCTION)
        header = _HEADER.match(block, begin, limit)
        if header is None:  # (at ``begin`` only the "function" alternative can match)
            return f"malformed {FUNCTION} tag", stop
        name = header.group(2).strip()
        if not name:
            return f"empty name in {FUNCTION}> tag", stop
        body_end = limit if close < 0 else close
        arguments: dict[str, Any] = {}
        params = list(_HEADER.finditer(block, header.end(), body_end))
        if not params and block[header.end() : body_end].strip():
            return f"text but no {PARAMETER}…> in function {name}", stop
        # Every header here is a parameter: a <function= before ``limit`` would be in ``starts``.
        for k, param in enumerate(params):
            value_end = params[k + 1].start() if k + 1 < len(params) else body_end
            closing = block.find(END_PARAMETER, param.end(), value_end)
            value = block[param.end() : value_end if closing < 0 else closing]
            value = _trimmed(value)
            key = param.group(2).strip()
            arguments[key] = convert(value, tools.parameter_schema(name, key))
        raw = json.dumps(arguments, ensure_ascii=False)
        return tools.call(name, arguments, raw, raw=block[begin:stop]), stop

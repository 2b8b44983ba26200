"""A call cut by the end of the stream: surfaced with what it has, and an ``error``.

When a stream ends inside a block (``max_tokens``, a dropped connection), the servers return the
call anyway: vLLM's hermes accepts a last ``<tool_call>`` whose JSON happens to be complete, and
its Kimi-K2 parser streams the partial arguments of a call without ``<|tool_call_end|>``. Here
such a call is surfaced too, with its name, its argument text as far as it got (parsed when it
is a complete JSON object), and an ``error``, so it is shown but never executed. When not even a
name can be read, the block stays error text, as before.

A format may define ``parse_unclosed(block, tools)``; the rest are tried by closing the block
with the format's end markers (``closers``) and parsing that.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from providers.abstractions.contents import AIContent, FunctionCallContent
from providers.text_tool_calls.protocol import MalformedBlockError, ToolCallFormat
from providers.text_tool_calls.tools import ToolBook

__all__ = ["json_call_prefix", "partial_call", "recover_unclosed"]

_NAME = re.compile(r'"name"\s*:\s*"((?:[^"\\]|\\.)+)"')
_ARGUMENTS = re.compile(r'"(?:arguments|parameters)"\s*:\s*')


def partial_call(
    name: str, raw_arguments: str, tools: ToolBook, reason: str, *, raw: str | None = None
) -> FunctionCallContent:
    """A call whose arguments may be cut short: parsed when complete, kept raw either way."""
    try:
        value = json.loads(raw_arguments) if raw_arguments.strip() else {}
    except ValueError:
        value = None
    arguments = value if isinstance(value, dict) else {}
    call = tools.call(name, arguments, raw_arguments, raw=raw)
    call.error = call.error or reason
    return call


def json_call_prefix(block: str, start: int, tools: ToolBook, reason: str) -> FunctionCallContent:
    """The call in an unfinished ``{"name": …, "arguments": …`` object at ``block[start:]``."""
    name = _NAME.search(block, start)
    if name is None:
        raise MalformedBlockError("no name before the end of the stream")
    arguments = _ARGUMENTS.search(block, start)
    raw = "" if arguments is None else block[arguments.end() :].strip()
    if raw.endswith("}") and raw.count("{") < raw.count("}"):
        raw = raw[:-1].rstrip()  # the outer object's brace
    return partial_call(json.loads(f'"{name.group(1)}"'), raw, tools, reason, raw=block)


def recover_unclosed(
    formats: Sequence[ToolCallFormat], block: str, tools: ToolBook, reason: str
) -> list[AIContent] | None:
    """The contents of a block the stream cut, or ``None`` when no format can read a call."""
    for fmt in formats:
        parse = getattr(fmt, "parse_unclosed", None)
        try:
            if parse is not None:
                contents: list[AIContent] = parse(block, tools, reason)
            else:
                contents = _closed_parse(fmt, block, tools)
        except MalformedBlockError:
            continue
        if any(isinstance(c, FunctionCallContent) for c in contents):
            text = block  # (the block's text, given once: to the first call that needs it)
            for content in contents:
                if not isinstance(content, FunctionCallContent):
                    continue
                content.error = content.error or reason
                if content.raw is not None and content.raw not in block:
                    # Not the end markers added to close it. A block that held several calls
                    # gives its text to the first: the raws still add up to what was sent.
                    content.raw, text = text, ""
            return contents
    return None


def _closed_parse(fmt: ToolCallFormat, block: str, tools: ToolBook) -> list[AIContent]:
    closers: tuple[str, ...] = getattr(fmt, "closers", ())
    if not closers:
        raise MalformedBlockError("no way to close the block")
    return fmt.parse_block(block + "".join(closers), tools)

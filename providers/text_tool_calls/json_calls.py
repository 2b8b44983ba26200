"""JSON call objects (``{"name": …, "arguments": …}``) with the exact text of their arguments.

hermes, mistral and llama3_json all write a call as a JSON object. ``raw_arguments`` must be the
arguments exactly as the model wrote them (replayed verbatim in history, so the server's prompt
cache sees the same bytes), which ``json.loads`` cannot give. So the object's members are walked
with ``JSONDecoder.raw_decode``, which reports where each value ends; the work stays in C.
"""

from __future__ import annotations

import json
import re
from typing import Any

from providers.abstractions.contents import FunctionCallContent
from providers.text_tool_calls.protocol import MalformedBlockError
from providers.text_tool_calls.tools import ToolBook

__all__ = ["call_array", "call_from_object", "decode_arguments", "skip_space"]

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")


def skip_space(text: str, i: int) -> int:
    match = _SPACE.match(text, i)
    return i if match is None else match.end()


def _decode(text: str, i: int) -> tuple[Any, int]:
    try:
        return _DECODER.raw_decode(text, i)
    except json.JSONDecodeError as exc:
        raise MalformedBlockError(f"not valid JSON ({exc.msg} at offset {exc.pos})") from None
    except ValueError:  # an integer longer than Python's int-conversion limit
        raise MalformedBlockError("not valid JSON (a number too long to convert)") from None
    except RecursionError:
        raise MalformedBlockError("JSON nested too deeply") from None


def _members(text: str, start: int) -> tuple[dict[str, tuple[Any, int, int]], int]:
    """Each member of the object at ``text[start]`` as ``(value, start, end)``; and its end."""
    if not text.startswith("{", start):
        raise MalformedBlockError("expected a JSON object")
    members: dict[str, tuple[Any, int, int]] = {}
    i = skip_space(text, start + 1)
    if text.startswith("}", i):
        return members, i + 1
    while True:
        if not text.startswith('"', i):
            raise MalformedBlockError(f"not valid JSON (expected a key at offset {i})")
        key, i = _decode(text, i)
        i = skip_space(text, i)
        if not text.startswith(":", i):
            raise MalformedBlockError(f"not valid JSON (expected ':' at offset {i})")
        i = skip_space(text, i + 1)
        value, end = _decode(text, i)
        members[key] = (value, i, end)
        i = skip_space(text, end)
        if text.startswith("}", i):
            return members, i + 1
        if not text.startswith(",", i):
            raise MalformedBlockError(f"not valid JSON (expected ',' or '}}' at offset {i})")
        i = skip_space(text, i + 1)


def decode_arguments(text: str) -> dict[str, Any]:
    """Arguments written as their own JSON text (kimi_k2, deepseek, harmony bodies)."""
    stripped = text.strip()
    if not stripped:
        return {}
    value, end = _decode(stripped, 0)
    if end != len(stripped):
        raise MalformedBlockError(f"text after the arguments JSON (offset {end})")
    if not isinstance(value, dict):
        raise MalformedBlockError(f"arguments are {type(value).__name__}, not a JSON object")
    return value


def call_array(
    text: str, start: int, tools: ToolBook, what: str
) -> tuple[list[FunctionCallContent], int]:
    """The calls of the JSON array at ``text[start]`` (its ``[``), and where it ends: mistral's
    ``[TOOL_CALLS][…]`` and nemotron's ``<TOOLCALL>[…]`` write their calls this way. An empty
    list is malformed: ``what`` names the marker it followed, for the error."""
    calls: list[FunctionCallContent] = []
    i = skip_space(text, start + 1)
    while not text.startswith("]", i):
        call, i = call_from_object(text, i, tools)
        calls.append(call)
        i = skip_space(text, i)
        if text.startswith(",", i):
            i = skip_space(text, i + 1)
        elif not text.startswith("]", i):
            raise MalformedBlockError(f"not valid JSON (expected ',' or ']' at offset {i})")
    if not calls:
        raise MalformedBlockError(f"empty call list {what}")
    return calls, i + 1


def call_from_object(
    text: str, start: int, tools: ToolBook, *, require_arguments: bool = False
) -> tuple[FunctionCallContent, int]:
    """The call written as the JSON object at ``text[start]``, and where the object ends.

    ``arguments`` wins over ``parameters`` (vLLM's llama3 parser; SGLang's hermes accepts
    either). Arguments given as a JSON string holding an object (some fine-tunes double-encode)
    are accepted, with that string as ``raw_arguments``. Missing arguments mean ``{}`` unless
    ``require_arguments`` (bare JSON, where any object with a ``name`` would otherwise match).
    """
    members, end = _members(text, start)
    name = members.get("name", (None, 0, 0))[0]
    if not isinstance(name, str) or not name.strip():
        raise MalformedBlockError('the call object has no "name" string')
    found = members.get("arguments") or members.get("parameters")
    if found is None:
        if require_arguments:
            raise MalformedBlockError('the call object has no "arguments" or "parameters"')
        return tools.call(name.strip(), {}, "{}", raw=text[start:end]), end
    value, value_start, value_end = found
    raw = text[value_start:value_end]
    if isinstance(value, str) and value.strip():
        raw = value
        value = decode_arguments(value)
    elif value is None or value == "":
        value, raw = {}, "{}"
    if not isinstance(value, dict):
        raise MalformedBlockError(f"arguments are {type(value).__name__}, not a JSON object")
    return tools.call(name.strip(), value, raw, raw=text[start:end]), end

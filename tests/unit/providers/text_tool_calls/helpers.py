"""Shared by the text tool-call tests: stream a text, compare contents, check every cut."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any

from providers.abstractions.contents import (
    AIContent,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
)
from providers.abstractions.options import ToolDeclaration
from providers.text_tool_calls import ERROR_KEY, TextToolCallParser

Tools = Sequence[ToolDeclaration | Mapping[str, Any]] | None


def merged(contents: Iterable[AIContent]) -> list[AIContent]:
    """Adjacent plain texts joined (what a caller sees once it concatenates updates)."""
    out: list[AIContent] = []
    for content in contents:
        last = out[-1] if out else None
        if (
            type(content) is TextContent
            and content.additional_properties is None
            and type(last) is TextContent
            and last.additional_properties is None
        ):
            out[-1] = TextContent(last.text + content.text)
        else:
            out.append(content)
    return out


def comparable(contents: Iterable[AIContent], *, ids: bool = False) -> list[tuple[Any, ...]]:
    """Contents as tuples; random call ids left out unless ``ids``."""
    out: list[tuple[Any, ...]] = []
    for content in merged(contents):
        if isinstance(content, FunctionCallContent):
            call = ("call", content.name, content.arguments, content.raw_arguments, content.error)
            out.append((*call, content.call_id) if ids else call)
        elif isinstance(content, TextContent):
            reason = (content.additional_properties or {}).get(ERROR_KEY)
            out.append(("error", content.text) if reason else ("text", content.text))
        elif isinstance(content, TextReasoningContent):
            out.append(("reasoning", content.text))
        else:
            raise AssertionError(f"unexpected content {content!r}")
    return out


def stream(parser: TextToolCallParser, deltas: Iterable[str]) -> list[AIContent]:
    out: list[AIContent] = []
    for delta in deltas:
        out.extend(parser.feed(delta))
    out.extend(parser.finish())
    return out


def cut(text: str, positions: Iterable[int]) -> list[str]:
    bounds = [0, *sorted(positions), len(text)]
    return [text[a:b] for a, b in pairwise(bounds)]


def assert_split_invariant(text: str, fmt: str = "auto", tools: Tools = None) -> None:
    """Every single cut, and one character per delta, give what ``parse`` gives."""
    expected = comparable(TextToolCallParser(fmt, tools).parse(text).contents)
    parser = TextToolCallParser(fmt, tools)
    for position in range(len(text) + 1):
        assert comparable(stream(parser, cut(text, [position]))) == expected, position
    assert comparable(stream(parser, text)) == expected


def calls(contents: Iterable[AIContent]) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.arguments) for c in contents if isinstance(c, FunctionCallContent)]


def visible(contents: Iterable[AIContent]) -> str:
    return "".join(c.text for c in contents if isinstance(c, TextContent))


def errors(contents: Iterable[AIContent]) -> list[str]:
    return [
        c.additional_properties[ERROR_KEY]
        for c in contents
        if isinstance(c, TextContent) and c.additional_properties
    ]


def tool(name: str, properties: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An OpenAI-style tool declaration."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": dict(properties or {})},
        },
    }

"""deepseek_v3: ``TYPE<|tool▁sep|>NAME`` then a fenced JSON block, inside the section tokens."""

from __future__ import annotations

import pytest

from providers.text_tool_calls import TextToolCallParser
from tests.unit.providers.text_tool_calls.helpers import comparable, errors

BEGIN, END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CALL_BEGIN, CALL_END, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"


def call(name: str, arguments: str, *, kind: str = "function", fence: str = "```json") -> str:
    return f"{CALL_BEGIN}{kind}{SEP}{name}\n{fence}\n{arguments}\n```{CALL_END}"


def parse(text: str) -> list[tuple[object, ...]]:
    return comparable(TextToolCallParser("deepseek_v3").parse(text).contents)


def test_a_call_and_its_raw_text() -> None:
    text = BEGIN + call(" get_weather ", '  {"city": "Tokyo"}  ') + END
    result = TextToolCallParser("deepseek_v3").parse(text)
    assert comparable(result.contents) == [
        ("call", "get_weather", {"city": "Tokyo"}, '{"city": "Tokyo"}', None)
    ]
    assert result.tool_calls[0].raw == text.removeprefix(BEGIN).removesuffix(END)


def test_empty_arguments_are_an_empty_object() -> None:
    assert parse(f"{BEGIN}{call('refresh', '')}{END}") == [("call", "refresh", {}, "{}", None)]


def test_a_fence_without_a_language_is_accepted() -> None:
    text = BEGIN + call("f", '{"a": 1}', fence="```") + END
    assert parse(text) == [("call", "f", {"a": 1}, '{"a": 1}', None)]


@pytest.mark.parametrize("kind", ["call", "tool", "Function"])
def test_a_type_other_than_function_is_error_text(kind: str) -> None:
    text = f"{BEGIN}{call('f', '{}', kind=kind)}{END}"
    result = TextToolCallParser("deepseek_v3").parse(text).contents
    assert comparable(result) == [("error", text)]
    assert errors(result) == [f"deepseek_v3: call type {kind!r} is not 'function'"]


@pytest.mark.parametrize("arguments", ["[1]", '{"a": 1} x', "{bad"])
def test_arguments_that_are_not_one_json_object_are_error_text(arguments: str) -> None:
    text = f"ok {call('f', arguments)}"
    assert parse(text) == [("text", "ok "), ("error", call("f", arguments))]

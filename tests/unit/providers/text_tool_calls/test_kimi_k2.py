"""kimi_k2: the call id ``[functions.]NAME:INDEX`` and what is made of ids that are not that."""

from __future__ import annotations

import pytest

from providers.text_tool_calls import TextToolCallParser
from tests.unit.providers.text_tool_calls.helpers import comparable, errors, tool

BEGIN, END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"


def kimi(call_id: str, arguments: str) -> str:
    return f"<|tool_call_begin|>{call_id}<|tool_call_argument_begin|>{arguments}<|tool_call_end|>"


def parse(text: str, tools: list[dict[str, object]] | None = None) -> list[tuple[object, ...]]:
    return comparable(TextToolCallParser("kimi_k2", tools).parse(text).contents, ids=True)


@pytest.mark.parametrize(
    ("call_id", "name"),
    [("f:12", "f"), ("functions.a:b:3", "a:b"), ("functions.functions.x:0", "functions.x")],
)
def test_the_name_is_between_the_prefix_and_the_last_colon(call_id: str, name: str) -> None:
    text = BEGIN + kimi(call_id, '{"a": 1}') + END
    assert parse(text) == [("call", name, {"a": 1}, '{"a": 1}', None, call_id)]


@pytest.mark.parametrize("call_id", ["", "  ", "functions."])
def test_a_call_without_a_name_is_error_text(call_id: str) -> None:
    text = BEGIN + kimi(call_id, "{}") + END
    contents = TextToolCallParser("kimi_k2").parse(text).contents
    assert comparable(contents) == [("error", text)]
    assert errors(contents) == ["kimi_k2: empty call id"]


def test_a_bare_counter_with_one_tool_offered_calls_that_tool() -> None:
    text = BEGIN + kimi("3", '{"x": 1}') + END
    assert parse(text, [tool("only")]) == [("call", "only", {"x": 1}, '{"x": 1}', None, "3")]


def test_a_bare_counter_no_tool_matches_is_error_text_with_the_reason() -> None:
    text = BEGIN + kimi("0", "{}") + END
    contents = TextToolCallParser("kimi_k2").parse(text).contents
    assert comparable(contents) == [("error", text)]
    assert errors(contents) == ["kimi_k2: bare call id '0' matches no single tool"]


@pytest.mark.parametrize("arguments", ["", "  "])
def test_empty_arguments_are_an_empty_object(arguments: str) -> None:
    text = BEGIN + kimi("functions.f:0", arguments) + END
    assert parse(text) == [("call", "f", {}, "{}", None, "functions.f:0")]


def test_arguments_that_are_not_an_object_keep_the_id_and_say_why() -> None:
    text = BEGIN + kimi("functions.f:4", " [1] ") + END
    assert parse(text) == [
        ("call", "f", {}, "[1]", "kimi_k2: arguments are list, not a JSON object", "functions.f:4")
    ]


def test_an_id_without_index_is_a_call_with_error() -> None:
    text = BEGIN + kimi("functions.get_time", '{"tz": "UTC"}') + END
    ((kind, name, arguments, raw, error, call_id),) = parse(text)
    assert (kind, name, arguments, raw, call_id) == (
        "call",
        "get_time",
        {"tz": "UTC"},
        '{"tz": "UTC"}',
        "functions.get_time",
    )
    assert error == "kimi_k2: call id 'functions.get_time' is not [functions.]NAME:INDEX"


def test_a_tool_not_offered_is_flagged_even_when_the_id_is_fine() -> None:
    text = BEGIN + kimi("functions.f:0", "{}") + END
    assert parse(text, [tool("g")]) == [
        ("call", "f", {}, "{}", "tool f was not offered; offered: g", "functions.f:0")
    ]


@pytest.mark.parametrize("call_id", ["functions. :0", "functions.\t:7"])
def test_an_id_with_a_blank_name_is_a_call_with_error(call_id: str) -> None:
    # Never an executable call named "": the id is shown as written, with the reason.
    text = BEGIN + kimi(call_id, "{}") + END
    ((kind, name, _, _, error, found_id),) = parse(text)
    assert (kind, name, found_id) == ("call", call_id.removeprefix("functions."), call_id)
    assert error == f"kimi_k2: call id {call_id!r} is not [functions.]NAME:INDEX"

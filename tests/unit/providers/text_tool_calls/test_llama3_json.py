"""llama3_json: research/FORMATS.md §4 — ``<|python_tag|>`` and bare JSON, ``;``-separated."""

from __future__ import annotations

import pytest

from providers.text_tool_calls import TextToolCallParser
from tests.unit.providers.text_tool_calls.helpers import (
    assert_split_invariant,
    calls,
    comparable,
    errors,
)


def parse(text: str, fmt: str = "llama3_json") -> list[tuple[object, ...]]:
    return comparable(TextToolCallParser(fmt).parse(text).contents)


def test_python_tag_keeps_the_text_before_it() -> None:
    text = 'Let me check. <|python_tag|>{"name": "get_weather", "parameters": {"city": "SF"}}'
    assert parse(text) == [
        ("text", "Let me check. "),  # SGLang keeps the trailing space too
        ("call", "get_weather", {"city": "SF"}, '{"city": "SF"}', None),
    ]
    assert_split_invariant(text, "llama3_json")


def test_semicolon_separated_calls() -> None:
    text = '<|python_tag|>{"name": "a", "parameters": {"x": 1}} ; {"name": "b", "arguments": {}}'
    assert calls(TextToolCallParser("llama3_json").parse(text).contents) == [
        ("a", {"x": 1}),
        ("b", {}),
    ]
    assert_split_invariant(text + " after", "llama3_json")


def test_second_python_tag_starts_another_block() -> None:
    text = (
        '<|python_tag|>{"name": "a", "parameters": {}}<|python_tag|>{"name": "b", "parameters": {}}'
    )
    assert [n for n, _ in calls(TextToolCallParser("llama3_json").parse(text).contents)] == [
        "a",
        "b",
    ]


def test_arguments_win_over_parameters() -> None:
    text = '{"name": "f", "parameters": {"p": 1}, "arguments": {"a": 2}}'
    assert calls(TextToolCallParser("llama3_json").parse(text).contents) == [("f", {"a": 2})]


def test_bare_json_with_text_around_it() -> None:
    # vLLM discards the surrounding text; it is kept here.
    text = (
        'Here is the result: {"name": "get_weather", "parameters": {"city": "SF"}} '
        "Would you like to know more?"
    )
    assert parse(text) == [
        ("text", "Here is the result: "),
        ("call", "get_weather", {"city": "SF"}, '{"city": "SF"}', None),
        ("text", " Would you like to know more?"),
    ]
    assert_split_invariant(text, "llama3_json")


def test_braces_and_escaped_quotes_inside_strings() -> None:
    text = '{"name": "f", "parameters": {"q": "a } \\" { ] [ b"}}'
    assert calls(TextToolCallParser("llama3_json").parse(text).contents) == [
        ("f", {"q": 'a } " { ] [ b'})
    ]
    assert_split_invariant(text, "llama3_json")


def test_empty_arguments() -> None:
    (call,) = TextToolCallParser("llama3_json").parse('{"name": "f", "parameters": {}}').tool_calls
    assert call.raw_arguments == "{}"


@pytest.mark.parametrize(
    "block",
    [
        '{"name": "f", "parameters": {invalid json}}',
        '{"name": "f"}',  # a name alone is not enough for bare JSON
        '<|python_tag|>{"parameters": {}}',
    ],
)
def test_bad_objects_are_error_text(block: str) -> None:
    assert parse(block) == [("error", block)]


def test_malformed_object_followed_by_a_valid_one() -> None:
    # SGLang recovers the valid one; so does this parser, keeping the bad one as error text.
    bad = '{"name": "a", "parameters": {bad}}'
    good = '{"name": "b", "parameters": {"x": 1}}'
    result = TextToolCallParser("llama3_json").parse(f"{bad} {good}")
    assert comparable(result.contents)[:2] == [("error", bad), ("text", " ")]
    assert calls(result.contents) == [("b", {"x": 1})]
    assert errors(result.contents)[0].startswith("llama3_json: ")


def test_python_tag_not_followed_by_json_is_ordinary_text() -> None:
    text = '<|python_tag|>brave_search.call(query="x")'
    assert parse(text) == [("text", text)]


def test_unclosed_object_at_end_of_stream() -> None:
    text = '<|python_tag|>{"name": "f", "parameters": {"a": 1'
    assert parse(text) == [("error", text)]


def test_auto_does_not_treat_bare_json_as_a_call() -> None:
    text = 'As JSON: {"name": "Bob", "parameters": {"age": 3}}'
    assert parse(text, "auto") == [("text", text)]


def test_a_valid_call_after_an_object_that_never_closes() -> None:
    # SGLang: "invalid then valid"; the object cut by the end is kept as error text.
    bad = '{"name": "get_weather", "parameters": {'
    good = '{"name": "get_weather", "parameters": {}}'
    result = TextToolCallParser("llama3_json").parse(bad + good)
    assert calls(result.contents) == [("get_weather", {})]
    assert comparable(result.contents)[0] == ("error", bad)


def test_bare_json_inside_brackets_keeps_the_brackets_as_text() -> None:
    # The block starts at the object, not at the bracket before it.
    text = '[{"name": "f", "parameters": {}}]'
    assert parse(text) == [("text", "["), ("call", "f", {}, "{}", None), ("text", "]")]
    assert_split_invariant(text, "llama3_json")


@pytest.mark.parametrize(
    "text",
    [
        "x" * 300 + "<|python_tag|>",  # the tag ends the text, past index 256
        "<|python_tag|>   ",
        'Try <|python_tag|>brave_search.call(query="x")',
    ],
)
def test_python_tag_without_json_after_it_is_ordinary_text(text: str) -> None:
    assert parse(text) == [("text", text)]


def test_semicolons_that_do_not_separate_two_objects_are_text() -> None:
    a, b = '{"name": "a", "parameters": {}}', '{"name": "b", "parameters": {}}'
    call_a: tuple[object, ...] = ("call", "a", {}, "{}", None)
    call_b: tuple[object, ...] = ("call", "b", {}, "{}", None)
    assert parse(f"{a} ;; {b}") == [call_a, ("text", " ;; "), call_b]
    assert parse(f"<|python_tag|>;{b}") == [("text", "<|python_tag|>;"), call_b]
    assert parse(f"{a};") == [call_a, ("text", ";")]


def test_long_semicolon_separated_calls() -> None:
    # Longer than 256 characters, so offsets are compared by value, not identity.
    a = '{"name": "a", "parameters": {"text": "' + "x" * 300 + '"}}'
    text = f'{a};{{"name": "b", "parameters": {{}}}}'
    assert calls(TextToolCallParser("llama3_json").parse(text).contents) == [
        ("a", {"text": "x" * 300}),
        ("b", {}),
    ]


def test_valid_call_after_an_unclosed_object_may_nest_a_name_key() -> None:
    # The inner {"name": "x"} is tried first and is not a call; the whole object is.
    bad = '{"name": "get_weather", "parameters": {'
    good = '{"name": "b", "parameters": {"who": {"name": "x"}, "pad": "' + "y" * 300 + '"}}'
    result = TextToolCallParser("llama3_json").parse(bad + good)
    assert calls(result.contents) == [("b", {"who": {"name": "x"}, "pad": "y" * 300})]
    assert comparable(result.contents)[0] == ("error", bad)


@pytest.mark.parametrize(
    "after",
    [
        '{"name": "b"}',  # no arguments: not a call in bare JSON
        '{"name": "b", "parameters": {}} done',  # words after it: not the end of the block
    ],
)
def test_unclosed_object_without_a_final_call_is_error_text(after: str) -> None:
    text = '{"name": "a", "parameters": {' + after
    assert parse(text) == [("error", text)]


def test_only_a_semicolon_separates_calls_and_only_a_brace_opens_one() -> None:
    a, b = '{"name": "a", "parameters": {}}', '{"name": "b", "parameters": {}}'
    call_a: tuple[object, ...] = ("call", "a", {}, "{}", None)
    call_b: tuple[object, ...] = ("call", "b", {}, "{}", None)
    assert parse(f"{a}, {b}") == [call_a, ("text", ", "), call_b]
    assert parse(f"{a} x {b}") == [call_a, ("text", " x "), call_b]
    assert parse("<|python_tag|>} x") == [("text", "<|python_tag|>} x")]

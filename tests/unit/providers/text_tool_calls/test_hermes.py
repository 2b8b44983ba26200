"""hermes: research/FORMATS.md §1 examples and the choices that differ from the servers."""

from __future__ import annotations

import pytest

from providers.abstractions.contents import FunctionCallContent, TextContent
from providers.text_tool_calls import TextToolCallParser
from tests.unit.providers.text_tool_calls.helpers import (
    assert_split_invariant,
    calls,
    comparable,
    errors,
    stream,
    tool,
    visible,
)

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "NYC"}}\n</tool_call>'


def parse(text: str) -> list[tuple[object, ...]]:
    return comparable(TextToolCallParser("hermes").parse(text).contents)


def test_formats_md_example() -> None:
    text = f"Sure, let me check.{CALL}"
    assert parse(text) == [
        ("text", "Sure, let me check."),
        ("call", "get_weather", {"city": "NYC"}, '{"city": "NYC"}', None),
    ]
    assert_split_invariant(text, "hermes")


@pytest.mark.parametrize("between", ["", "\n"])
def test_parallel_calls_back_to_back(between: str) -> None:
    second = '<tool_call>{"name": "get_time", "arguments": {"tz": "UTC"}}</tool_call>'
    result = TextToolCallParser("hermes").parse(CALL + between + second)
    assert calls(result.contents) == [("get_weather", {"city": "NYC"}), ("get_time", {"tz": "UTC"})]
    assert result.content == between
    assert_split_invariant(CALL + between + second, "hermes")


def test_boolean_arguments_regression_19056() -> None:
    text = '<tool_call>{"name": "toggle", "arguments": {"trigger": true}}</tool_call>'
    (call,) = TextToolCallParser("hermes").parse(text).tool_calls
    assert call.arguments == {"trigger": True}
    assert call.raw_arguments == '{"trigger": true}'
    for interval in (1, 2, 5):
        deltas = [text[i : i + interval] for i in range(0, len(text), interval)]
        assert comparable(stream(TextToolCallParser("hermes"), deltas)) == parse(text)


def test_whole_call_in_one_delta_with_text() -> None:
    parser = TextToolCallParser("hermes")
    out = parser.feed(f"Hi!{CALL}")
    assert visible(out) == "Hi!"
    assert calls(out) == [("get_weather", {"city": "NYC"})]
    assert parser.finish() == []


def test_parameters_key_is_accepted() -> None:
    text = '<tool_call>{"name": "f", "parameters": {"a": 1}}</tool_call>'
    assert calls(TextToolCallParser("hermes").parse(text).contents) == [("f", {"a": 1})]


def test_raw_arguments_are_the_models_own_text() -> None:
    text = '<tool_call>{"name": "f", "arguments": {"a" :  1,\n "b": "é"} }</tool_call>'
    (call,) = TextToolCallParser("hermes").parse(text).tool_calls
    assert call.raw_arguments == '{"a" :  1,\n "b": "é"}'
    assert call.arguments == {"a": 1, "b": "é"}
    assert call.raw == text


def test_prefix_kept_verbatim_including_trailing_space() -> None:
    # SGLang strips the prefix; vLLM keeps it. Nothing is rewritten here.
    result = TextToolCallParser("hermes").parse(f"I will check the weather for you. {CALL}")
    assert result.content == "I will check the weather for you. "


def test_text_after_and_between_blocks_is_kept() -> None:
    # vLLM drops everything after the first tag; here nothing is dropped.
    text = f"before {CALL} between {CALL} after"
    result = TextToolCallParser("hermes").parse(text)
    assert result.content == "before  between  after"
    assert len(result.tool_calls) == 2


def test_arguments_double_encoded_as_a_string() -> None:
    text = '<tool_call>{"name": "f", "arguments": "{\\"a\\": 1}"}</tool_call>'
    (call,) = TextToolCallParser("hermes").parse(text).tool_calls
    assert call.arguments == {"a": 1}
    assert call.raw_arguments == '{"a": 1}'


def test_missing_arguments_mean_no_arguments() -> None:
    (call,) = (
        TextToolCallParser("hermes").parse('<tool_call>{"name": "refresh"}</tool_call>').tool_calls
    )
    assert (call.arguments, call.raw_arguments) == ({}, "{}")


def test_several_objects_in_one_block() -> None:
    text = '<tool_call>{"name": "a", "arguments": {}}\n{"name": "b", "arguments": {}}</tool_call>'
    assert [n for n, _ in calls(TextToolCallParser("hermes").parse(text).contents)] == ["a", "b"]


@pytest.mark.parametrize(
    ("block", "reason"),
    [
        ('<tool_call>{"name": "f", "arguments": {"a": }</tool_call>', "not valid JSON"),
        ('<tool_call>{"arguments": {}}</tool_call>', '"name"'),
        ('<tool_call>{"name": "f", "arguments": [1]}</tool_call>', "not a JSON object"),
        ('<tool_call>{"name": "f", "arguments": {}} trailing</tool_call>', "JSON"),
        ("<tool_call>\n</tool_call>", "empty"),
    ],
)
def test_bad_block_is_error_text_exactly(block: str, reason: str) -> None:
    text = f"a {block} b"
    result = TextToolCallParser("hermes").parse(text)
    assert comparable(result.contents) == [("text", "a "), ("error", block), ("text", " b")]
    (why,) = errors(result.contents)
    assert reason in why and why.startswith("hermes: ")
    assert visible(result.contents) == text
    assert_split_invariant(text, "hermes")


def test_one_bad_block_does_not_sink_the_others() -> None:
    # vLLM is all-or-nothing here (the whole output becomes content).
    bad = '<tool_call>{"name": "f", "arguments": {oops}}</tool_call>'
    result = TextToolCallParser("hermes").parse(bad + CALL)
    assert comparable(result.contents)[0] == ("error", bad)
    assert calls(result.contents) == [("get_weather", {"city": "NYC"})]


def test_unclosed_block_before_the_next_one() -> None:
    unclosed = '<tool_call>{"name": "a", "arguments": {}'
    result = TextToolCallParser("hermes").parse(unclosed + CALL)
    assert comparable(result.contents)[0] == ("error", unclosed)
    assert calls(result.contents) == [("get_weather", {"city": "NYC"})]
    assert_split_invariant(unclosed + CALL, "hermes")


@pytest.mark.parametrize(
    "tail",
    ['<tool_call>{"name": "f", "arguments": {"a": 1', '<tool_call>{"name": "f", "arguments": {}}'],
)
def test_unclosed_at_end_of_stream_is_a_call_with_error(tail: str) -> None:
    # Surfaced as vLLM does (test_hermes_parser_non_streaming_tool_call_until_eos), but a
    # stream cut before </tool_call> is not trusted to hold a call: never executable.
    parser = TextToolCallParser("hermes")
    assert parser.feed("ok " + tail) == [TextContent("ok ")]
    (call,) = parser.finish()
    assert isinstance(call, FunctionCallContent)
    assert call.name == "f"
    assert call.raw == tail
    assert call.error is not None and "not closed at end of stream" in call.error


def test_call_of_a_tool_not_offered_carries_an_error() -> None:
    parser = TextToolCallParser("hermes", tools=[tool("get_time"), tool("get_date")])
    (call,) = parser.parse(CALL).tool_calls
    assert isinstance(call, FunctionCallContent)
    assert call.arguments == {"city": "NYC"}
    assert call.error == "tool get_weather was not offered; offered: get_time, get_date"


def test_offered_tool_has_no_error() -> None:
    (call,) = TextToolCallParser("hermes", tools=[tool("get_weather")]).parse(CALL).tool_calls
    assert call.error is None
    assert call.call_id.startswith("call_") and len(call.call_id) == 29


@pytest.mark.parametrize(
    "arguments",
    ['{"n": ' + "9" * 5000 + "}", "[" * 5000 + "]" * 5000],
    ids=["integer-over-the-conversion-limit", "deep-nesting"],
)
def test_hostile_json_is_error_text_not_an_exception(arguments: str) -> None:
    block = f'<tool_call>{{"name": "f", "arguments": {arguments}}}</tool_call>'
    assert comparable(TextToolCallParser("hermes").parse(block).contents) == [("error", block)]


def test_a_comma_separated_list_of_objects_in_one_block() -> None:
    text = (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "get_tourist_attractions", "arguments": {"city": "London"}}</tool_call>'
    )
    assert calls(TextToolCallParser("hermes").parse(text).contents) == [
        ("get_weather", {"city": "Paris"}),
        ("get_tourist_attractions", {"city": "London"}),
    ]
    assert_split_invariant(text, "hermes")


@pytest.mark.parametrize("gap", [",", ", ", " ,\n ", "\n,"])
@pytest.mark.parametrize("pad", [0, 1, 300])
def test_several_objects_in_one_block_at_any_offset(gap: str, pad: int) -> None:
    # Commas at odd and even offsets, with and without spaces, and bodies past 256 characters
    # (a window a scan could wrongly stop at).
    first = '{"name": "get_weather", "arguments": {"city": "' + "N" * (1 + pad) + '"}}'
    second = '{"name": "get_time", "arguments": {"tz": "UTC"}}'
    text = f"<tool_call>{first}{gap}{second}</tool_call>"
    result = TextToolCallParser("hermes").parse(text)
    assert calls(result.contents) == [
        ("get_weather", {"city": "N" * (1 + pad)}),
        ("get_time", {"tz": "UTC"}),
    ]
    assert result.content == ""
    assert_split_invariant(text, "hermes")


@pytest.mark.parametrize("tail", [", x", "}", "{"])
def test_a_block_with_junk_after_its_objects_is_surfaced(tail: str) -> None:
    text = '<tool_call>{"name": "get_time", "arguments": {}}' + tail + "</tool_call>"
    assert errors(TextToolCallParser("hermes").parse(text).contents)


def test_a_block_of_only_whitespace_past_256_characters_is_error_text() -> None:
    block = "<tool_call>" + " \n" * 200 + "</tool_call>"
    contents = TextToolCallParser("hermes").parse(block).contents
    assert comparable(contents) == [("error", block)]
    assert errors(contents) == ["hermes: empty <tool_call> block"]

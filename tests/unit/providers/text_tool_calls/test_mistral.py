"""mistral: research/FORMATS.md §3 — pre-v11 arrays and v11+ ``name{args}`` calls."""

from __future__ import annotations

import pytest

from providers.abstractions.contents import FunctionCallContent
from providers.text_tool_calls import TextToolCallParser
from tests.unit.providers.text_tool_calls.helpers import (
    assert_split_invariant,
    calls,
    comparable,
    errors,
    visible,
)


def parse(text: str) -> list[tuple[object, ...]]:
    return comparable(TextToolCallParser("mistral").parse(text).contents)


def test_pre_v11_array_with_free_key_order() -> None:
    text = (
        'Let me check.[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}},'
        ' {"arguments": {"tz": "UTC"}, "name": "get_time"}]'
    )
    assert parse(text) == [
        ("text", "Let me check."),
        ("call", "get_weather", {"city": "Paris"}, '{"city": "Paris"}', None),
        ("call", "get_time", {"tz": "UTC"}, '{"tz": "UTC"}', None),
    ]
    assert_split_invariant(text, "mistral")


def test_text_after_the_array_is_kept() -> None:
    # vLLM raw-decodes and ignores trailing garbage; it stays visible here.
    text = '[TOOL_CALLS] [{"name": "f", "arguments": {}}] trailing'
    assert parse(text)[-1] == ("text", " trailing")


def test_v11_calls_repeat_the_token() -> None:
    text = 'hi{hi[TOOL_CALLS]get_weather{"city": "Paris"}[TOOL_CALLS]get_time{"tz": "UTC"}'
    assert parse(text) == [
        ("text", "hi{hi"),  # content before the token is verbatim
        ("call", "get_weather", {"city": "Paris"}, '{"city": "Paris"}', None),
        ("call", "get_time", {"tz": "UTC"}, '{"tz": "UTC"}', None),
    ]
    assert_split_invariant(text, "mistral")


def test_v11_with_args_token() -> None:
    text = '[TOOL_CALLS]get_weather[ARGS]{"city": "Beijing"}'
    assert calls(TextToolCallParser("mistral").parse(text).contents) == [
        ("get_weather", {"city": "Beijing"})
    ]
    assert_split_invariant(text, "mistral")


def test_single_object_after_the_token() -> None:
    text = '[TOOL_CALLS]{"name": "f", "arguments": {"a": 1}}'
    assert calls(TextToolCallParser("mistral").parse(text).contents) == [("f", {"a": 1})]


def test_brackets_inside_string_arguments() -> None:
    code = '```python\\nx = [1, {\\"a\\": \\"]}\\"}]\\n```'
    text = f'[TOOL_CALLS]run{{"code": "{code}"}} done'
    result = TextToolCallParser("mistral").parse(text)
    assert calls(result.contents) == [("run", {"code": '```python\nx = [1, {"a": "]}"}]\n```'})]
    assert result.content == " done"
    assert_split_invariant(text, "mistral")


def test_truncated_arguments_are_a_call_with_error() -> None:
    # vLLM returns the cut text as the call's arguments; here it is surfaced, not executable.
    text = '[TOOL_CALLS]get_weather{"city": "Par'
    (call,) = TextToolCallParser("mistral").parse(text).contents
    assert isinstance(call, FunctionCallContent)
    assert (call.name, call.arguments, call.raw_arguments) == ("get_weather", {}, '{"city": "Par')
    assert call.error is not None and "not closed at end of stream" in call.error
    assert_split_invariant(text, "mistral")


def test_invalid_arguments_are_error_text() -> None:
    text = "[TOOL_CALLS]f{city: Paris}"
    result = TextToolCallParser("mistral").parse(text)
    assert comparable(result.contents) == [("error", text)]
    assert "not valid JSON" in errors(result.contents)[0]


def test_name_without_arguments_at_end_of_stream() -> None:
    # vLLM: tools_called, no call, no content. Here the call is surfaced, not executable.
    (call,) = TextToolCallParser("mistral").parse("[TOOL_CALLS]toolname_no_args").contents
    assert isinstance(call, FunctionCallContent)
    assert (call.name, call.arguments, call.raw_arguments) == ("toolname_no_args", {}, "")
    assert call.error is not None


def test_one_word_of_junk_before_a_pre_v11_array() -> None:
    # vLLM's regex fallback finds the array; the junk is kept as text.
    text = '[TOOL_CALLS]  junk [{"name": "add", "arguments":{"a": 1, "b": 2}}] trail'
    result = TextToolCallParser("mistral").parse(text)
    assert calls(result.contents) == [("add", {"a": 1, "b": 2})]
    assert result.content == "junk  trail"
    assert_split_invariant(text, "mistral")


def test_content_before_the_token_and_the_array() -> None:
    text = 'Hello[TOOL_CALLS] [{"name": "add", "arguments":{"a": 1, "b": 2}}]'
    result = TextToolCallParser("mistral").parse(text)
    assert calls(result.contents) == [("add", {"a": 1, "b": 2})]
    assert result.content == "Hello"


def test_array_that_is_not_json() -> None:
    text = "[TOOL_CALLS] [not valid json]"
    assert parse(text) == [("error", text)]


def test_words_after_the_token_are_flagged_and_kept() -> None:
    # vLLM: no call, content "not json at all"; the token is markup.
    result = TextToolCallParser("mistral").parse("[TOOL_CALLS] not json at all")
    assert visible(result.contents) == " not json at all"
    assert result.tool_calls == []
    assert errors(result.contents)


@pytest.mark.parametrize("text", ["[TOOL_CALLS] !", "[TOOL_CALLS]", "say [TOOL_CALLS]\n"])
def test_token_not_followed_by_a_call_is_ordinary_text(text: str) -> None:
    assert parse(text) == [("text", text)]
    assert_split_invariant(text, "mistral")


def test_long_prose_ending_with_the_token_is_ordinary_text() -> None:
    # The tracker starts past the token, at the very end of the text (an index above 256).
    text = "x" * 300 + "[TOOL_CALLS]"
    assert parse(text) == [("text", text)]


def test_stops_after_prose_are_placed_in_the_block() -> None:
    # Where a rejected or malformed block ends counts from the token, not from the text.
    assert parse("Hello [TOOL_CALLS] !") == [("text", "Hello [TOOL_CALLS] !")]
    assert parse("Hi [TOOL_CALLS] not json") == [
        ("text", "Hi "),
        ("error", " not "),
        ("text", "json"),
    ]


def test_junk_before_an_array_that_opens_with_a_space() -> None:
    # ``[ {`` after a word is still the array of vLLM's regex fallback, not ``[ARGS]``.
    text = '[TOOL_CALLS] junk [ {"name": "add", "arguments": {"a": 1}}] trail'
    assert parse(text) == [
        ("text", "junk "),
        ("call", "add", {"a": 1}, '{"a": 1}', None),
        ("text", " trail"),
    ]
    assert_split_invariant(text, "mistral")


def test_args_token_cut_short_before_the_arguments_is_error_text() -> None:
    text = '[TOOL_CALLS]f[AR{"a": 1}'
    assert parse(text) == [("error", "[TOOL_CALLS]f[AR"), ("text", '{"a": 1}')]
    assert_split_invariant(text, "mistral")


@pytest.mark.parametrize("text", ["[TOOL_CALLS] }", "[TOOL_CALLS]|x", "[TOOL_CALLS] ~"])
def test_token_followed_by_a_symbol_is_ordinary_text(text: str) -> None:
    assert parse(text) == [("text", text)]


def test_unclosed_call_with_args_token_keeps_only_the_name() -> None:
    text = '[TOOL_CALLS]get_weather [ARGS] {"city": "Par'
    (call,) = TextToolCallParser("mistral").parse(text).contents
    assert isinstance(call, FunctionCallContent)
    assert (call.name, call.raw_arguments) == ("get_weather", '{"city": "Par')
    assert call.error is not None

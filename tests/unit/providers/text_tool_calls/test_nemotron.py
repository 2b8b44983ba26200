"""nemotron: ``<TOOLCALL>[…]</TOOLCALL>``, facts from vLLM's nemotron_json parser tests."""

from __future__ import annotations

import pytest

from providers.abstractions.contents import FunctionCallContent, TextReasoningContent
from providers.reasoning import ReasoningParser
from providers.text_tool_calls import TextToolCallParser
from tests.unit.providers.text_tool_calls.helpers import (
    assert_split_invariant,
    calls,
    comparable,
    tool,
)

WEATHER = '{"name": "get_weather", "arguments": {"city": "Tokyo", "unit": "celsius"}}'
TWO = (
    '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Tokyo"}}, '
    '{"name": "lookup_timezone", "arguments": {"city": "Tokyo"}}]</TOOLCALL>'
)


def test_an_array_after_content() -> None:
    text = f"Let me check that.<TOOLCALL>[{WEATHER}]</TOOLCALL>"
    result = TextToolCallParser("nemotron").parse(text)
    assert result.content == "Let me check that."
    (call,) = result.tool_calls
    assert (call.name, call.arguments) == ("get_weather", {"city": "Tokyo", "unit": "celsius"})
    assert call.raw_arguments == '{"city": "Tokyo", "unit": "celsius"}'
    assert_split_invariant(text, "nemotron")


@pytest.mark.parametrize("fmt", ["nemotron", "auto"])
def test_several_calls_and_a_lone_object(fmt: str) -> None:
    assert calls(TextToolCallParser(fmt).parse(TWO).contents) == [
        ("get_weather", {"city": "Tokyo"}),
        ("lookup_timezone", {"city": "Tokyo"}),
    ]
    single = '<TOOLCALL>{"name": "lookup", "arguments": {"query": "vllm"}}</TOOLCALL>'
    assert calls(TextToolCallParser(fmt).parse(single).contents) == [("lookup", {"query": "vllm"})]
    assert_split_invariant(TWO, fmt)


def test_arguments_given_as_a_json_string() -> None:
    text = (
        '<TOOLCALL>[{"name": "run_query", "arguments": "{\\"sql\\": \\"select 1\\"}"}]</TOOLCALL>'
    )
    (call,) = TextToolCallParser("nemotron").parse(text).tool_calls
    assert (call.name, call.arguments) == ("run_query", {"sql": "select 1"})


def test_nested_json_arguments() -> None:
    text = (
        '<TOOLCALL>[{"name": "search", "arguments": {"filters": {"city": "Tokyo"}, '
        '"items": [{"name": "rain", "value": true}]}}]</TOOLCALL>'
    )
    (call,) = TextToolCallParser("nemotron").parse(text).tool_calls
    assert call.arguments == {
        "filters": {"city": "Tokyo"},
        "items": [{"name": "rain", "value": True}],
    }


def test_malformed_json_is_returned_whole() -> None:
    text = '<TOOLCALL>[{"name": "broken", "arguments": {}</TOOLCALL>'
    result = TextToolCallParser("nemotron").parse(text)
    assert comparable(result.contents) == [("error", text)]


def test_think_before_the_call_is_text_here_and_reasoning_for_the_reasoning_parser() -> None:
    think = "<think>\nI need the weather for Tokyo.\n</think>\n"
    text = think + '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]</TOOLCALL>'
    result = TextToolCallParser("auto").parse(text)
    assert result.content == think
    assert calls(result.contents) == [("get_weather", {"city": "Tokyo"})]
    split = ReasoningParser("auto").parse(text).contents
    assert split[0] == TextReasoningContent("\nI need the weather for Tokyo.\n")


def test_a_call_cut_by_the_end_of_the_stream_is_surfaced_with_error() -> None:
    text = '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Tok'
    (call,) = TextToolCallParser("nemotron").parse(text).contents
    assert isinstance(call, FunctionCallContent)
    assert (call.name, call.raw_arguments) == ("get_weather", '{"city": "Tok')
    assert call.error is not None


def test_a_call_of_a_tool_not_offered_is_not_executable() -> None:
    (call,) = (
        TextToolCallParser("nemotron", [tool("other")])
        .parse(f"<TOOLCALL>[{WEATHER}]</TOOLCALL>")
        .tool_calls
    )
    assert call.error is not None and "not offered" in call.error


def test_the_tag_in_prose_is_text() -> None:
    text = "Use the <TOOLCALL> tag to call tools."
    assert comparable(TextToolCallParser("nemotron").parse(text).contents) == [("text", text)]
    assert_split_invariant(text, "nemotron")


@pytest.mark.parametrize("after", [" and more", "]", ', {"name": "x"}'])
def test_text_after_the_calls_before_the_closing_tag_makes_the_block_error_text(
    after: str,
) -> None:
    text = f"<TOOLCALL>[{WEATHER}]{after}</TOOLCALL>"
    result = TextToolCallParser("nemotron").parse(text)
    assert comparable(result.contents) == [("error", text)]


def test_a_block_longer_than_a_few_hundred_characters_parses() -> None:
    # Offsets past 256 are distinct int objects: the end check must compare values.
    city = "Tokyo " * 60
    text = f'<TOOLCALL>[{{"name": "get_weather", "arguments": {{"city": "{city}"}}}}]  </TOOLCALL>'
    assert len(text) > 300
    assert calls(TextToolCallParser("nemotron").parse(text).contents) == [
        ("get_weather", {"city": city})
    ]


def test_every_call_keeps_the_whole_block_as_raw() -> None:
    first, second = TextToolCallParser("nemotron").parse(f"Sure.{TWO}").tool_calls
    assert first.raw == TWO
    assert second.raw == TWO

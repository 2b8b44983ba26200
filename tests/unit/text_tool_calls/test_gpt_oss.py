"""gpt_oss: harmony messages (research/FORMATS.md §6.4): calls, preambles, what is left alone."""

from __future__ import annotations

import pytest

from providers.text_tool_calls import TextToolCallParser
from tests.unit.text_tool_calls.helpers import (
    assert_split_invariant,
    calls,
    comparable,
    errors,
)

ANALYSIS = "<|channel|>analysis<|message|>Need to use function get_weather.<|end|>"
CHANNEL_ORDER = (
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    '<|message|>{"location":"San Francisco"}<|call|>'
)
ROLE_ORDER = (
    "<|start|>assistant to=functions.get_weather<|channel|>commentary<|constrain|>json"
    '<|message|>{"location": "Tokyo"}<|call|>'
)


def parse(text: str, fmt: str = "gpt_oss") -> list[tuple[object, ...]]:
    return comparable(TextToolCallParser(fmt).parse(text).contents)


def test_formats_md_example_leaves_analysis_alone() -> None:
    # Reasoning is ReasoningParser's job; this parser copies other messages verbatim.
    assert parse(ANALYSIS + CHANNEL_ORDER) == [
        ("text", ANALYSIS),
        ("call", "get_weather", {"location": "San Francisco"}, '{"location":"San Francisco"}',
         None),
    ]  # fmt: skip
    assert_split_invariant(ANALYSIS + CHANNEL_ORDER, "gpt_oss")
    assert_split_invariant(ANALYSIS + CHANNEL_ORDER, "auto")


def test_recipient_in_the_role_header() -> None:
    assert calls(TextToolCallParser("gpt_oss").parse(ROLE_ORDER).contents) == [
        ("get_weather", {"location": "Tokyo"})
    ]
    assert_split_invariant(ROLE_ORDER, "gpt_oss")


def test_call_cut_by_end_of_stream_is_complete() -> None:
    # <|call|> is a stop token the server does not return.
    text = ROLE_ORDER.removesuffix("<|call|>")
    assert calls(TextToolCallParser("gpt_oss").parse(text).contents) == [
        ("get_weather", {"location": "Tokyo"})
    ]


def test_first_message_starts_at_the_channel() -> None:
    text = '<|channel|>commentary to=functions.f <|constrain|>json<|message|>{"a": 1}<|call|>'
    assert calls(TextToolCallParser("gpt_oss").parse(text).contents) == [("f", {"a": 1})]


@pytest.mark.parametrize(
    ("recipient", "name"),
    [("get_current_weather", "get_current_weather"), ("math.sum", "math.sum")],
)
def test_bare_and_dotted_recipients_are_kept(recipient: str, name: str) -> None:
    text = f"<|channel|>commentary to={recipient}<|message|>{{}}<|call|>"
    assert calls(TextToolCallParser("gpt_oss").parse(text).contents) == [(name, {})]


def test_analysis_channel_call() -> None:
    text = "<|channel|>analysis to=functions.f<|message|>{}<|call|>"
    assert calls(TextToolCallParser("gpt_oss").parse(text).contents) == [("f", {})]


def test_preamble_becomes_visible_text_without_markup() -> None:
    text = "<|channel|>commentary<|message|>Let me look that up.<|end|>" + ROLE_ORDER
    assert parse(text)[0] == ("text", "Let me look that up.")
    assert_split_invariant(text, "gpt_oss")


@pytest.mark.parametrize(
    "message",
    [
        "<|start|>assistant<|channel|>commentary to=browser.search<|message|>{}<|call|>",
        '<|start|>functions.get_weather to=assistant<|message|>{"sunny": true}<|end|>',
        "<|start|>assistant<|channel|>final<|message|>The answer is 42.<|return|>",
        "<|channel|>final<|message|>The answer",
        '<|channel|>final {"answer": "hi"}<|return|>',  # malformed: no <|message|>
    ],
)
def test_messages_that_are_not_calls_are_left_verbatim(message: str) -> None:
    assert parse(message) == [("text", message)]
    assert_split_invariant(message, "gpt_oss")


def test_non_call_body_streams_before_the_message_ends() -> None:
    parser = TextToolCallParser("gpt_oss")
    out = parser.feed("<|channel|>final<|message|>The ans")
    assert comparable(out) == [("text", "<|channel|>final<|message|>The ans")]


def test_raw_arguments_are_the_body_text() -> None:
    text = '<|channel|>commentary to=functions.f<|message|>{\n"location": "Tokyo"\n}<|call|>'
    (call,) = TextToolCallParser("gpt_oss").parse(text).tool_calls
    assert call.raw_arguments == '{\n"location": "Tokyo"\n}'
    assert call.arguments == {"location": "Tokyo"}


def test_empty_body_means_no_arguments() -> None:
    (call,) = (
        TextToolCallParser("gpt_oss")
        .parse("<|channel|>commentary to=functions.f<|message|><|call|>")
        .tool_calls
    )
    assert (call.arguments, call.raw_arguments) == ({}, "{}")


@pytest.mark.parametrize(
    "text",
    [
        '<|channel|>commentary to=functions.f<|message|>"foo"<|call|>',
        '<|channel|>commentary to=functions.f<|message|>{"location": "To',  # truncated
    ],
)
def test_bodies_that_are_not_a_json_object_are_error_text(text: str) -> None:
    result = TextToolCallParser("gpt_oss").parse(text)
    assert comparable(result.contents) == [("error", text)]
    assert errors(result.contents)[0].startswith("gpt_oss: ")


def test_a_header_without_message_token_is_given_up_early() -> None:
    text = "<|channel|>" + "x" * 600 + " to=functions.f<|message|>{}<|call|>"
    result = TextToolCallParser("gpt_oss").parse(text)
    assert comparable(result.contents) == [("text", text)]
    parser = TextToolCallParser("gpt_oss")
    assert comparable(parser.feed(text[:700])) == [("text", text[:700])]  # not held to the end


def test_a_new_message_inside_a_header_ends_it() -> None:
    text = (
        "<|channel|>commentary<|start|>assistant<|channel|>commentary to=functions.f<|message|>{}"
    )
    result = TextToolCallParser("gpt_oss").parse(text)
    assert comparable(result.contents)[0] == ("text", "<|channel|>commentary")
    assert calls(result.contents) == [("f", {})]
    assert_split_invariant(text, "gpt_oss")

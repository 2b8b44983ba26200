"""gpt_oss: harmony messages (research/FORMATS.md §6.4): calls, preambles, what is left alone."""

from __future__ import annotations

import pytest

from providers.text_tool_calls import TextToolCallParser
from providers.text_tool_calls.formats.gpt_oss import GptOss
from providers.text_tool_calls.protocol import PART_KEY
from providers.text_tool_calls.tools import ToolBook
from tests.unit.providers.text_tool_calls.helpers import (
    assert_split_invariant,
    calls,
    comparable,
    stream,
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


def test_formats_md_example_analysis_is_reasoning() -> None:
    assert parse(ANALYSIS + CHANNEL_ORDER) == [
        ("reasoning", "Need to use function get_weather."),
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
        '<|channel|>final {"answer": "hi"}<|return|>',  # malformed: no <|message|>
        "<|channel|>unknown<|message|>x<|end|>",
    ],
)
def test_messages_that_are_not_ours_are_left_verbatim(message: str) -> None:
    assert parse(message) == [("text", message)]
    assert_split_invariant(message, "gpt_oss")


@pytest.mark.parametrize(
    ("message", "text"),
    [
        ('<|start|>functions.get_weather to=assistant<|message|>{"sunny": true}<|end|>',
         '{"sunny": true}'),
        ("<|start|>functions.f to=assistant<|channel|>commentary<|message|>20 C<|end|>", "20 C"),
        ("<|start|>assistant<|channel|>final<|message|>The answer is 42.<|return|>",
         "The answer is 42."),
        ("<|channel|>final<|message|>The answer", "The answer"),
        ("<|channel|>final<|constrain|>ReplyAction <|message|>The rest", "The rest"),
    ],
)  # fmt: skip
def test_final_and_tool_responses_give_their_body(message: str, text: str) -> None:
    assert parse(message) == [("text", text)]
    assert_split_invariant(message, "gpt_oss")


def test_prompt_messages_and_the_trailing_header_are_dropped() -> None:
    # A whole rendered conversation: the servers take only the assistant's messages.
    text = (
        "<|start|>system<|message|>You are ChatGPT.<|end|>"
        "<|start|>developer<|message|># Instructions\n\nTalk like a pirate!<|end|>"
        "<|start|>user<|message|>Arrr, how be you?<|end|>"
        "<|start|>assistant<|channel|>final<|message|>This is a test<|end|><|start|>assistant"
    )
    assert parse(text) == [("text", "This is a test")]
    assert_split_invariant(text, "gpt_oss")


def test_preambles_and_final_are_joined_by_a_line_break() -> None:
    text = (
        "<|channel|>analysis<|message|>Think.<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Let me look that up.<|end|>"
        + CHANNEL_ORDER
        + "<|start|>assistant<|channel|>final<|message|>It is sunny.<|return|>"
    )
    result = parse(text)
    assert result[0] == ("reasoning", "Think.")
    assert result[1] == ("text", "Let me look that up.")
    assert result[2][:2] == ("call", "get_weather")
    assert result[3] == ("text", "\nIt is sunny.")
    assert_split_invariant(text, "gpt_oss")


def test_text_around_messages_is_kept() -> None:
    text = (
        "Some text <|channel|>analysis<|message|>reasoning<|end|> more text "
        "<|start|>assistant<|channel|>final<|message|>answer<|return|> trailing text"
    )
    assert parse(text) == [
        ("text", "Some text "),
        ("reasoning", "reasoning"),
        ("text", " more text answer trailing text"),
    ]


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
    assert (call.arguments, call.raw_arguments, call.error) == ({}, "", None)  # vLLM: ""


def test_a_body_that_is_not_a_json_object_is_a_call_with_error() -> None:
    # vLLM returns such a call with the raw body as arguments; it must not be executable.
    text = "<|channel|>commentary to=functions.f<|message|>foo<|call|>"
    (call,) = TextToolCallParser("gpt_oss").parse(text).tool_calls
    assert (call.name, call.arguments, call.raw_arguments) == ("f", {}, "foo")
    assert call.error is not None and call.error.startswith("gpt_oss: not valid JSON")


def test_a_call_open_at_end_of_stream_keeps_its_partial_arguments_with_error() -> None:
    text = '<|channel|>commentary to=functions.f<|message|>{"location": "To'
    (call,) = TextToolCallParser("gpt_oss").parse(text).tool_calls
    assert call.raw_arguments == '{"location": "To'
    assert call.error is not None and "not closed at end of stream" in call.error
    assert_split_invariant(text, "gpt_oss")


def test_an_invalid_call_among_valid_ones_is_surfaced() -> None:
    bad = "<|start|>assistant to=functions.bad<|channel|>commentary<|message|>{oops<|call|>"
    result = TextToolCallParser("gpt_oss").parse(CHANNEL_ORDER + bad + ROLE_ORDER).tool_calls
    assert [(c.name, c.error is None) for c in result] == [
        ("get_weather", True),
        ("bad", False),
        ("get_weather", True),
    ]


def test_a_call_of_a_tool_not_offered_is_not_executable() -> None:
    tools = [{"type": "function", "function": {"name": "other"}}]
    (call,) = TextToolCallParser("gpt_oss", tools).parse(ROLE_ORDER).tool_calls
    assert call.error is not None and "not offered" in call.error


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


@pytest.mark.parametrize("prefix", ["", "<|start|>assistant"])
def test_a_repeated_terminator_is_markup_of_the_message(prefix: str) -> None:
    # SGLang's abbreviated-header test ends the call with <|call|><|call|>.
    text = (
        prefix + "<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>"
        '{"city":"Paris"}<|call|><|call|>'
    )
    result = TextToolCallParser("gpt_oss").parse(text)
    assert calls(result.contents) == [("get_weather", {"city": "Paris"})]
    assert result.content == ""
    assert_split_invariant(text, "gpt_oss")
    assert_split_invariant(text + "<|ca", "gpt_oss")


def test_a_start_without_role_is_the_assistant() -> None:
    text = (
        "<|start|><|channel|>analysis<|message|>thinking hard<|end|>"
        "<|channel|>final<|message|>the answer<|end|>"
    )
    assert parse(text) == [("reasoning", "thinking hard"), ("text", "the answer")]


@pytest.mark.parametrize(
    "message",
    [
        '<|channel|>commentary to=functions.f {"a": 1}<|call|>',  # no <|message|> before <|call|>
        "<|channel|>final The answer.<|end|>",
        "<|channel|>commentary<|end|> to=functions.f<|message|>{}",  # the header ended first
        "<|channel|>advice<|message|>x<|end|>",  # an unknown channel sorting before "analysis"
        "<|start|>assistant<|message|>no channel<|end|>",
        "<|start|>assistant<|end|>",  # a <|start|> header without body stays text
        "<|start|>" + "x" * 600 + "<|message|>{}",
    ],
)
def test_more_messages_that_are_not_ours_are_left_verbatim(message: str) -> None:
    assert parse(message) == [("text", message)]


def test_a_tool_response_of_any_role_name_gives_its_body() -> None:
    assert parse("<|start|>analytics.run to=assistant<|message|>42<|end|>") == [("text", "42")]


def test_the_header_bound_holds_across_deltas() -> None:
    head, rest = "<|channel|>" + "x" * 300, "x" * 300 + " to=functions.f<|message|>{}<|call|>"
    result = stream(TextToolCallParser("gpt_oss"), [head, rest])
    assert comparable(result) == [("text", head + rest)]


@pytest.mark.parametrize(("size", "is_call"), [(512, True), (513, False)])
def test_the_header_bound_is_512_characters_up_to_the_message_token(
    size: int, is_call: bool
) -> None:
    head = "<|channel|>commentary to=functions.f "
    text = head + " " * (size - len(head) - len("<|message|>")) + "<|message|>{}<|call|>"
    for deltas in ([text], [text[:300], text[300:]]):
        got = calls(stream(TextToolCallParser("gpt_oss"), deltas))
        assert got == ([("f", {})] if is_call else [])


def test_a_repeated_terminator_is_taken_even_with_text_after_it() -> None:
    text = "<|channel|>commentary to=functions.f<|message|>{}<|call|><|call|>" + " Done." * 20
    result = TextToolCallParser("gpt_oss").parse(text)
    assert calls(result.contents) == [("f", {})]
    assert result.content == " Done." * 20


def test_a_message_part_is_marked_for_joining() -> None:
    (part,) = GptOss().parse_block("<|channel|>final<|message|>hi<|end|>", ToolBook(None))
    assert part.additional_properties == {PART_KEY: True}

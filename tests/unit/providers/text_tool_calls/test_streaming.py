"""The shared scanner: what is released when, split markers, and nothing lost or duplicated."""

from __future__ import annotations

import random

import pytest

from providers.abstractions.contents import FunctionCallContent, TextContent
from providers.text_tool_calls import TextToolCallParser
from tests.unit.providers.text_tool_calls.helpers import (
    assert_split_invariant,
    calls,
    comparable,
    cut,
    errors,
    stream,
    visible,
)

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
DS = "<\uff5ctool\u2581calls\u2581begin\uff5c>"


def test_ordinary_text_is_released_at_once() -> None:
    parser = TextToolCallParser()
    assert parser.feed("Hello ") == [TextContent("Hello ")]
    assert parser.feed("world.") == [TextContent("world.")]
    assert parser.finish() == []


@pytest.mark.parametrize(
    ("delta", "released", "held"),
    [
        ("see <tool_", "see ", "<tool_"),
        ("see [TOOL_", "see ", "[TOOL_"),
        ("see <|", "see ", "<|"),
        ("see <", "see ", "<"),
        ("see " + DS[:3], "see ", DS[:3]),
        ("a < b", "a < b", ""),  # not a marker prefix any more
        ("1 <tool_x", "1 <tool_x", ""),
    ],
)
def test_only_a_possible_marker_prefix_is_held(delta: str, released: str, held: str) -> None:
    parser = TextToolCallParser()
    assert visible(parser.feed(delta)) == released
    assert visible(parser.finish()) == held  # released as text at the end


def test_partial_closing_tag_is_not_lost() -> None:
    # SGLang regression test_partial_end_tag_buffer_loss_bug: "</" then "answer".
    assert visible(stream(TextToolCallParser(), ["</", "answer"])) == "</answer"


def test_marker_split_across_many_deltas() -> None:
    parser = TextToolCallParser()
    out = []
    for char in "Sure. " + CALL[:-1]:
        out.extend(parser.feed(char))
    assert comparable(out) == [("text", "Sure. ")]  # the call waits for its closing tag
    assert calls(parser.feed(CALL[-1])) == [("get_weather", {"city": "Paris"})]
    assert parser.finish() == []


def test_text_before_between_and_after_calls_in_order() -> None:
    text = f"Before. {CALL} Between. {CALL} After."
    result = TextToolCallParser().parse(text)
    assert [type(c).__name__ for c in result.contents] == [
        "TextContent",
        "FunctionCallContent",
        "TextContent",
        "FunctionCallContent",
        "TextContent",
    ]
    assert result.content == "Before.  Between.  After."
    assert_split_invariant(text)


def test_parallel_calls_come_out_in_order_as_each_completes() -> None:
    parser = TextToolCallParser()
    first = CALL.replace("Paris", "Rome")
    out = parser.feed(first + CALL[:20])
    assert calls(out) == [("get_weather", {"city": "Rome"})]
    out = parser.feed(CALL[20:])
    assert calls(out) == [("get_weather", {"city": "Paris"})]


@pytest.mark.parametrize(
    "text",
    [
        "Use the `<tool_call>` tag to call a tool.",
        "<tool_call> tags wrap calls",
        "Write <tool_call>, then JSON.",
        "<tool_call>",
        "a <tool_call>\n\n",
    ],
)
def test_tag_mentioned_in_prose_is_ordinary_text(text: str) -> None:
    result = TextToolCallParser().parse(text)
    assert comparable(result.contents) == [("text", text)]
    assert_split_invariant(text)


def test_prose_after_a_mentioned_tag_is_not_held() -> None:
    parser = TextToolCallParser()
    assert visible(parser.feed("The <tool_call>")) == "The "
    assert visible(parser.feed(" tag is special.")) == "<tool_call> tag is special."


def test_unclosed_block_is_returned_whole_at_end_of_stream() -> None:
    parser = TextToolCallParser()
    assert parser.feed('Text. <tool_call>\n{"name": "f", ') == [TextContent("Text. ")]
    assert parser.feed('"arguments": {"a": 1}') == []
    (tail,) = parser.finish()  # surfaced with its partial arguments, never executable
    assert isinstance(tail, FunctionCallContent)
    assert (tail.name, tail.raw_arguments) == ("f", '{"a": 1}')
    assert tail.raw == '<tool_call>\n{"name": "f", "arguments": {"a": 1}'
    assert tail.error == "hermes/qwen3_coder: <tool_call> not closed at end of stream"


def test_nothing_is_duplicated_or_swallowed() -> None:
    # netclaw re-emitted the whole cleaned stream at the end and lost text after a bad block.
    text = "Let me help. <tool_call>{broken</tool_call> More text. " + CALL + " End."
    out = stream(TextToolCallParser(), cut(text, range(0, len(text), 3)))
    plain = "".join(
        c.text for c in out if isinstance(c, TextContent) and not c.additional_properties
    )
    assert plain == "Let me help.  More text.  End."
    assert errors(out) and visible(out).count("{broken") == 1
    assert calls(out) == [("get_weather", {"city": "Paris"})]


def test_empty_deltas_change_nothing() -> None:
    parser = TextToolCallParser()
    assert parser.feed("") == []
    assert comparable(stream(parser, ["", "<tool_call>", "", CALL[11:], ""])) == comparable(
        TextToolCallParser().parse(CALL).contents
    )


def test_finish_resets_and_parse_does_not_disturb_a_stream() -> None:
    parser = TextToolCallParser()
    assert parser.feed("<tool_call>{") == []
    assert calls(parser.parse(CALL).contents) == [("get_weather", {"city": "Paris"})]
    assert parser.feed('"name": "f", "arguments": {}}</tool_call>') != []
    assert parser.finish() == []
    assert parser.feed("fresh") == [TextContent("fresh")]


def test_random_cuttings_of_a_mixed_text() -> None:
    text = (
        f"Intro <tool_ {CALL}\n<tool_call>{{bad</tool_call> and [TOOL_CALLS] x "
        f"{CALL.replace('Paris', 'Nice')} tail <tool_call"
    )
    expected = comparable(TextToolCallParser().parse(text).contents)
    rng = random.Random(3)
    for _ in range(200):
        positions = rng.sample(range(len(text) + 1), rng.randint(1, 30))
        assert comparable(stream(TextToolCallParser(), cut(text, positions))) == expected


def test_markerless_text_passes_through_byte_identical() -> None:
    text = "Plain answer: a < b, [x] {y} <|not|> \uff5c tool_call</tool_call> \u2028 é\r\n"
    result = TextToolCallParser().parse(text)
    assert result.contents == [TextContent(text)]
    assert visible(stream(TextToolCallParser(), text)) == text


def test_a_stream_cut_by_the_caller_leaves_an_unclosed_block_as_text() -> None:
    # A limit stops reading mid-stream: the held block is the text it is, not a call.
    parser = TextToolCallParser()
    assert parser.feed('<tool_call>{"name": "f", "arguments": {"a": 1}}') == []
    (tail,) = parser.finish(cut=True)
    assert comparable([tail]) == [("error", '<tool_call>{"name": "f", "arguments": {"a": 1}}')]
    assert parser.feed('<tool_call>{"name": "f"') == []  # the next stream is not cut
    (call,) = parser.finish()
    assert isinstance(call, FunctionCallContent)
    assert call.error is not None

"""``auto``: the format is detected from the markers, per stream, and then it sticks."""

from __future__ import annotations

import pytest

from providers.text_tool_calls import FORMAT_NAMES, TextToolCallParser
from tests.unit.providers.text_tool_calls.helpers import calls, comparable, errors, stream

HERMES = '<tool_call>{"name": "h", "arguments": {}}</tool_call>'
QWEN = "<tool_call><function=q><parameter=a>1</parameter></function></tool_call>"
MISTRAL = '[TOOL_CALLS]m{"a": 1}'
LLAMA = '<|python_tag|>{"name": "l", "parameters": {}}'
PYTHONIC = "<|python_start|>[p(a=1)]<|python_end|>"
KIMI = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.k:0<|tool_call_argument_begin|>{}"
    "<|tool_call_end|><|tool_calls_section_end|>"
)
HARMONY = "<|channel|>commentary to=functions.g<|message|>{}<|call|>"


@pytest.mark.parametrize(
    ("text", "name"),
    [
        (HERMES, "h"),
        (QWEN, "q"),
        (MISTRAL, "m"),
        (LLAMA, "l"),
        (PYTHONIC, "p"),
        (KIMI, "k"),
        (HARMONY, "g"),
    ],
)
def test_each_format_is_detected(text: str, name: str) -> None:
    result = TextToolCallParser().parse(f"Intro. {text} Outro.")
    assert [n for n, _ in calls(result.contents)] == [name]
    assert result.content == "Intro.  Outro."


def test_hermes_and_qwen3_coder_share_the_tag_and_are_told_apart_by_content() -> None:
    assert calls(TextToolCallParser().parse(QWEN).contents) == [("q", {"a": "1"})]
    assert calls(TextToolCallParser().parse(HERMES).contents) == [("h", {})]


def test_the_detected_format_sticks() -> None:
    # After hermes, a <|python_tag|> (or a qwen3_coder block) is no longer a call.
    result = TextToolCallParser().parse(HERMES + LLAMA + QWEN)
    assert calls(result.contents) == [("h", {})]
    assert comparable(result.contents)[1] == ("text", LLAMA)
    assert comparable(result.contents)[2] == ("error", QWEN)  # a <tool_call> that is not hermes


def test_detection_is_per_stream() -> None:
    parser = TextToolCallParser()
    assert calls(stream(parser, [HERMES])) == [("h", {})]
    assert calls(stream(parser, [MISTRAL])) == [("m", {"a": 1})]  # a new stream detects anew


def test_a_block_that_fails_does_not_fix_the_format() -> None:
    bad = "<tool_call>{oops}</tool_call>"
    result = TextToolCallParser().parse(bad + MISTRAL)
    assert comparable(result.contents)[0] == ("error", bad)
    assert calls(result.contents) == [("m", {"a": 1})]
    reason = errors(result.contents)[0]
    assert "hermes: " in reason and "qwen3_coder: " in reason  # both candidates were tried


def test_explicit_format_ignores_other_formats_markers() -> None:
    text = HERMES + MISTRAL
    result = TextToolCallParser("mistral").parse(text)
    assert comparable(result.contents)[0] == ("text", HERMES)
    assert calls(result.contents) == [("m", {"a": 1})]


def test_format_names() -> None:
    assert FORMAT_NAMES == (
        "hermes",
        "qwen3_coder",
        "mistral",
        "llama3_json",
        "pythonic",
        "kimi_k2",
        "deepseek_v3",
        "deepseek_v31",
        "gpt_oss",
        "nemotron",
        "auto",
    )
    with pytest.raises(ValueError, match="unknown text tool-call format 'qwen25'"):
        TextToolCallParser("qwen25")
    assert TextToolCallParser("hermes").format == "hermes"
    assert TextToolCallParser().format == "auto"

"""``ReasoningParser``'s streaming API beyond the split itself: what it holds back
(``held_bytes``), when a caller may skip ``feed`` (``plain_triggers``), the exact contents it
returns (adjacent ones of a kind merged, not only equal once joined), its signature, and the
canonical harmony edge cases its routing decides."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from providers.abstractions.contents import AIContent, TextContent, TextReasoningContent
from providers.reasoning import ReasoningParser


def fed(parser: ReasoningParser, *deltas: str) -> list[AIContent]:
    out: list[AIContent] = []
    for delta in deltas:
        out += parser.feed(delta)
    return out


# -- held_bytes ---------------------------------------------------------------------------------


def test_nothing_is_held_before_or_after_plain_text() -> None:
    parser = ReasoningParser("qwen3")
    assert parser.held_bytes() == 0
    assert parser.feed("plain") == [TextContent("plain")]
    assert parser.held_bytes() == 0


def test_held_bytes_adds_a_marker_prefix_to_undecided_reasoning() -> None:
    parser = ReasoningParser("qwen3")
    assert parser.feed("<think>A <tool_call>{ </thi") == [TextReasoningContent("A ")]
    assert parser.held_bytes() == len("<tool_call>{ ") + len("</thi")  # 13 + 5


def test_held_bytes_counts_utf8_bytes_of_undecided_reasoning() -> None:
    parser = ReasoningParser("qwen3")
    parser.feed("<think>A <tool_call>é")
    assert parser.held_bytes() == len("<tool_call>") + len("é".encode())  # 11 + 2


@pytest.mark.parametrize(
    ("fmt", "text", "released"),
    [
        ("auto", "<|channel|>final", [TextContent("<|channel|>final")]),
        ("gpt_oss", "<|start|>assistant", []),  # the bare header a prompt ends with
        ("qwen3", "<think>a<tool_call>x", [TextContent("<tool_call>x")]),
    ],
)
def test_finish_releases_everything_held(fmt: str, text: str, released: list[AIContent]) -> None:
    # A header cut off by the end, or a call made from reasoning, is held until then.
    parser = ReasoningParser(fmt)
    fed(parser, text)
    assert parser.held_bytes() > 0
    assert parser.finish() == released
    assert parser.held_bytes() == 0


def test_a_complete_harmony_header_is_no_longer_held() -> None:
    parser = ReasoningParser("auto")
    assert parser.feed("<|channel|>final") == []
    assert parser.held_bytes() == len("<|channel|>final")
    assert parser.feed("<|message|>a") == [TextContent("a")]
    assert parser.held_bytes() == 0


# -- plain_triggers -----------------------------------------------------------------------------


def test_plain_triggers_are_the_first_characters_of_the_markers() -> None:
    assert ReasoningParser("think").plain_triggers() == "<"
    assert ReasoningParser("kimi").plain_triggers() == "◁"
    assert ReasoningParser("auto").plain_triggers() == "<◁"


def test_no_plain_triggers_while_a_marker_prefix_is_held() -> None:
    parser = ReasoningParser("think")
    assert parser.feed("a <thi") == [TextContent("a ")]
    assert parser.plain_triggers() is None
    assert parser.feed("s") == [TextContent("<this")]
    assert parser.plain_triggers() == "<"


def test_no_plain_triggers_inside_reasoning() -> None:
    parser = ReasoningParser("think")
    parser.feed("<think>a")
    assert parser.plain_triggers() is None
    parser.feed("</think>b")
    assert parser.plain_triggers() == "<"
    assert ReasoningParser("deepseek_r1").plain_triggers() is None


def test_no_plain_triggers_while_gpt_oss_has_not_shown_its_form() -> None:
    parser = ReasoningParser("gpt_oss")
    assert parser.plain_triggers() is None
    parser.feed("<|channel|>final<|message|>a")  # canonical: tokens kept
    assert parser.plain_triggers() == "<"


def test_no_plain_triggers_in_the_stripped_harmony_form() -> None:
    parser = ReasoningParser("gpt_oss")
    assert parser.feed("analysis thinking") == [TextReasoningContent("thinking")]
    assert parser.plain_triggers() is None


def test_no_plain_triggers_inside_a_harmony_header() -> None:
    parser = ReasoningParser("auto")
    parser.feed("<|channel|>final")
    assert parser.plain_triggers() is None


def test_no_plain_triggers_inside_a_prompt_message_being_dropped() -> None:
    parser = ReasoningParser("auto")
    assert parser.feed("<|start|>user<|message|>hi") == []
    assert parser.plain_triggers() is None
    assert parser.feed("<|end|>x") == [TextContent("x")]
    assert parser.plain_triggers() == "<"


# -- exact contents -----------------------------------------------------------------------------


def test_adjacent_pieces_of_one_kind_come_as_one_content() -> None:
    assert ReasoningParser("qwen3").parse("x</think>y").contents == [TextContent("x</think>y")]
    assert ReasoningParser("qwen3").feed("<think>a<think>b") == [TextReasoningContent("a<think>b")]


def test_the_stripped_harmony_form_parses_into_merged_contents() -> None:
    text = "analysis A assistantcommentary P assistantanalysis Q assistantfinal F"
    assert ReasoningParser("gpt_oss").parse(text).contents == [
        TextReasoningContent("A"),
        TextContent("P"),
        TextReasoningContent("Q"),
        TextContent("\nF"),
    ]


# -- construction -------------------------------------------------------------------------------


def test_calls_end_reasoning_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        ReasoningParser("qwen3", None, False)  # type: ignore[call-arg]


def test_a_format_name_read_at_run_time_behaves_as_the_literal() -> None:
    # Names from a config file are equal to the literals, not the same objects.
    r1, oss = json.loads('["deepseek_r1", "gpt_oss"]')
    assert ReasoningParser(r1).starts_in_reasoning is True
    assert ReasoningParser(oss).parse("a <think> b").contents == [TextContent("a <think> b")]
    assert ReasoningParser(oss).parse("analysis R assistantfinal C").contents == [
        TextReasoningContent("R"),
        TextContent("C"),
    ]


def test_importing_the_parser_leaves_harmony_and_parse_results_unloaded() -> None:
    code = (
        "import sys, providers.reasoning.parser as p\n"
        "lazy = ('providers.reasoning.harmony_text', 'providers.abstractions.parsed_text')\n"
        "print(any(m in sys.modules for m in lazy))\n"
        "p.ReasoningParser('gpt_oss').parse('x')\n"
        "print(all(m in sys.modules for m in lazy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "True"]


# -- canonical harmony --------------------------------------------------------------------------


@pytest.mark.parametrize("end", ["<|end|>", "<|call|>", "<|return|>"])
def test_a_header_ended_by_a_terminator_is_text_with_it(end: str) -> None:
    text = f"<|channel|>final{end}x"
    assert ReasoningParser("gpt_oss").parse(text).contents == [TextContent(text)]


def test_terminators_between_messages_vanish_and_text_after_them_is_content() -> None:
    text = "<|channel|>final<|message|>a<|end|>b<|end|>c"
    assert ReasoningParser("gpt_oss").parse(text).contents == [TextContent("abc")]


def test_the_last_channel_named_in_a_header_routes_the_message() -> None:
    parse = ReasoningParser("gpt_oss").parse
    assert parse("<|channel|>analysis<|channel|>final<|message|>x").contents == [TextContent("x")]
    assert parse("<|channel|>final<|channel|>analysis<|message|>x").contents == [
        TextReasoningContent("x")
    ]


def test_auto_drops_prompt_messages_streamed_in_small_pieces() -> None:
    text = (
        "<|start|>system<|message|>You are ChatGPT.<|end|><|start|>user<|message|>Hi<|end|>"
        "<|start|>assistant<|channel|>analysis<|message|>Greet.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Hello!<|end|>"
    )
    parser = ReasoningParser("auto")
    out = fed(parser, *text) + parser.finish()
    reasoning = "".join(c.text for c in out if isinstance(c, TextReasoningContent))
    content = "".join(c.text for c in out if isinstance(c, TextContent))
    assert (reasoning, content) == ("Greet.", "Hello!")

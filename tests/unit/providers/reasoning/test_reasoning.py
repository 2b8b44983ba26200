"""``ReasoningParser`` on the real examples of research/FORMATS.md §6-7 and on streams captured
from llama.cpp, SGLang and vLLM, fed exactly as the servers split them (issue 3 item 2)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pytest

from providers.abstractions.contents import AIContent, TextContent, TextReasoningContent
from providers.reasoning import FORMATS, TOOL_CALL_MARKERS, ReasoningParser

R, C = "reasoning", "content"
TRANSCRIPTS = Path(__file__).resolve().parents[4] / "transcripts"
THINK_IN_CONTENT = (
    TRANSCRIPTS / "llamacpp/captured--qwen3-reasoning-none--stream-think-in-content.sse"
)
SGLANG_THINK = (
    TRANSCRIPTS / "sglang/captured--qwen3-qwen25--stream-reasoning-separate-reasoning-false.sse"
)
VLLM_R1 = TRANSCRIPTS / "vllm/captured--r1-deepseek-think-closed-in-prompt--stream-reasoning-"
PARIS = [(R, "\nThe user asks for the weather in Paris.\n"), (C, "\n\nIt is sunny in Paris.")]


def pairs(contents: Iterable[AIContent]) -> list[tuple[str, str]]:
    """Contents as (kind, text), adjacent ones of the same kind merged."""
    out: list[tuple[str, str]] = []
    for item in contents:
        assert isinstance(item, TextContent | TextReasoningContent)
        assert item.text, "no empty contents"
        kind = R if isinstance(item, TextReasoningContent) else C
        if out and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1] + item.text)
        else:
            out.append((kind, item.text))
    return out


def streamed(parser: ReasoningParser, deltas: Iterable[str]) -> list[tuple[str, str]]:
    contents: list[AIContent] = []
    for delta in deltas:
        contents.extend(parser.feed(delta))
    contents.extend(parser.finish())
    return pairs(contents)


def check(fmt: str, text: str, expected: list[tuple[str, str]], starts: bool | None = None) -> None:
    """``parse``, one whole delta, and character-by-character deltas all give ``expected``."""
    assert pairs(ReasoningParser(fmt, starts).parse(text).contents) == expected
    assert streamed(ReasoningParser(fmt, starts), [text]) == expected
    assert streamed(ReasoningParser(fmt, starts), list(text)) == expected


# -- captured streams, fed as the servers split them -------------------------------------------


def captured_deltas(path: Path = THINK_IN_CONTENT) -> list[str]:
    """The ``delta.content`` strings of a captured stream, split exactly as the server sent them."""
    deltas: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        for choice in json.loads(line[len("data: ") :]).get("choices", []):
            content = choice.get("delta", {}).get("content")
            if isinstance(content, str):
                deltas.append(content)
    return deltas


@pytest.mark.parametrize("fmt", ["qwen3", "think", "auto"])
def test_captured_llamacpp_think_in_content(fmt: str) -> None:
    deltas = captured_deltas()
    assert len(deltas) > 20 and "<" in deltas and "</" in deltas  # the server split the tags
    text = "".join(deltas)
    assert (
        text
        == "<think>\nThe user asks for the weather in Paris.\n</think>\n\nIt is sunny in Paris."
    )
    assert streamed(ReasoningParser(fmt), deltas) == PARIS
    assert pairs(ReasoningParser(fmt).parse(text).contents) == PARIS


@pytest.mark.parametrize("fmt", ["qwen3", "auto"])
def test_captured_sglang_separate_reasoning_false(fmt: str) -> None:
    deltas = captured_deltas(SGLANG_THINK)
    assert "<think>" in deltas and "</think>" in deltas
    assert streamed(ReasoningParser(fmt), deltas) == PARIS


@pytest.mark.parametrize("variant", ["no-open-tag", "with-open-tag"])
def test_captured_vllm_r1_tags_left_in_content(variant: str) -> None:
    # vLLM's deepseek_r1 parser streamed both tags as content when the prompt closed the block.
    deltas = captured_deltas(Path(f"{VLLM_R1}{variant}.sse"))
    assert "</think>" in deltas
    expected = [(R, PARIS[0][1].removeprefix("\n") if variant == "no-open-tag" else PARIS[0][1])]
    assert streamed(ReasoningParser("deepseek_r1"), deltas) == [*expected, PARIS[1]]


def test_captured_vllm_r1_in_auto_mode_shows_the_stray_tag_case() -> None:
    # Without being told the output starts in reasoning, a stray </think> is content, tag and
    # all (SGLang's non-forced detectors do the same): declare deepseek_r1 for such a server.
    deltas = captured_deltas(Path(f"{VLLM_R1}no-open-tag.sse"))
    text = "The user asks for the weather in Paris.\n</think>\n\nIt is sunny in Paris."
    assert streamed(ReasoningParser("auto"), deltas) == [(C, text)]


def test_captured_stream_releases_reasoning_while_it_arrives() -> None:
    parser = ReasoningParser("qwen3")
    released = [pairs(parser.feed(delta)) for delta in captured_deltas()]
    first_reasoning = next(i for i, out in enumerate(released) if out)
    assert released[first_reasoning] == [(R, "\n")]  # right after "<think>" completed
    assert released[first_reasoning + 1] == [(R, "The")]


# -- deepseek_r1 --------------------------------------------------------------------------------


def test_deepseek_r1_without_opening_tag() -> None:
    check(
        "deepseek_r1",
        "I need to think about this...</think>The answer is 42.",
        [(R, "I need to think about this..."), (C, "The answer is 42.")],
    )


def test_deepseek_r1_leading_opening_tag_is_consumed() -> None:
    check("deepseek_r1", "<think>R</think>C", [(R, "R"), (C, "C")])


def test_deepseek_r1_newline_before_opening_tag_stays_reasoning() -> None:
    # As vLLM's streaming parser: the text before <think> cannot be known to be content.
    check("deepseek_r1", "\n<think>R</think>\nC", [(R, "\nR"), (C, "\nC")])


def test_deepseek_r1_without_closing_tag_is_all_reasoning() -> None:
    check("deepseek_r1", "cut off while thinking", [(R, "cut off while thinking")])


def test_deepseek_r1_empty_reasoning() -> None:
    check("deepseek_r1", "</think>x", [(C, "x")])
    check("deepseek_r1", "", [])


def test_deepseek_r1_can_be_told_it_starts_in_content() -> None:
    check("deepseek_r1", "a<think>b</think>c", [(C, "a"), (R, "b"), (C, "c")], starts=False)


# -- qwen3 --------------------------------------------------------------------------------------


def test_qwen3_keeps_whitespace_exactly() -> None:
    check("qwen3", "<think>\nR\n</think>\n\nC\n", [(R, "\nR\n"), (C, "\n\nC\n")])


def test_qwen3_thinking_disabled_is_all_content() -> None:
    check("qwen3", "Just the answer.\n", [(C, "Just the answer.\n")])


def test_qwen3_prefilled_think_starts_in_reasoning() -> None:
    check("qwen3", "R\n</think>\n\nC", [(R, "R\n"), (C, "\n\nC")], starts=True)


def test_qwen3_tool_call_ends_reasoning_and_stays_in_content() -> None:
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    check(
        "qwen3",
        f"<think>\nI should call it.\n\n{call}",
        [(R, "\nI should call it.\n\n"), (C, call)],
    )
    check("qwen3", f"R\n\n{call}", [(R, "R\n\n"), (C, call)], starts=True)


def test_qwen3_coder_function_marker_ends_reasoning() -> None:
    call = "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>"
    check("qwen3", f"<think>R{call}", [(R, "R"), (C, call)])


def test_the_first_closing_tag_ends_reasoning_and_a_later_one_is_content() -> None:
    # vLLM's thinking parsers and SGLang split at the first </think>.
    check("qwen3", "R</think>C1</think>C2", [(R, "R"), (C, "C1</think>C2")], starts=True)
    check("think", "<think>a</think>b<think>c</think>d", [(R, "a"), (C, "b<think>c</think>d")])


def test_an_inner_opening_tag_is_reasoning_text() -> None:
    check(
        "think",
        "<think>Outer<think>Inner</think>Content",
        [(R, "Outer<think>Inner"), (C, "Content")],
    )
    check("qwen3", "<think><think>a</think>b", [(R, "a"), (C, "b")])  # collapsed at the start
    check("deepseek_r1", "<think>R</think>C", [(R, "R"), (C, "C")])


def test_qwen3_repeated_opening_tags_collapse() -> None:
    check("qwen3", "<think><think>R</think>C", [(R, "R"), (C, "C")])


def test_a_call_thought_about_inside_a_closed_block_is_reasoning() -> None:
    # Issue #20: markup inside <think>…</think> is reasoning, and so is what follows it.
    call = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    check("qwen3", f"<think>A {call} B</think>C", [(R, f"A {call} B"), (C, "C")])
    check("qwen3", f"A {call} B</think>C", [(R, f"A {call} B"), (C, "C")], starts=True)


def test_what_follows_a_marker_in_reasoning_is_held_until_decided() -> None:
    parser = ReasoningParser("qwen3")
    assert pairs(parser.feed("<think>A <tool_call>{")) == [(R, "A ")]
    assert parser.held_bytes() == len("<tool_call>{")
    assert parser.feed(' "x"') == []  # still undecided
    assert pairs(parser.feed("}</think>C")) == [(R, '<tool_call>{ "x"}'), (C, "C")]
    assert parser.held_bytes() == 0


def test_without_tools_a_marker_does_not_end_reasoning() -> None:
    text = "<think>R<tool_call>{}"
    parser = ReasoningParser("qwen3", calls_end_reasoning=False)
    assert pairs(parser.parse(text).contents) == [(R, "R<tool_call>{}")]
    assert streamed(ReasoningParser("qwen3", calls_end_reasoning=False), list(text)) == [
        (R, "R<tool_call>{}")
    ]


def test_tool_marker_in_content_is_plain_content() -> None:
    check("qwen3", "A<tool_call>{}</tool_call>", [(C, "A<tool_call>{}</tool_call>")])


# -- generic think: stray and unclosed tags ----------------------------------------------------


def test_stray_closing_tag_in_content_is_content() -> None:
    check("think", "already shown</think>answer", [(C, "already shown</think>answer")])


def test_unclosed_think_at_end_is_reasoning() -> None:
    check("think", "A<think>cut off", [(C, "A"), (R, "cut off")])


def test_content_before_the_first_think_block_stays_content() -> None:
    check("think", "x<think>a</think>b", [(C, "x"), (R, "a"), (C, "b")])


def test_partial_marker_at_end_is_released_as_current_kind() -> None:
    check("think", "<think>R</thi", [(R, "R</thi")])
    check("think", "answer <", [(C, "answer <")])


def test_partial_end_tag_is_not_lost() -> None:
    # SGLang's regression test_partial_end_tag_buffer_loss_bug.
    assert streamed(ReasoningParser("think"), ["</", "answer"]) == [(C, "</answer")]


def test_ordinary_text_is_released_at_once_and_only_a_marker_prefix_held() -> None:
    parser = ReasoningParser("think")
    assert pairs(parser.feed("a < b and c <")) == [(C, "a < b and c ")]
    assert pairs(parser.feed("th")) == []
    assert pairs(parser.feed("e end")) == [(C, "<the end")]
    assert pairs(parser.feed("<thi")) == []
    assert pairs(parser.feed("nk>x")) == [(R, "x")]
    assert pairs(parser.finish()) == []


def test_markerless_text_passes_through_unchanged() -> None:
    text = "Plain <b>html</b>, a < b, unicode ☃ ◁ ▷ [x] and\r\n  spaces  "
    for fmt in FORMATS:
        assert streamed(ReasoningParser(fmt, False), list(text)) == [(C, text)]


def test_feeding_long_text_in_small_deltas_holds_back_little() -> None:
    parser = ReasoningParser("auto")
    fed = released = 0
    for _ in range(5000):
        released += sum(len(c.text) for c in parser.feed("ab<c") if isinstance(c, TextContent))
        fed += 4
        assert fed - released <= max(map(len, TOOL_CALL_MARKERS))


# -- kimi and kimi_k2 ---------------------------------------------------------------------------


def test_kimi_triangle_tags_split_across_chunks() -> None:
    deltas = ["◁thi", "nk▷", "Let me see.", "◁/th", "ink▷", "Answer."]
    expected = [(R, "Let me see."), (C, "Answer.")]
    assert streamed(ReasoningParser("kimi"), deltas) == expected
    assert streamed(ReasoningParser("auto"), deltas) == expected
    check("kimi", "".join(deltas), expected)


def test_kimi_is_never_forced_and_ignores_ascii_tags() -> None:
    check("kimi", "no tag <think>here</think>", [(C, "no tag <think>here</think>")])


def test_kimi_k2_empty_think_block() -> None:
    check("kimi_k2", "<think></think>x", [(C, "x")])


def test_kimi_k2_tool_section_ends_reasoning() -> None:
    section = (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        '<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_calls_section_end|>'
    )
    check("kimi_k2", f"<think>some reasoning{section}", [(R, "some reasoning"), (C, section)])
    check("kimi_k2", f"some reasoning{section}", [(R, "some reasoning"), (C, section)], True)


# -- gpt_oss (harmony) --------------------------------------------------------------------------

ANALYSIS = "<|channel|>analysis<|message|>Need to use function get_weather.<|end|>"
CALL = (
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    '<|message|>{"location":"San Francisco"}<|call|>'
)


@pytest.mark.parametrize("fmt", ["gpt_oss", "auto"])
def test_gpt_oss_analysis_and_final_channels(fmt: str) -> None:
    text = (
        "<|channel|>analysis<|message|>I need to think.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>The answer is 42.<|return|>"
    )
    check(fmt, text, [(R, "I need to think."), (C, "The answer is 42.")])


@pytest.mark.parametrize("fmt", ["gpt_oss", "auto"])
def test_gpt_oss_tool_call_message_is_left_whole_in_content(fmt: str) -> None:
    check(fmt, ANALYSIS + CALL, [(R, "Need to use function get_weather."), (C, CALL)])


def test_gpt_oss_recipient_in_role_header_is_left_whole_in_content() -> None:
    call = (
        "<|start|>assistant to=functions.get_weather<|channel|>commentary<|constrain|>json"
        '<|message|>{"location":"Tokyo"}<|call|>'
    )
    check("gpt_oss", ANALYSIS + call, [(R, "Need to use function get_weather."), (C, call)])


def test_gpt_oss_analysis_with_recipient_is_a_call_not_reasoning() -> None:
    call = "<|channel|>analysis to=functions.lookup<|message|>{}<|call|>"
    check("gpt_oss", call, [(C, call)])


def test_gpt_oss_commentary_preamble_is_content() -> None:
    preamble = "<|start|>assistant<|channel|>commentary<|message|>Let me look that up.<|end|>"
    final = "<|start|>assistant<|channel|>final<|message|>It is 42.<|return|>"
    # vLLM joins preambles and the final answer with a line break.
    check("gpt_oss", preamble + final, [(C, "Let me look that up.\nIt is 42.")])


def test_gpt_oss_truncated_analysis_is_reasoning() -> None:
    check("gpt_oss", "<|channel|>analysis<|message|>I'm in the middle", [(R, "I'm in the middle")])


def test_gpt_oss_malformed_header_is_kept_as_text() -> None:
    text = '<|channel|>final {"answer": "hi"}<|return|>'
    check("gpt_oss", text, [(C, text)])
    check("gpt_oss", "<|channel|>analysis", [(C, "<|channel|>analysis")])


def test_gpt_oss_prompt_ending_in_analysis_starts_in_reasoning() -> None:
    text = "R<|end|><|start|>assistant<|channel|>final<|message|>C<|return|>"
    check("gpt_oss", text, [(R, "R"), (C, "C")], starts=True)


def test_gpt_oss_ignores_think_tags() -> None:
    text = "<|channel|>final<|message|>a <think> b<|return|>"
    check("gpt_oss", text, [(C, "a <think> b")])


# -- auto and the API ---------------------------------------------------------------------------


def test_auto_before_any_marker_is_content_unless_told_otherwise() -> None:
    check("auto", "hello", [(C, "hello")])
    check("auto", "R</think>C", [(R, "R"), (C, "C")], starts=True)
    check("auto", "R<tool_call>{}", [(R, "R"), (C, "<tool_call>{}")], starts=True)


def test_auto_keeps_the_first_format_it_detects() -> None:
    check("auto", "<think>a</think>◁think▷b", [(R, "a"), (C, "◁think▷b")])
    check("auto", "◁think▷a◁/think▷<think>b", [(R, "a"), (C, "<think>b")])


def test_parse_leaves_the_stream_state_alone() -> None:
    parser = ReasoningParser("think")
    assert pairs(parser.feed("<think>a")) == [(R, "a")]
    assert parser.parse("b</think>c").content == "b</think>c"
    assert pairs(parser.feed("</think>d")) == [(C, "d")]


def test_parsed_text_views() -> None:
    parsed = ReasoningParser("qwen3").parse("<think>r</think>c")
    assert (parsed.reasoning, parsed.content, parsed.tool_calls) == ("r", "c", [])


def test_defaults_and_unknown_format() -> None:
    assert ReasoningParser().format == "auto"
    assert ReasoningParser("deepseek_r1").starts_in_reasoning is True
    assert ReasoningParser("qwen3").starts_in_reasoning is False
    with pytest.raises(ValueError, match="unknown reasoning format"):
        ReasoningParser("hermes")

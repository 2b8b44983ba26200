"""gpt-oss harmony in ``ReasoningParser``: the canonical grammar and the stripped text form.

Facts from vLLM's harmony tests (a rendered conversation, preambles joined to the answer by a line
break) and SGLang's ``test_harmony_parser.py`` (canonical and ``TextStrategy`` cases). Every case
is also streamed in every two-piece cutting and in arbitrary cuttings (hypothesis): any split gives
what the whole text gives.
"""

from __future__ import annotations

from itertools import groupby, pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers.abstractions.contents import AIContent, TextContent, TextReasoningContent
from providers.reasoning import ReasoningParser
from providers.reasoning.harmony_text import HarmonyText, TextFormGate

R, C = "reasoning", "content"
Pairs = list[tuple[str, str]]


def pairs(contents: list[AIContent]) -> Pairs:
    kinds = [(R if isinstance(c, TextReasoningContent) else C, c.text) for c in contents]  # type: ignore[attr-defined]
    return [(k, "".join(t for _, t in g)) for k, g in groupby(kinds, key=lambda p: p[0])]


def streamed(pieces: list[str]) -> Pairs:
    parser = ReasoningParser("gpt_oss")
    out: list[AIContent] = []
    for piece in pieces:
        out += parser.feed(piece)
    return pairs(out + parser.finish())


def check(text: str, expected: Pairs) -> None:
    assert pairs(list(ReasoningParser("gpt_oss").parse(text).contents)) == expected
    assert streamed(list(text)) == expected
    for cut in range(len(text) + 1):
        assert streamed([text[:cut], text[cut:]]) == expected, cut


CANONICAL = [
    (
        "<|channel|>analysis<|message|>Let me think about this<|end|>",
        [(R, "Let me think about this")],
    ),
    ("<|channel|>commentary<|message|>User-visible message<|end|>", [(C, "User-visible message")]),
    (
        "<|start|>assistant<|channel|>final<|message|>The answer is 42<|return|>",
        [(C, "The answer is 42")],
    ),
    (
        "<|channel|>analysis<|message|>  content with spaces  <|end|>",
        [(R, "  content with spaces  ")],
    ),
    (
        "<|channel|>analysis<|message|>Long chain of thought<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>**Action plan**: 1. Generate file<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Done.<|return|>",
        [(R, "Long chain of thought"), (C, "**Action plan**: 1. Generate file\nDone.")],
    ),
    (
        "<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>"
        '{"sunny": true, "temperature": 20}<|end|>',
        [(C, '{"sunny": true, "temperature": 20}')],
    ),
    (
        "<|start|>system<|message|>You are ChatGPT.<|end|><|start|>user<|message|>Hi<|end|>"
        "<|start|>assistant<|channel|>analysis<|message|>Greet.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>Hello!<|end|><|start|>assistant",
        [(R, "Greet."), (C, "Hello!")],
    ),
    (
        "<|channel|>analysis<|message|>first reasoning<|end|>"
        "<|channel|>analysis<|message|>second reasoning<|end|>",
        [(R, "first reasoningsecond reasoning")],
    ),
    (
        '<|channel|>final {"answer": "hi"}<|return|>',
        [(C, '<|channel|>final {"answer": "hi"}<|return|>')],
    ),
    ("<|channel|>analysis<|message|>I'm in the middle", [(R, "I'm in the middle")]),
]

TEXT_FORM = [
    ("analysis I need to think about this. assistantfinal The answer is 42.",
     [(R, "I need to think about this."), (C, "The answer is 42.")]),
    ("commentary User-visible preamble. assistantfinal The answer is 42.",
     [(C, "User-visible preamble.\nThe answer is 42.")]),
    ("assistantfinal The direct answer.", [(C, "The direct answer.")]),
    ("analysis This is reasoning content.", [(R, "This is reasoning content.")]),
    ("ANALYSIS reasoning ASSISTANTFINAL answer", [(R, "reasoning"), (C, "answer")]),
    ("Just plain text without any markers.", [(C, "Just plain text without any markers.")]),
    ("analysisThe user typed random strings. We should respond politely.assistantfinalIt looks"
     " like you're testing. How can I help?",
     [(R, "The user typed random strings. We should respond politely."),
      (C, "It looks like you're testing. How can I help?")]),
    ('analysisNeed the weather.assistantcommentary to=functions.get_weather json{"city": "SF"}',
     [(R, "Need the weather."),
      (C, 'assistantcommentary to=functions.get_weather json{"city": "SF"}')]),
    ("analysis The user typed \"wapppa\". Not a question.",
     [(R, 'The user typed "wapppa". Not a question.')]),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), CANONICAL)
def test_canonical_messages(text: str, expected: Pairs) -> None:
    check(text, expected)


@pytest.mark.parametrize(("text", "expected"), TEXT_FORM)
def test_text_form_left_when_special_tokens_are_stripped(text: str, expected: Pairs) -> None:
    check(text, expected)


def test_the_text_form_is_read_only_for_an_explicit_gpt_oss() -> None:
    text = "analysis of the data shows a trend"
    assert pairs(list(ReasoningParser("auto").parse(text).contents)) == [(C, text)]


def test_what_the_start_holds_is_bounded_and_counted() -> None:
    parser = ReasoningParser("gpt_oss")
    assert parser.feed("assist") == []
    assert parser.held_bytes() == len("assist")
    assert pairs(parser.feed("ant is here")) == [(C, "assistant is here")]


PIECES = st.sampled_from(
    (
        "<|start|>assistant",
        "<|channel|>analysis<|message|>",
        "<|channel|>final<|message|>",
        "<|channel|>commentary<|message|>",
        "<|channel|>commentary to=functions.f <|constrain|>json<|message|>",
        "<|start|>user<|message|>",
        "<|end|>",
        "<|return|>",
        "<|call|>",
        "analysis",
        "assistantfinal",
        "assistantcommentary",
        " to=functions.g json",
        '{"a": 1}',
        "  ",
        "\n",
        "word",
        "<|",
        "assist",
    )
)


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(PIECES, max_size=12), cuts=st.lists(st.integers(0, 400), max_size=6))
def test_any_split_gives_what_the_whole_text_gives(pieces: list[str], cuts: list[int]) -> None:
    text = "".join(pieces)
    whole = pairs(list(ReasoningParser("gpt_oss").parse(text).contents))
    bounds = sorted({0, len(text), *(c for c in cuts if c <= len(text))})
    assert streamed([text[a:b] for a, b in pairwise(bounds)]) == whole


def test_the_stripped_form_holds_trailing_space_and_a_mark_prefix() -> None:
    parser = ReasoningParser("gpt_oss")
    assert parser.feed("analysis thinking  assist") == [TextReasoningContent("thinking")]
    assert parser.held_bytes() == len("  ") + len("assist")
    parser = ReasoningParser("gpt_oss")
    assert parser.feed("assistantfinal answer  assist") == [TextContent("answer")]
    assert parser.held_bytes() == len("  ") + len("assist")


def test_a_commentary_segment_is_held_whole_with_a_mark_prefix() -> None:
    parser = ReasoningParser("gpt_oss")
    assert parser.feed("commentary to=f x assistantf") == []
    assert parser.held_bytes() == len("commentary to=f x assistantf")
    assert parser.finish() == [TextContent("commentary to=f x assistantf")]
    assert parser.held_bytes() == 0


def test_harmony_text_feed_holds_back_unless_told_the_text_is_final() -> None:
    text_form = HarmonyText()
    assert text_form.feed("commentary hi") == []  # a preamble or a call: only its end tells
    assert text_form.feed("", final=True) == [TextContent("hi")]


def test_final_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        HarmonyText().feed("analysis x", True)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        TextFormGate().feed("analysis x", True)  # type: ignore[call-arg]

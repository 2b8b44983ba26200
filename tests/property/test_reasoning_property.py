"""Properties of ``ReasoningParser`` (issue 3 item 2): any cutting of any text into deltas gives
the same contents as ``parse``; nothing is lost but recognised markup; text without markers passes
through unchanged."""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from providers.abstractions.contents import AIContent, TextContent, TextReasoningContent
from providers.reasoning import FORMATS, TOOL_CALL_MARKERS, ReasoningParser

SETTINGS = settings(max_examples=150, deadline=None)

TAGS = {
    "think": ("<think>", "</think>"),
    "deepseek_r1": ("<think>", "</think>"),
    "qwen3": ("<think>", "</think>"),
    "kimi_k2": ("<think>", "</think>"),
    "kimi": ("◁think▷", "◁/think▷"),
}
HARMONY = ("<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|return|>", "<|call|>")
MARKERS = (*TAGS["think"], *TAGS["kimi"], *HARMONY, *TOOL_CALL_MARKERS)

# Whole markers, pieces of markers that only become one with a neighbour, and ordinary text.
PIECES: tuple[str, ...] = (
    "<",
    "<th",
    "ink>",
    "</",
    "</thi",
    "th",
    ">",
    "/",
    "◁",
    "◁thi",
    "nk▷",
    "◁/th",
    "▷",
)
PIECES += ("<|", "|>", "<|chan", "nel|>", "<|end", "[", "[TOOL_", "<tool_", "call>", "<func")
WORDS: tuple[str, ...] = (
    "a",
    "bc",
    " ",
    "\n",
    "\r\n",
    "☃",
    "é",
    "日本",
    "\u2028",
    "analysis",
    "final",
)
WORDS += ("commentary", " to=functions.f", "assistant", "{}", "json")
FRAGMENTS = st.sampled_from(MARKERS + PIECES + WORDS) | st.text(max_size=4)


def pairs(contents: Iterable[AIContent]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for item in contents:
        assert isinstance(item, TextContent | TextReasoningContent)
        assert item.text
        kind = "reasoning" if isinstance(item, TextReasoningContent) else "content"
        if out and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1] + item.text)
        else:
            out.append((kind, item.text))
    return out


def cut(text: str, cuts: list[int]) -> list[str]:
    bounds = sorted({0, len(text), *(c % (len(text) + 1) for c in cuts)})
    return [text[a:b] for a, b in pairwise(bounds)]


def streamed(parser: ReasoningParser, deltas: Iterable[str]) -> list[tuple[str, str]]:
    contents: list[AIContent] = []
    for delta in deltas:
        contents.extend(parser.feed(delta))
    contents.extend(parser.finish())
    return pairs(contents)


texts = st.lists(FRAGMENTS, max_size=30).map("".join)
cuts = st.lists(st.integers(min_value=0, max_value=10_000), max_size=20)
starts = st.sampled_from([None, True, False])


@SETTINGS
@given(text=texts, cuts=cuts, fmt=st.sampled_from(FORMATS), starts=starts)
def test_any_cutting_gives_what_parse_gives(
    text: str, cuts: list[int], fmt: str, starts: bool | None
) -> None:
    expected = pairs(ReasoningParser(fmt, starts).parse(text).contents)
    assert streamed(ReasoningParser(fmt, starts), cut(text, cuts)) == expected
    assert streamed(ReasoningParser(fmt, starts), list(text)) == expected


@SETTINGS
@given(text=texts, cuts=cuts, fmt=st.sampled_from(sorted(TAGS)), starts=starts)
def test_tag_formats_lose_nothing_but_their_tags(
    text: str, cuts: list[int], fmt: str, starts: bool | None
) -> None:
    # Only tags are consumed (those that open or close reasoning); every other character, tool
    # markers included, is in exactly one content, in order.
    tags = re.compile("|".join(map(re.escape, TAGS[fmt])))
    out = streamed(ReasoningParser(fmt, starts), cut(text, cuts))
    kept = "".join(piece for _, piece in out)
    assert tags.sub("", kept) == tags.sub("", text)
    assert len(kept) <= len(text)


@SETTINGS
@given(text=texts, cuts=cuts, fmt=st.sampled_from(FORMATS))
def test_markerless_text_passes_through_unchanged(text: str, cuts: list[int], fmt: str) -> None:
    for marker in MARKERS:
        text = text.replace(marker, "")
    if any(marker in text for marker in MARKERS):  # removing one joined the pieces of another
        return
    if fmt == "gpt_oss" and text.lstrip().lower().startswith(STRIPPED_HARMONY):
        # the stripped text form of harmony (tests/unit/providers/reasoning/)
        return
    expected = [("content", text)] if text else []
    assert streamed(ReasoningParser(fmt, False), cut(text, cuts)) == expected


STRIPPED_HARMONY = ("analysis", "commentary", "assistant")


# -- harmony, against a model of what each message should give ---------------------------------

BODY = st.lists(
    st.sampled_from(("a", " b", "\n", "☃", "<", "<|", "|>", "<think>", "◁", "{}", "to")),
    max_size=6,
).map("".join)
CHANNELS = st.sampled_from(("analysis", "final", "commentary", "other"))
RECIPIENT = st.sampled_from(("", " to=functions.get_weather"))


@st.composite
def harmony(draw: st.DrawFn) -> tuple[str, bool, list[tuple[str, str]]]:
    """A harmony completion and the contents it must give."""
    in_reasoning = draw(st.booleans())
    pre = draw(BODY)
    text = [pre]
    expected = [("reasoning" if in_reasoning else "content", pre)]
    parts = False
    for i in range(draw(st.integers(0, 4))):
        channel, recipient, body = draw(CHANNELS), draw(RECIPIENT), draw(BODY)
        if i == 0 and draw(st.booleans()):
            header = f"<|channel|>{channel}{recipient}<|message|>"
        elif draw(st.booleans()):
            header = (
                f"<|start|>assistant{recipient}<|channel|>{channel}<|constrain|>json<|message|>"
            )
        else:
            header = (
                f"<|start|>assistant<|channel|>{channel}{recipient} <|constrain|>json<|message|>"
            )
        end = draw(st.sampled_from(("<|end|>", "<|return|>", "<|call|>", "")))
        text += [header, body, end]
        if recipient or channel not in ("analysis", "final", "commentary"):
            expected.append(("content", header + body + end))
        elif channel == "analysis":
            expected.append(("reasoning", body))
        else:  # final, or a commentary preamble: one part each, joined by a line break
            expected += [("content", "\n")] if parts else []
            expected.append(("content", body))
            parts = True
        if not end:
            break
        after = draw(BODY)
        text.append(after)
        expected.append(("content", after))
    return (
        "".join(text),
        in_reasoning,
        pairs(
            TextReasoningContent(t) if k == "reasoning" else TextContent(t)
            for k, t in expected
            if t
        ),
    )


@SETTINGS
@given(case=harmony(), cuts=cuts, fmt=st.sampled_from(["gpt_oss", "auto"]))
def test_harmony_messages_give_their_channels(
    case: tuple[str, bool, list[tuple[str, str]]], cuts: list[int], fmt: str
) -> None:
    text, in_reasoning, expected = case
    if fmt == "auto" and not text.startswith(("<|start|>", "<|channel|>")):
        return  # auto sees text before the first message; covered by the first property
    parser = ReasoningParser(fmt, in_reasoning)
    assert pairs(parser.parse(text).contents) == expected
    assert streamed(ReasoningParser(fmt, in_reasoning), cut(text, cuts)) == expected

"""A call quoted in a Markdown code fence is text (issue #20); the fence rule, case by case.

Each case is checked whole and cut at every position, since the fence state must depend on the
characters only.
"""

from __future__ import annotations

import pytest

from providers.text_tool_calls import TextToolCallParser
from tests.unit.providers.text_tool_calls.helpers import comparable, cut, stream

CALL = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
PARSED: tuple[object, ...] = ("call", "f", {}, "{}", None)


def _check(text: str, expected: list[tuple[object, ...]]) -> None:
    assert comparable(TextToolCallParser("hermes").parse(text).contents) == expected
    for at in range(len(text) + 1):
        assert comparable(stream(TextToolCallParser("hermes"), cut(text, [at]))) == expected


@pytest.mark.parametrize(
    "text",
    [
        f"```\n{CALL}\n```",
        f"```json\n{CALL}\n```\nafter",
        f"~~~\n{CALL}\n~~~",
        f"   ```\n{CALL}\n```",
        f"Example:\n````\n```\n{CALL}\n````",  # a shorter run does not close a longer fence
        f"```\n{CALL}",  # unclosed: quoted to the end
        f"```\n{CALL}\n~~~\n{CALL}",  # the other character does not close it
        f"```\n{CALL}\n``` not a close\n{CALL}",
    ],
)
def test_quoted_calls_are_text(text: str) -> None:
    _check(text, [("text", text)])


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("```\nx\n```\n", ""),  # a closed fence ends the quote
        ("```\nx\n```  \n", " done"),  # blanks may follow the closing run
        ("``\n", ""),  # two backticks are no fence
        ("text ```\n", ""),  # a fence opens only at the start of a line
        ("`` `\n", ""),
    ],
)
def test_calls_outside_fences_are_calls(before: str, after: str) -> None:
    expected: list[tuple[object, ...]] = [("text", before), PARSED]
    if after:
        expected.append(("text", after))
    _check(before + CALL + after, expected)


def test_a_fence_inside_a_block_is_the_block_s_text() -> None:
    block = '<tool_call>{"name": "f", "arguments": {"code": "```\\nx"}}</tool_call>'
    _check(
        block + "\n" + CALL,
        [("call", "f", {"code": "```\nx"}, '{"code": "```\\nx"}', None), ("text", "\n"), PARSED],
    )

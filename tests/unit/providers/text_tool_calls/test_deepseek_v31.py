"""deepseek_v31: ``NAME<|tool▁sep|>{…}`` calls (no type, no fence) inside the section tokens."""

from __future__ import annotations

import pytest

from providers.text_tool_calls import TextToolCallParser
from tests.unit.providers.text_tool_calls.helpers import comparable, errors

BEGIN, END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CALL_BEGIN, CALL_END, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"


def parse(text: str) -> list[tuple[object, ...]]:
    return comparable(TextToolCallParser("deepseek_v31").parse(text).contents)


def test_name_and_arguments_are_stripped() -> None:
    body = f'{CALL_BEGIN} get_weather {SEP}\n {{"city": "Tokyo"}} \n{CALL_END}'
    result = TextToolCallParser("deepseek_v31").parse(BEGIN + body + END)
    assert comparable(result.contents) == [
        ("call", "get_weather", {"city": "Tokyo"}, '{"city": "Tokyo"}', None)
    ]
    assert result.tool_calls[0].raw == body


def test_empty_arguments_are_an_empty_object() -> None:
    text = f"{BEGIN}{CALL_BEGIN}refresh{SEP} {CALL_END}{END}"
    assert parse(text) == [("call", "refresh", {}, "{}", None)]


@pytest.mark.parametrize(
    "body",
    ['get_weather {"city": "Tokyo"}', f" {SEP}{{}}", f"get\nweather{SEP}{{}}"],
    ids=["no-separator", "no-name", "name-over-two-lines"],
)
def test_a_call_that_is_not_name_separator_arguments_is_error_text(body: str) -> None:
    text = f"{BEGIN}{CALL_BEGIN}{body}{CALL_END}{END}"
    contents = TextToolCallParser("deepseek_v31").parse(text).contents
    assert comparable(contents) == [("error", text)]
    assert errors(contents) == [f"deepseek_v31: call is not NAME{SEP}ARGUMENTS"]


def test_a_bad_call_among_good_ones_is_error_text() -> None:
    bad = f"{CALL_BEGIN}f{SEP}[1]{CALL_END}"
    good = f"{CALL_BEGIN}g{SEP}{{}}{CALL_END}"
    assert parse(f"{BEGIN}{good}{bad}{good}{END}") == [
        ("call", "g", {}, "{}", None),
        ("error", bad),
        ("call", "g", {}, "{}", None),
    ]

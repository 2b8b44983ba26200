"""kimi_k2, deepseek_v3 and deepseek_v31: calls inside special-token sections (FORMATS.md §5)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from providers.abstractions.contents import FunctionCallContent, TextContent
from providers.text_tool_calls import TextToolCallParser
from tests.unit.providers.text_tool_calls.helpers import (
    assert_split_invariant,
    calls,
    comparable,
    errors,
    tool,
)

BEGIN, END = "<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"


def kimi(call_id: str, arguments: str) -> str:
    return f"<|tool_call_begin|>{call_id}<|tool_call_argument_begin|>{arguments}<|tool_call_end|>"


def test_kimi_section_uses_the_models_ids() -> None:
    first = kimi("functions.get_weather:0", '{"city": "Beijing"}')
    second = kimi("functions.mcp__portal__search-documents:1", "{}")
    text = f"Let me look.{BEGIN}{first}{second}{END}"
    result = TextToolCallParser("kimi_k2").parse(text)
    assert comparable(result.contents, ids=True) == [
        ("text", "Let me look."),
        ("call", "get_weather", {"city": "Beijing"}, '{"city": "Beijing"}', None,
         "functions.get_weather:0"),
        ("call", "mcp__portal__search-documents", {}, "{}", None,
         "functions.mcp__portal__search-documents:1"),
    ]  # fmt: skip
    assert_split_invariant(text, "kimi_k2")
    assert_split_invariant(text, "auto")


def test_kimi_whitespace_around_the_id_and_dotted_names() -> None:
    text = f"{BEGIN}\n{kimi(' functions.a.b:3 ', ' {} ')}\n{END}"
    (call,) = TextToolCallParser("kimi_k2").parse(text).tool_calls
    assert (call.name, call.call_id) == ("a.b", "functions.a.b:3")


def test_kimi_bad_calls_are_surfaced_with_error_and_the_others_survive() -> None:
    bad_id = kimi("functions.invalid.0", "{}")  # vLLM skips an id without :INDEX
    bad_json = kimi("functions.f:1", "{not json}")  # vLLM returns it as a call anyway
    good = kimi("functions.g:2", '{"a": 1}')
    result = TextToolCallParser("kimi_k2").parse(f"{BEGIN}{bad_id}{bad_json}{good}{END}")
    found = [(c.name, c.raw_arguments, c.error is None) for c in result.tool_calls]
    assert found == [
        ("invalid.0", "{}", False),
        ("f", "{not json}", False),
        ("g", '{"a": 1}', True),
    ]
    assert result.content == ""
    assert "NAME:INDEX" in (result.tool_calls[0].error or "")


def test_kimi_text_between_the_markers_is_dropped() -> None:
    text = f"Reasoning. {BEGIN} spurious noise {kimi('functions.t:0', '{}')} more {END}"
    result = TextToolCallParser("kimi_k2").parse(text)
    assert result.content == "Reasoning. "
    assert calls(result.contents) == [("t", {})]
    assert TextToolCallParser("kimi_k2").parse(f"R. {BEGIN}{END}").contents == [TextContent("R. ")]
    assert_split_invariant(text, "kimi_k2")


def test_kimi_bare_counter_takes_its_name_from_the_tools() -> None:
    text = BEGIN + kimi("0", '{"city": "Tokyo", "unit": "c"}') + END
    weather = tool("get_weather", {"city": {"type": "string"}, "unit": {"type": "string"}})
    read = tool("read_file", {"path": {"type": "string"}})
    flight = tool("book_flight", {"city": {"type": "string"}})
    (call,) = TextToolCallParser("kimi_k2", [read, weather]).parse(text).tool_calls
    assert (call.call_id, call.name, call.error) == ("0", "get_weather", None)
    ambiguous = BEGIN + kimi("0", '{"city": "Tokyo"}') + END
    assert TextToolCallParser("kimi_k2", [weather, flight]).parse(ambiguous).tool_calls == []
    assert TextToolCallParser("kimi_k2").parse(ambiguous).tool_calls == []


def test_kimi_call_cut_by_the_end_keeps_its_partial_arguments() -> None:
    text = f"I'll check. {BEGIN}<|tool_call_begin|>functions.get_weather:0 " + (
        '<|tool_call_argument_begin|>{"city": "Bei'
    )
    result = TextToolCallParser("kimi_k2").parse(text)
    (call,) = result.tool_calls
    assert (call.call_id, call.name, call.raw_arguments) == (
        "functions.get_weather:0",
        "get_weather",
        '{"city": "Bei',
    )
    assert call.error is not None
    assert result.content == "I'll check. "
    assert_split_invariant(text, "kimi_k2")


def test_kimi_section_where_no_call_can_be_read_is_one_error_text() -> None:
    text = f"{BEGIN}<|tool_call_begin|>no argument marker<|tool_call_end|>{END}"
    assert comparable(TextToolCallParser("kimi_k2").parse(text).contents) == [("error", text)]


def test_kimi_text_after_the_section_is_kept() -> None:
    # vLLM drops content after <|tool_calls_section_end|>.
    text = f"{BEGIN}{kimi('functions.f:0', '{}')}{END} and then"
    assert TextToolCallParser("kimi_k2").parse(text).content == " and then"


def test_kimi_call_without_a_section() -> None:
    text = f"x {kimi('functions.f:0', '{}')} y"
    assert calls(TextToolCallParser("auto").parse(text).contents) == [("f", {})]
    assert_split_invariant(text, "kimi_k2")


def test_kimi_truncated_section_keeps_the_complete_call() -> None:
    text = f"{BEGIN}{kimi('functions.f:0', '{}')}<|tool_call_begin|>functions.g:1<|tool_call_arg"
    call, cut_off = TextToolCallParser("kimi_k2").parse(text).contents
    assert isinstance(call, FunctionCallContent)
    assert (call.name, call.error is not None) == ("f", True)  # its section never closed
    assert comparable([cut_off]) == [("error", "<|tool_call_begin|>functions.g:1<|tool_call_arg")]


DS_BEGIN, DS_END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CALL_BEGIN, CALL_END, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"


def v3(name: str, arguments: str) -> str:
    return f"{CALL_BEGIN}function{SEP}{name}\n```json\n{arguments}\n```{CALL_END}"


def v31(name: str, arguments: str) -> str:
    return f"{CALL_BEGIN}{name}{SEP}{arguments}{CALL_END}"


@pytest.mark.parametrize(("fmt", "call"), [("deepseek_v3", v3), ("deepseek_v31", v31)])
def test_deepseek_sections(fmt: str, call: Callable[[str, str], str]) -> None:
    calls_text = call("get_weather", '{"city": "Tokyo"}') + call("get_time", "{}")
    text = f"some prefix text{DS_BEGIN}{calls_text}{DS_END} some suffix text"
    result = TextToolCallParser(fmt).parse(text)
    assert comparable(result.contents) == [
        ("text", "some prefix text"),
        ("call", "get_weather", {"city": "Tokyo"}, '{"city": "Tokyo"}', None),
        ("call", "get_time", {}, "{}", None),
        ("text", " some suffix text"),
    ]
    assert_split_invariant(text, fmt)
    # auto tells V3 from V3.1 by the call's shape
    assert comparable(TextToolCallParser("auto").parse(text).contents) == comparable(
        result.contents
    )


def test_deepseek_v3_needs_its_fence_and_type() -> None:
    text = f"{DS_BEGIN}{v31('f', '{}')}{DS_END}"
    assert comparable(TextToolCallParser("deepseek_v3").parse(text).contents) == [("error", text)]
    typed = f"{DS_BEGIN}{CALL_BEGIN}tool{SEP}f\n```json\n{{}}\n```{CALL_END}{DS_END}"
    assert "not 'function'" in errors(TextToolCallParser("deepseek_v3").parse(typed).contents)[0]


def test_deepseek_v31_rejects_v3_calls() -> None:
    text = f"{DS_BEGIN}{v3('f', '{}')}{DS_END}"
    assert comparable(TextToolCallParser("deepseek_v31").parse(text).contents) == [("error", text)]


def test_deepseek_unclosed_section_at_end_of_stream() -> None:
    text = f"ok {DS_BEGIN}{v31('f', '{}')}"
    result = TextToolCallParser("deepseek_v31").parse(text)
    assert result.content == "ok "
    (call,) = result.tool_calls
    assert call.name == "f" and call.error is not None


@pytest.mark.parametrize("after", ["!", " x", "a"])
def test_a_section_marker_in_prose_is_released_as_text_at_once(after: str) -> None:
    # Where the servers keep the text inside a section (DeepSeek), only a token can follow.
    text = f"Write {DS_BEGIN}{after} to open the section"
    parser = TextToolCallParser("deepseek_v31")
    assert comparable(parser.feed(text)) == [("text", text)]
    assert parser.finish() == []


def test_deepseek_section_without_calls_is_error_text() -> None:
    section = f"{DS_BEGIN}\n{DS_END}"
    result = TextToolCallParser("deepseek_v31").parse(f"x {section}").contents
    assert comparable(result) == [("text", "x "), ("error", section)]


def test_deepseek_section_not_closed_before_the_next_one() -> None:
    first = f"{DS_BEGIN}{v31('f', '{}')}"
    text = f"x {first}{DS_BEGIN}{v31('g', '{}')}{DS_END}"
    result = TextToolCallParser("deepseek_v31").parse(text).contents
    assert comparable(result) == [
        ("text", "x "),
        ("error", first),
        ("call", "g", {}, "{}", None),
    ]
    assert errors(result) == ["deepseek_v31: section not closed before the next section"]


@pytest.mark.parametrize(("fmt", "call"), [("deepseek_v3", v3), ("deepseek_v31", v31)])
def test_deepseek_bad_call_between_good_ones_and_text_between_calls(
    fmt: str, call: Callable[[str, str], str]
) -> None:
    bad = f"{CALL_BEGIN}no separator{CALL_END}"
    good = call("g", '{"a": 1}')
    text = f"{DS_BEGIN}{good}{bad}\n{good} junk {DS_END}"
    result = TextToolCallParser(fmt).parse(text)
    assert comparable(result.contents) == [
        ("call", "g", {"a": 1}, '{"a": 1}', None),
        ("error", bad),
        ("call", "g", {"a": 1}, '{"a": 1}', None),
        ("error", " junk "),
    ]
    assert [c.raw for c in result.tool_calls] == [good, good]
    assert_split_invariant(text, fmt)


def test_deepseek_unclosed_section_after_a_complete_call_is_that_call() -> None:
    text = f"ok {DS_BEGIN}{v31('f', '{}')}"
    assert comparable(TextToolCallParser("deepseek_v31").parse(text).contents) == [
        ("text", "ok "),
        ("call", "f", {}, "{}", f"deepseek_v31: {DS_BEGIN} not closed at end of stream"),
    ]


def test_deepseek_call_cut_inside_a_section_is_error_text_as_it_came() -> None:
    cut_off = f'{CALL_BEGIN}g{SEP}{{"a"'
    text = f"ok {DS_BEGIN}{v31('f', '{}')}{cut_off}"
    contents = TextToolCallParser("deepseek_v31").parse(text).contents
    assert comparable(contents) == [
        ("text", "ok "),
        ("call", "f", {}, "{}", f"deepseek_v31: {DS_BEGIN} not closed at end of stream"),
        ("error", cut_off),
    ]


def test_deepseek_call_cut_outside_a_section_is_closed_as_a_call_alone() -> None:
    text = f'ok {CALL_BEGIN}g{SEP}{{"a": 1}}'
    (call,) = TextToolCallParser("deepseek_v31").parse(text).tool_calls
    assert (call.name, call.arguments, call.raw) == ("g", {"a": 1}, text.removeprefix("ok "))
    assert call.error == f"deepseek_v31: {CALL_BEGIN} not closed at end of stream"


def test_deepseek_call_cut_by_the_next_call_is_error_text_with_its_reason() -> None:
    cut_off = f"{CALL_BEGIN}foo  "
    contents = TextToolCallParser("deepseek_v31").parse(f"x {cut_off}{v31('f', '{}')}").contents
    assert comparable(contents) == [
        ("text", "x "),
        ("error", cut_off),
        ("call", "f", {}, "{}", None),
    ]
    assert errors(contents) == ["deepseek_v31: unexpected text between calls"]


def test_kimi_call_outside_a_section_ends_at_its_own_end_marker() -> None:
    text = f"x {kimi('functions.f:0', '{}')} y"
    parser = TextToolCallParser("kimi_k2")
    assert comparable(parser.feed(text)) == [
        ("text", "x "),
        ("call", "f", {}, "{}", None),
        ("text", " y"),
    ]
    assert parser.finish() == []

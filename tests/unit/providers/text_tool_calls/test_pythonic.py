"""pythonic: research/FORMATS.md §5 — Python call lists, parsed as literals only."""

from __future__ import annotations

import pytest

from providers.text_tool_calls import TextToolCallParser
from tests.unit.providers.text_tool_calls.helpers import (
    assert_split_invariant,
    calls,
    comparable,
    errors,
    stream,
)

REGISTER = (
    "[get_weather(city='San Francisco', metric='celsius'), register_user(name='John Doe', "
    "age=37, address={'city': 'San Francisco', 'state': 'CA'}, role=None, passed_test=True, "
    "aliases=['John', 'Johnny'])]"
)


def parse(text: str, fmt: str = "pythonic") -> list[tuple[object, ...]]:
    return comparable(TextToolCallParser(fmt).parse(text).contents)


def test_formats_md_example() -> None:
    result = TextToolCallParser("pythonic").parse(REGISTER)
    assert calls(result.contents) == [
        ("get_weather", {"city": "San Francisco", "metric": "celsius"}),
        (
            "register_user",
            {
                "name": "John Doe",
                "age": 37,
                "address": {"city": "San Francisco", "state": "CA"},
                "role": None,
                "passed_test": True,
                "aliases": ["John", "Johnny"],
            },
        ),
    ]
    assert result.tool_calls[1].raw_arguments.endswith(
        '"role": null, "passed_test": true, "aliases": ["John", "Johnny"]}'
    )
    assert_split_invariant(f"Sure. {REGISTER} Done.", "pythonic")


def test_escaped_quotes() -> None:
    text = "[get_weather(city='Martha\\'s Vineyard')]"
    assert calls(TextToolCallParser("pythonic").parse(text).contents) == [
        ("get_weather", {"city": "Martha's Vineyard"})
    ]
    assert_split_invariant(text, "pythonic")


def test_llama4_tags_keep_the_text_around() -> None:
    # SGLang: "…Mars.  In this way…", two spaces where the block was.
    text = "…Mars. <|python_start|>[get_weather(city='Mars')]<|python_end|> In this way…"
    result = TextToolCallParser("pythonic").parse(text)
    assert result.content == "…Mars.  In this way…"
    assert calls(result.contents) == [("get_weather", {"city": "Mars"})]
    assert_split_invariant(text, "pythonic")
    assert_split_invariant(text, "auto")


def test_dotted_names_are_kept_whole() -> None:
    assert calls(TextToolCallParser("pythonic").parse("[math.sum(a=1, b=2)]").contents) == [
        ("math.sum", {"a": 1, "b": 2})
    ]


@pytest.mark.parametrize(
    ("block", "reason"),
    [
        ("[f(1)]", "positional"),
        ("[f(a=os.system('rm -rf /'))]", "argument a"),  # never evaluated
        ("[f(a=x)]", "argument a"),
        ("[f(a={1, 2})]", "argument a"),  # a set has no JSON equivalent
        ("[f(a=1e999)]", "argument a"),
        ("[f(**kw)]", "**kwargs"),
        ("[f(a=1), 2]", "not a call"),
        ("[f(a=1 b=2)]", "not a Python call list"),
    ],
)
def test_non_literal_or_odd_calls_are_error_text(block: str, reason: str) -> None:
    result = TextToolCallParser("pythonic").parse(block)
    assert comparable(result.contents) == [("error", block)]
    assert reason in errors(result.contents)[0]


def test_tuples_become_lists() -> None:
    assert calls(TextToolCallParser("pythonic").parse("[f(a=(1, 2))]").contents) == [
        ("f", {"a": [1, 2]})
    ]


@pytest.mark.parametrize(
    "text",
    ["see [the docs](https://x.y) and [1, 2]", "[a, b]", "[ ]", "[abc", "x[0] = y[1]"],
)
def test_brackets_in_prose_are_ordinary_text(text: str) -> None:
    assert parse(text) == [("text", text)]
    assert_split_invariant(text, "pythonic")


def test_bare_list_is_not_detected_by_auto() -> None:
    assert parse("[get_weather(city='x')]", "auto") == [("text", "[get_weather(city='x')]")]


def test_unclosed_list_at_end_of_stream() -> None:
    assert parse("[f(a='x'") == [("error", "[f(a='x'")]


def test_reasons_are_reproducible() -> None:
    # ast's own message names a node by its memory address; the reason must not.
    block = "[f(a=x)]"
    first = errors(TextToolCallParser("pythonic").parse(block).contents)
    assert first == errors(TextToolCallParser("pythonic").parse(block).contents)
    assert "0x" not in first[0]


@pytest.mark.parametrize(
    "text",
    [
        "[wow!] nice",  # a character before "(" in ASCII ends the name too
        "[see: (docs)]",
        "[1st(a=1)]",  # a name cannot start with a digit
        "[get weather(city='x')]",  # nor hold a space
        "a\n[1f(x=2)] b",
        "[(see above)]",  # no name at all
    ],
)
def test_lists_that_are_not_name_and_paren_are_ordinary_text(text: str) -> None:
    assert parse(text) == [("text", text)]
    assert_split_invariant(text, "pythonic")


@pytest.mark.parametrize("text", ["[ f(a=1)]", "[f (a=1)]", "[\tf\n(a=1)]", "Here: [ f (a=1) ]"])
def test_space_around_the_name_is_allowed(text: str) -> None:
    assert calls(TextToolCallParser("pythonic").parse(text).contents) == [("f", {"a": 1})]
    assert_split_invariant(text, "pythonic")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("[f(a='C:\\\\')]", "C:\\"),  # an escaped backslash does not close the string
        ("[f(a='x\\n]')]", "x\n]"),
        ("[f(a='it\\'')]", "it'"),  # an escaped quote right before the closing one
        ('[f(a="say \\"hi\\"")]', 'say "hi"'),
    ],
)
def test_escapes_in_strings_do_not_end_the_list(text: str, value: str) -> None:
    assert calls(TextToolCallParser("pythonic").parse(text).contents) == [("f", {"a": value})]
    assert_split_invariant(text, "pythonic")


def test_raw_arguments_keep_non_ascii_characters() -> None:
    (call,) = TextToolCallParser("pythonic").parse("[f(city='Zürich')]").tool_calls
    assert call.raw_arguments == '{"city": "Zürich"}'


@pytest.mark.parametrize(
    "text",
    [
        "<|python_start|>{not a call}<|python_end|>",
        "<|python_start|>`f()`<|python_end|>",
        "<|python_start|>1 + 1<|python_end|>",
    ],
)
def test_llama4_tag_not_followed_by_a_list_or_name_is_text(text: str) -> None:
    assert parse(text) == [("text", text)]
    assert parse(text, "auto") == [("text", text)]


def test_a_list_far_into_the_text_is_tracked() -> None:
    # Offsets past 256 are distinct int objects: the tracker must compare them by value.
    prose = "word " * 60
    assert parse(prose + "[abc") == [("text", prose + "[abc")]
    text = prose + "[f(a='" + "x" * 300 + "')] done"
    assert calls(TextToolCallParser("pythonic").parse(text).contents) == [("f", {"a": "x" * 300})]
    assert_split_invariant(prose + "[get weather] [f(a=1)]", "pythonic")


@pytest.mark.parametrize(
    ("deltas", "value"),
    [
        (["[f(a='it\\", "", "'')]"], "it'"),  # an empty delta after the backslash
        (["[f(a='" + "x" * 300 + "\\", "'')]"], "x" * 300 + "'"),  # a long delta ending in it
    ],
)
def test_an_escape_split_across_deltas_still_escapes(deltas: list[str], value: str) -> None:
    assert calls(stream(TextToolCallParser("pythonic"), deltas)) == [("f", {"a": value})]

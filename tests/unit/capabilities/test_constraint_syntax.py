"""A choice written as a regex or a GBNF grammar derives exactly the options, whatever they hold.

The regex is checked with Python's ``re`` (the client's own check uses it, and the servers' engines
read the same escapes); the GBNF text with a reader of string literals that follows llama.cpp's
``parse_char`` and ``parse_sequence`` (``\\x``, ``\\u``, ``\\U``, the named escapes, a raw
character otherwise), so a literal the server would read differently fails here.
"""

from __future__ import annotations

import re

from hypothesis import example, given
from hypothesis import strategies as st

from capabilities.constraint_syntax import (
    gbnf_alternation,
    gbnf_literal,
    regex_alternation,
    regex_literal,
)

OPTION = st.text(min_size=1, max_size=12)
OPTIONS = st.lists(OPTION, min_size=1, max_size=6)
AWKWARD = [
    'say "hi"',
    "back\\slash",
    "two\nlines",
    "tab\there",
    "naïve ☃ 😀",
    "a|b",
    "(x)*",
    "\x00\x7f",
]

_GBNF_NAMED = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "[": "[", "]": "]"}


def read_gbnf_literal(text: str) -> tuple[str, str]:
    """One ``"..."`` literal at the start of ``text``: its code points and what follows."""
    assert text[0] == '"', text
    out: list[str] = []
    i = 1
    while text[i] != '"':
        char = text[i]
        assert char.isascii() and char not in "\n\r", "raw non-ASCII or line break in a literal"
        if char != "\\":
            out.append(char)
            i += 1
            continue
        kind = text[i + 1]
        width = {"x": 2, "u": 4, "U": 8}.get(kind)
        if width is None:
            out.append(_GBNF_NAMED[kind])
            i += 2
        else:
            digits = text[i + 2 : i + 2 + width]
            assert re.fullmatch(r"[0-9A-Fa-f]+", digits) and len(digits) == width
            out.append(chr(int(digits, 16)))
            i += 2 + width
    return "".join(out), text[i + 1 :]


def read_gbnf_alternation(grammar: str) -> list[str]:
    """The strings a ``root ::= "a" | "b"`` grammar derives."""
    assert grammar.startswith("root ::= ")
    rest = grammar.removeprefix("root ::= ")
    derived = []
    while True:
        literal, rest = read_gbnf_literal(rest)
        derived.append(literal)
        if not rest:
            return derived
        assert rest.startswith(" | ")
        rest = rest[3:]


@given(OPTION)
@example('say "hi"')
@example("back\\slash")
@example("naïve ☃ 😀")
def test_a_gbnf_literal_reads_back_as_the_text_and_is_plain_ascii(text: str) -> None:
    literal = gbnf_literal(text)
    assert literal.isascii()
    assert read_gbnf_literal(literal) == (text, "")


@given(OPTIONS)
@example(AWKWARD)
def test_the_gbnf_alternation_derives_exactly_the_options(options: list[str]) -> None:
    assert read_gbnf_alternation(gbnf_alternation(options)) == list(dict.fromkeys(options))


@given(OPTION)
@example("a.b*c")
def test_a_regex_literal_matches_exactly_its_text(text: str) -> None:
    assert re.fullmatch(regex_literal(text), text) is not None


@given(OPTIONS, st.lists(st.text(max_size=14), max_size=10))
@example(AWKWARD, ["ab", "a", "", "(x)", "xx", "a|b|", "say hi"])
@example(["a", "ab"], ["abab", "aab", "b"])
def test_the_regex_alternation_fullmatches_exactly_the_options(
    options: list[str], others: list[str]
) -> None:
    pattern = re.compile(regex_alternation(options))
    for option in options:
        assert pattern.fullmatch(option) is not None
    for other in others:
        assert (pattern.fullmatch(other) is not None) == (other in options)
    for option in options:  # and nothing one character longer or shorter
        assert (pattern.fullmatch(option + "x") is not None) == (option + "x" in options)
        assert (pattern.fullmatch(option[:-1]) is not None) == (option[:-1] in options)


def test_the_regex_keeps_control_characters_out_of_the_pattern_text() -> None:
    pattern = regex_literal("a\nb\x01c")
    assert "\n" not in pattern and "\x01" not in pattern
    assert pattern == "a\\nb\\x01c"


def test_the_longest_option_comes_first_in_the_regex() -> None:
    assert regex_alternation(["a", "abc", "ab"]) == "(?:abc|ab|a)"

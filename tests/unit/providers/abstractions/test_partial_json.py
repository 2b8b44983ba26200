"""``partial_json``: the JSON of an answer still arriving, and its bounds."""

from __future__ import annotations

from typing import Any

import pytest

from providers.abstractions.partial_json import PartialAnswer, read_partial


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("", None),
        ("   ", None),
        ("{", {}),
        ('{"a": 1, "b": "hel', {"a": 1, "b": "hel"}),
        ('{"a": [1, {"c": "x', {"a": [1, {"c": "x"}]}),
        ('{"a": tr', {}),
        ("[1, 2", [1, 2]),
        ('{"a": 1} and then prose', {"a": 1}),
        ("Sure! {", None),
        ('"just a string', None),
        ("<think>{not yet", None),
        ('<think>x</think> {"a": 1', {"a": 1}),
        ("```", None),
        ("```json", None),
        ('```json\n{"a": [1', {"a": [1]}),
        ('```\n{"a": 1}\n```\nDone.', {"a": 1}),
    ],
)
def test_read_partial(text: str, value: Any) -> None:
    assert read_partial(text, max_depth=200) == value


def test_read_partial_refuses_depth_past_the_limit_and_past_pydantics_own() -> None:
    assert read_partial('{"a": {"b": {"c": 1', max_depth=3) == {"a": {"b": {"c": 1}}}
    assert read_partial('{"a": {"b": {"c": [1', max_depth=3) is None
    assert read_partial("[" * 5000, max_depth=10_000) is None


def test_an_unreadable_update_keeps_the_last_value_and_a_reset_clears_it() -> None:
    assert PartialAnswer(max_depth=5, max_length=1000).read() is None, "nothing yet"
    deep = PartialAnswer(max_depth=3, max_length=1000)
    deep.add('{"a": [1')
    assert deep.read() == {"a": [1]}
    deep.add(", [[[[")
    assert deep.read() == {"a": [1]}, "past the depth limit: the last value stays"
    deep.reset()
    assert deep.value is None
    deep.add('{"b": 2}')
    assert deep.read() == {"b": 2}


def test_past_the_length_limit_the_value_stays() -> None:
    answer = PartialAnswer(max_depth=200, max_length=10)
    answer.add('{"a": 1, ')
    assert answer.read() == {"a": 1}
    answer.add('"b": 2}')
    assert answer.read() == {"a": 1}


def test_a_long_answer_is_read_again_once_it_has_grown_by_a_sixteenth() -> None:
    answer = PartialAnswer(max_depth=200, max_length=10**8)
    answer.add('{"s": "' + "x" * 200_000)
    assert answer.read() == {"s": "x" * 200_000}
    answer.add('", "n": 1')
    assert answer.read() == {"s": "x" * 200_000}, "a small step past 64 KiB is not read"
    answer.add(", " + '"t": "' + "y" * 20_000)
    value = answer.read()
    assert value["n"] == 1 and value["t"] == "y" * 20_000

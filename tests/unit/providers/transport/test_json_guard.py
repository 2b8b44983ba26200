"""``providers.transport.json_guard``: nesting refused past the limit, exactly, and only then."""

from __future__ import annotations

import json

import pytest

from providers.abstractions.errors import InvalidResponseError, ResponseTooLargeError
from providers.transport.json_guard import load_object, loads_within, nests_deeper


def _nested(depth: int) -> str:
    return '{"a": ' * (depth - 1) + "[]" + "}" * (depth - 1)


@pytest.mark.parametrize("depth", [1, 2, 10, 50])
def test_nesting_up_to_the_limit_passes_and_one_more_level_does_not(depth: int) -> None:
    text = _nested(depth)
    assert not nests_deeper(json.loads(text), text, depth)
    assert loads_within(text, depth) == json.loads(text)
    with pytest.raises(ResponseTooLargeError) as caught:
        loads_within(_nested(depth + 1), depth)
    assert caught.value.limit == "max_json_depth"


def test_brackets_inside_strings_are_not_nesting() -> None:
    text = json.dumps({"text": "[" * 500 + "{" * 500})
    assert not nests_deeper(json.loads(text), text, 3)


def test_nesting_past_the_recursion_limit_is_the_typed_error() -> None:
    with pytest.raises(ResponseTooLargeError):
        loads_within("[" * 100_000 + "]" * 100_000, 200)


def test_load_object_refuses_what_is_not_a_json_object() -> None:
    with pytest.raises(InvalidResponseError, match="not JSON"):
        load_object(b"<html>", 10, status=200)
    with pytest.raises(InvalidResponseError, match="not an object"):
        load_object(b"[1, 2]", 10)
    assert load_object(b'{"a": 1}', 10) == {"a": 1}

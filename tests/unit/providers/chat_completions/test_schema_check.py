"""The schema check: each keyword decoding engines enforce, JSON's number and boolean rules,
references, and the keywords it leaves alone."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from providers import ChatResponseFormat
from providers.chat_completions.schema_check import schema_problems

CASES: list[tuple[dict[str, Any], Any, bool]] = [
    ({"type": "integer"}, 3, True),
    ({"type": "integer"}, 3.0, True),  # one number type in JSON
    ({"type": "integer"}, 3.5, False),
    ({"type": "integer"}, True, False),  # true is not 1
    ({"type": "number"}, False, False),
    ({"type": ["string", "null"]}, None, True),
    ({"type": "boolean"}, 0, False),
    ({"enum": [1, "a"]}, "a", True),
    ({"enum": [1, "a"]}, True, False),
    ({"const": {"a": [1]}}, {"a": [1.0]}, True),
    ({"required": ["a"]}, {}, False),
    ({"properties": {"a": {"type": "string"}}}, {"a": 1}, False),
    ({"additionalProperties": False, "properties": {"a": {}}}, {"a": 1, "b": 2}, False),
    ({"additionalProperties": {"type": "integer"}}, {"x": 1, "y": "2"}, False),
    (
        {"patternProperties": {"^x": {"type": "integer"}}, "additionalProperties": False},
        {"x1": 1},
        True,
    ),
    ({"items": {"type": "integer"}}, [1, 2, "3"], False),
    ({"prefixItems": [{"type": "string"}], "items": False}, ["a"], True),
    ({"prefixItems": [{"type": "string"}], "items": False}, ["a", 1], False),
    ({"minItems": 2, "maxItems": 3}, [1], False),
    ({"uniqueItems": True}, [1, 2, 1], False),
    ({"minLength": 2, "maxLength": 3}, "abcd", False),
    ({"pattern": "^[a-z]+$"}, "abc", True),
    ({"pattern": "[0-9]"}, "a1b", True),  # not anchored
    ({"pattern": "^[a-z]+$"}, "ab1", False),
    ({"minimum": 0, "maximum": 10}, 11, False),
    ({"exclusiveMinimum": 0}, 0, False),
    ({"exclusiveMaximum": 1}, 0.5, True),
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, 1, True),
    ({"anyOf": [{"type": "string"}, {"type": "integer"}]}, [], False),
    ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 1, False),  # both
    ({"allOf": [{"minimum": 1}, {"maximum": 2}]}, 3, False),
    ({"not": {"type": "null"}}, None, False),
    ({"$defs": {"P": {"type": "integer"}}, "items": {"$ref": "#/$defs/P"}}, [1, "x"], False),
    ({"$ref": "https://example.com/remote"}, "anything", True),  # remote: not checked
    ({"format": "date-time"}, "not a date", True),  # not checked
    ({"minProperties": 1}, {}, False),
]


@pytest.mark.parametrize(("schema", "value", "obeys"), CASES)
def test_keywords(schema: dict[str, Any], value: Any, obeys: bool) -> None:
    assert (schema_problems(value, schema) == []) == obeys


def test_problems_name_the_path_and_stop_at_the_limit() -> None:
    schema = {"properties": {"items": {"items": {"properties": {"name": {"type": "string"}}}}}}
    value = {"items": [{"name": "a"}, {"name": 1}, {"name": 2}]}
    assert schema_problems(value, schema) == [
        "items.1.name: expected string, got integer",
        "items.2.name: expected string, got integer",
    ]
    assert len(schema_problems(list(range(9)), {"items": {"type": "string"}}, limit=3)) == 3


def test_a_recursive_schema_is_walked_and_a_self_reference_is_not_judged() -> None:
    tree = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#"}}}}
    assert schema_problems({"kids": [{"kids": []}]}, tree) == []
    assert schema_problems({"kids": [{"kids": [1]}]}, tree) != []
    assert schema_problems(1, {"$ref": "#"}) == []


class Inner(BaseModel):
    tags: list[str]


class Outer(BaseModel):
    name: str
    inner: Inner
    score: float | None


def test_a_pydantic_schema_accepts_what_the_type_accepts() -> None:
    schema = ChatResponseFormat.for_type(Outer).schema
    good = {"name": "a", "inner": {"tags": ["x"]}, "score": None}
    assert schema_problems(good, schema) == []
    bad = {"name": "a", "inner": {"tags": [1]}, "score": 1}
    assert schema_problems(bad, schema) == ["inner.tags.0: expected string, got integer"]

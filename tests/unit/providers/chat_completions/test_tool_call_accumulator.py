"""Merging streamed tool-call deltas (research/wire.md §3 and §7.6)."""

from __future__ import annotations

import json
import re
from types import MappingProxyType
from typing import Any

import pytest

from providers.abstractions.contents import FunctionCallContent
from providers.chat_completions.tool_call_accumulator import ToolCallAccumulator, parse_arguments


def merge(*chunks: list[dict[str, Any]]) -> list[FunctionCallContent]:
    accumulator = ToolCallAccumulator()
    for entries in chunks:
        accumulator.add(entries)
    return accumulator.flush()


def fn(name: str | None = None, arguments: Any = None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if name is not None:
        out["name"] = name
    if arguments is not None:
        out["arguments"] = arguments
    return out


def test_openai_style_fragments() -> None:
    (call,) = merge(
        [{"index": 0, "id": "call_1", "type": "function", "function": fn("get_weather", "")}],
        [{"index": 0, "function": fn(arguments='{"city"')}],
        [{"index": 0, "function": fn(arguments=': "Paris"}')}],
    )
    assert call.call_id == "call_1"
    assert call.name == "get_weather"
    assert call.arguments == {"city": "Paris"}
    assert call.raw_arguments == '{"city": "Paris"}'
    assert call.error is None


def test_several_entries_in_one_chunk() -> None:
    calls = merge(
        [
            {"index": 0, "id": "a", "function": fn("f", '{"x": 1}')},
            {"index": 1, "id": "b", "function": fn("g", '{"y": 2}')},
        ]
    )
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [
        ("a", "f", {"x": 1}),
        ("b", "g", {"y": 2}),
    ]


def test_same_index_twice_in_one_chunk_vllm_name_then_args() -> None:
    (call,) = merge(
        [
            {"id": "chatcmpl-tool-1", "type": "function", "index": 0, "function": fn("get")},
            {"index": 0, "function": fn(arguments='{"q": ')},
        ],
        [{"index": 0, "function": fn(arguments='"x"}')}],
    )
    assert (call.call_id, call.name, call.arguments) == ("chatcmpl-tool-1", "get", {"q": "x"})


def test_missing_index_continues_the_last_call() -> None:
    (call,) = merge(
        [{"index": 0, "id": "a", "function": fn("f", '{"k": ')}],
        [{"function": fn(arguments="[1, ")}],
        [{"function": fn(arguments="2]}")}],
    )
    assert call.arguments == {"k": [1, 2]}


def test_missing_index_on_the_very_first_entry() -> None:
    (call,) = merge([{"id": "a", "function": fn("f", "{}")}])
    assert (call.call_id, call.name, call.arguments) == ("a", "f", {})


def test_new_id_with_missing_index_starts_a_new_call() -> None:
    calls = merge(
        [{"id": "a", "function": fn("f", '{"n": 1}')}],
        [{"id": "b", "function": fn("g", '{"n": 2}')}],
        [{"function": fn(arguments="")}],
    )
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [
        ("a", "f", {"n": 1}),
        ("b", "g", {"n": 2}),
    ]


def test_same_id_with_missing_index_continues() -> None:
    (call,) = merge(
        [{"id": "a", "function": fn("f", '{"n"')}],
        [{"id": "a", "function": fn(arguments=": 1}")}],
    )
    assert call.arguments == {"n": 1}


def test_sglang_null_id_and_null_name_fragments() -> None:
    (call,) = merge(
        [{"id": "call_abc", "index": 0, "type": "function", "function": fn("get_weather", "")}],
        [
            {
                "id": None,
                "index": 0,
                "type": "function",
                "function": {"name": None, "arguments": '{"city": '},
            }
        ],
        [
            {
                "id": None,
                "index": 0,
                "type": "function",
                "function": {"name": None, "arguments": '"Paris"}'},
            }
        ],
    )
    assert call.call_id == "call_abc"
    assert call.name == "get_weather"
    assert call.arguments == {"city": "Paris"}
    assert call.additional_properties is None


def test_llamacpp_resent_full_name_is_set_not_appended() -> None:
    (call,) = merge(
        [{"index": 0, "id": "X1", "type": "function", "function": fn("get")}],
        [{"index": 0, "id": "X1", "type": "function", "function": fn("get_weather")}],
        [{"index": 0, "function": fn(arguments='{"city":"Oslo"}')}],
        [{"index": 0, "id": "X1", "type": "function", "function": fn("get_weather")}],
    )
    assert call.name == "get_weather"
    assert call.call_id == "X1"
    assert call.arguments == {"city": "Oslo"}


def test_whole_call_in_one_chunk() -> None:
    (call,) = merge(
        [
            {
                "index": 0,
                "id": "Zx9",
                "type": "function",
                "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
            }
        ]
    )
    assert (call.call_id, call.name, call.arguments, call.raw_arguments) == (
        "Zx9",
        "add",
        {"a": 1, "b": 2},
        '{"a": 1, "b": 2}',
    )


def test_arguments_given_as_a_json_object() -> None:
    (call,) = merge([{"index": 0, "id": "a", "function": fn("f", {"city": "Zürich", "n": [1]})}])
    assert call.arguments == {"city": "Zürich", "n": [1]}
    assert json.loads(call.raw_arguments) == {"city": "Zürich", "n": [1]}
    assert call.error is None


def test_unparseable_arguments_surface_an_error_and_keep_the_raw_text() -> None:
    (call,) = merge([{"index": 0, "id": "a", "function": fn("f", '{"city": "Par')}])
    assert call.name == "f"
    assert call.arguments == {}
    assert call.raw_arguments == '{"city": "Par'
    assert call.error is not None


@pytest.mark.parametrize("raw", ["[1, 2]", '"text"', "42", "null", "true"])
def test_valid_json_that_is_not_an_object_is_an_error(raw: str) -> None:
    (call,) = merge([{"index": 0, "id": "a", "function": fn("f", raw)}])
    assert call.error is not None
    assert call.arguments == {}
    assert call.raw_arguments == raw


@pytest.mark.parametrize("raw", [None, "", "   "])
def test_empty_arguments_are_an_empty_object_without_error(raw: str | None) -> None:
    (call,) = merge([{"index": 0, "id": "a", "function": fn("f", raw)}])
    assert call.arguments == {}
    assert call.error is None


def test_parallel_calls_come_out_in_index_order() -> None:
    calls = merge(
        [{"index": 1, "id": "b", "function": fn("second", "")}],
        [{"index": 0, "id": "a", "function": fn("first", "")}],
        [{"index": 2, "id": "c", "function": fn("third", "{}")}],
        [{"index": 1, "function": fn(arguments='{"i": 1}')}],
        [{"index": 0, "function": fn(arguments='{"i": 0}')}],
    )
    assert [(c.name, c.arguments) for c in calls] == [
        ("first", {"i": 0}),
        ("second", {"i": 1}),
        ("third", {}),
    ]


def test_interleaved_parallel_fragments() -> None:
    calls = merge(
        [{"index": 0, "id": "a", "function": fn("f", '{"x": ')}],
        [{"index": 1, "id": "b", "function": fn("g", '{"y": ')}],
        [{"index": 0, "function": fn(arguments="1}")}],
        [{"index": 1, "function": fn(arguments="2}")}],
    )
    assert [c.arguments for c in calls] == [{"x": 1}, {"y": 2}]


def test_call_without_name_is_surfaced_with_an_error() -> None:
    (call,) = merge([{"index": 0, "id": "a", "function": fn(arguments="{}")}])
    assert call.name == ""
    assert call.error is not None


def test_missing_id_gets_a_generated_one() -> None:
    (call,) = merge([{"index": 0, "function": fn("f", "{}")}])
    assert call.call_id


def test_unknown_entry_fields_are_kept() -> None:
    (call,) = merge([{"index": 0, "id": "a", "function": fn("f", "{}"), "extra_thing": 7}])
    assert call.additional_properties == {"extra_thing": 7}


def test_non_mapping_entries_are_ignored() -> None:
    (call,) = merge([None, "junk", {"index": 0, "id": "a", "function": fn("f", "{}")}])  # type: ignore[list-item]
    assert call.name == "f"


def test_flush_empties_the_accumulator() -> None:
    accumulator = ToolCallAccumulator()
    accumulator.add([{"index": 0, "id": "a", "function": fn("f", "{}")}])
    assert accumulator
    assert len(accumulator.flush()) == 1
    assert not accumulator
    assert accumulator.flush() == []


def test_parse_arguments_directly() -> None:
    assert parse_arguments('{"a": [1, {"b": null}]}') == ({"a": [1, {"b": None}]}, None)
    assert parse_arguments("") == ({}, None)
    value, error = parse_arguments("{oops")
    assert value == {}
    assert error is not None


def test_arguments_whitespace_differences_parse_the_same() -> None:
    compact = merge([{"index": 0, "id": "a", "function": fn("f", '{"a":1,"b":"x"}')}])[0]
    spaced = merge([{"index": 0, "id": "a", "function": fn("f", '{ "a" : 1 , "b" : "x" }')}])[0]
    assert compact.arguments == spaced.arguments == {"a": 1, "b": "x"}


def test_entries_and_functions_may_be_any_mapping() -> None:
    entry = {"index": 0, "id": "a", "function": MappingProxyType(fn("f", '{"x": 1}'))}
    (call,) = merge([MappingProxyType(entry)])  # type: ignore[list-item]
    assert (call.call_id, call.name, call.arguments) == ("a", "f", {"x": 1})


@pytest.mark.parametrize("function", [None, "f", ["f"]])
def test_a_function_field_that_is_not_an_object_is_ignored(function: Any) -> None:
    (call,) = merge([{"index": 0, "id": "a", "function": function}])
    assert (call.call_id, call.name, call.raw_arguments) == ("a", "", "")
    assert call.error == "the server sent no function name for this tool call"


@pytest.mark.parametrize("name", ["", 7, ["g"]])
def test_a_name_that_is_empty_or_not_a_string_keeps_the_name_before(name: Any) -> None:
    (call,) = merge(
        [{"index": 0, "id": "a", "function": fn("f", "{}")}],
        [{"index": 0, "function": {"name": name}}],
    )
    assert call.name == "f"


class _Text(str):
    """A ``str`` subclass: an empty one is not CPython's one empty ``str`` object."""


@pytest.mark.parametrize("empty", ["", _Text("")])
def test_a_numeric_id_is_kept_as_text_and_an_empty_one_changes_nothing(empty: str) -> None:
    (call,) = merge([{"index": 0, "id": 5, "function": fn("f", "{}")}])
    assert call.call_id == "5"
    (call,) = merge(
        [{"index": 0, "id": "a", "function": fn("f", "{}")}],
        [{"index": 0, "id": empty, "function": fn(arguments="")}],
    )
    assert call.call_id == "a"


def test_unknown_fields_next_to_every_known_one_are_kept_and_nulls_dropped() -> None:
    entry = {"index": 0, "id": "a", "type": "function", "function": fn("f", "{}")}
    (call,) = merge([{**entry, "extra_thing": 7, "other": None}])
    assert call.additional_properties == {"extra_thing": 7}


def test_first_entry_without_index_is_call_zero() -> None:
    (call,) = merge(
        [{"id": "a", "function": fn("f", '{"n": ')}],
        [{"index": 0, "function": fn(arguments="1}")}],
    )
    assert (call.call_id, call.arguments) == ("a", {"n": 1})


def test_new_ids_without_index_take_the_next_index_each() -> None:
    """Three calls (indices 0, 1, 2), then a fragment naming index 1 continues the second."""
    calls = merge(
        [{"id": "a", "function": fn("f", '{"n": 1}')}],
        [{"id": "b", "function": fn("g", '{"n": ')}],
        [{"id": "c", "function": fn("h", '{"n": 3}')}],
        [{"index": 1, "function": fn(arguments="2}")}],
    )
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [
        ("a", "f", {"n": 1}),
        ("b", "g", {"n": 2}),
        ("c", "h", {"n": 3}),
    ]


def test_a_generated_id_looks_like_openais() -> None:
    (call,) = merge([{"index": 0, "function": fn("f", "{}")}])
    assert re.fullmatch(r"call_[0-9a-f]{24}", call.call_id)


def test_a_call_without_name_and_with_bad_arguments_gives_both_reasons() -> None:
    (call,) = merge([{"index": 0, "id": "a", "function": fn(arguments="{oops")}])
    assert call.error is not None
    assert call.error.startswith(
        "the server sent no function name for this tool call; arguments are not valid JSON ("
    )


def test_a_tool_not_offered_is_flagged_with_the_offered_names() -> None:
    accumulator = ToolCallAccumulator(offered=frozenset({"b_tool", "a_tool"}))
    accumulator.add([{"index": 0, "id": "x", "function": fn("rm_rf", "{}")}])
    accumulator.add([{"index": 1, "id": "y", "function": fn("a_tool", "{}")}])
    first, second = accumulator.flush()
    assert first.error == "tool rm_rf was not offered; offered: a_tool, b_tool"
    assert second.error is None


def test_positional_is_keyword_only() -> None:
    """A bare ``True`` would not say what it means at the call site."""
    with pytest.raises(TypeError):
        ToolCallAccumulator().add([], True)  # type: ignore[call-arg]

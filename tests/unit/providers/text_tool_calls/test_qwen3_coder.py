"""qwen3_coder: research/FORMATS.md §2 — the XML shape, its tolerances, and schema typing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers.abstractions.contents import FunctionCallContent
from providers.abstractions.options import ToolDeclaration
from providers.text_tool_calls import TextToolCallParser
from tests.unit.providers.text_tool_calls.helpers import (
    assert_split_invariant,
    calls,
    comparable,
    errors,
    tool,
)

DALLAS = (
    "<tool_call>\n<function=get_current_weather>\n<parameter=city>\nDallas\n</parameter>\n"
    "<parameter=unit>\nfahrenheit\n</parameter>\n</function>\n</tool_call>"
)


def function(name: str, **params: str) -> str:
    body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in params.items())
    return f"<tool_call>\n<function={name}>\n{body}</function>\n</tool_call>"


def parsed(text: str, tools: Any = None) -> list[tuple[str, dict[str, Any]]]:
    return calls(TextToolCallParser("qwen3_coder", tools).parse(text).contents)


def test_formats_md_example_without_tools_keeps_strings() -> None:
    assert parsed(DALLAS) == [("get_current_weather", {"city": "Dallas", "unit": "fahrenheit"})]
    assert_split_invariant(f"Checking.\n{DALLAS}\nDone.", "qwen3_coder")


def test_values_are_raw_text() -> None:
    text = function("write", path="C:\\Users\\file.txt", body='line1\nline2 "quoted"')
    assert parsed(text) == [
        ("write", {"path": "C:\\Users\\file.txt", "body": 'line1\nline2 "quoted"'})
    ]


def test_exactly_one_newline_is_trimmed_each_side() -> None:
    text = "<function=edit><parameter=code>\n\n    indented\n\n</parameter></function>"
    assert parsed(text) == [("edit", {"code": "\n    indented\n"})]


def test_names_and_keys_are_stripped() -> None:
    text = "<tool_call><function= f ><parameter= k >v</parameter></function></tool_call>"
    assert parsed(text) == [("f", {"k": "v"})]


@pytest.mark.parametrize("between", ["", "\n"])
def test_parallel_calls(between: str) -> None:
    text = function("a", x="1") + between + function("b", y="2")
    assert parsed(text) == [("a", {"x": "1"}), ("b", {"y": "2"})]
    assert_split_invariant(text, "qwen3_coder")


def test_second_tool_call_without_closing_the_first() -> None:
    # vLLM engine: test_consecutive_tool_calls_without_tool_end
    text = (
        "<tool_call>\n<function=a>\n</function>\n"
        "<tool_call>\n<function=b>\n</function>\n</tool_call>"
    )
    assert parsed(text) == [("a", {}), ("b", {})]


def test_several_functions_in_one_block() -> None:
    text = "<tool_call><function=a></function>\n<function=b></function></tool_call>"
    assert parsed(text) == [("a", {}), ("b", {})]


def test_function_without_tool_call_wrapper() -> None:
    # test_extract_tool_calls_fallback_no_tags; SGLang's "tags stripped" branch.
    text = "Sure.<function=get_weather><parameter=city>Paris</parameter></function> ok"
    result = TextToolCallParser("qwen3_coder").parse(text)
    assert calls(result.contents) == [("get_weather", {"city": "Paris"})]
    assert result.content == "Sure. ok"
    assert_split_invariant(text, "qwen3_coder")


def test_malformed_function_is_error_text_and_others_survive() -> None:
    # test_none_tool_calls_filtered: `<function=name` with no `>` is skipped by the servers.
    text = (
        "<tool_call><function=broken\n"
        "<function=ok><parameter=a>1</parameter></function></tool_call>"
    )
    result = TextToolCallParser("qwen3_coder").parse(text)
    assert calls(result.contents) == [("ok", {"a": "1"})]
    assert comparable(result.contents)[0] == ("error", "<function=broken\n")


def test_missing_closing_parameter_tag() -> None:
    text = "<tool_call><function=f><parameter=a>1<parameter=b>2\n</function></tool_call>"
    assert parsed(text) == [("f", {"a": "1", "b": "2"})]


def test_zero_parameters() -> None:
    assert parsed("<tool_call>\n<function=refresh>\n</function>\n</tool_call>") == [("refresh", {})]


def test_raw_arguments_are_json_of_the_converted_values() -> None:
    tools = [tool("f", {"n": {"type": "integer"}})]
    (call,) = TextToolCallParser("qwen3_coder", tools).parse(function("f", n="3", s="é")).tool_calls
    assert call.raw_arguments == json.dumps({"n": 3, "s": "é"}, ensure_ascii=False)


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>{"name": "f", "arguments": {}}</tool_call>',
        "<tool_call><function=f>free text, no parameters</function></tool_call>",
        "<tool_call><function=></function></tool_call>",
    ],
)
def test_blocks_that_are_not_qwen3_coder_are_error_text(text: str) -> None:
    result = TextToolCallParser("qwen3_coder").parse(text)
    assert comparable(result.contents) == [("error", text)]
    assert errors(result.contents)[0].startswith("qwen3_coder: ")


def test_unclosed_at_end_of_stream_is_a_call_with_error() -> None:
    text = "<tool_call>\n<function=f>\n<parameter=a>\n1"
    (call,) = TextToolCallParser("qwen3_coder").parse(text).contents
    assert isinstance(call, FunctionCallContent)
    assert (call.name, call.arguments) == ("f", {"a": "1"})
    assert call.error is not None and "not closed at end of stream" in call.error
    assert_split_invariant(text, "qwen3_coder")


# Typing by the JSON Schema (research/FORMATS.md §2, rule set B).

SCHEMA = {
    "s": {"type": "string"},
    "i": {"type": "integer"},
    "n": {"type": "number"},
    "b": {"type": "boolean"},
    "o": {"type": "object"},
    "a": {"type": "array"},
    "ni": {"type": ["integer", "null"]},
    "ns": {"type": ["string", "null"]},
    "i64": {"type": "int64"},
    "d": {"type": "double"},
    "any": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
    "e": {"enum": [1, 2, 3]},
    "untyped": {"description": "no type"},
}


@pytest.mark.parametrize(
    ("param", "raw", "value"),
    [
        ("s", "1", "1"),  # a string-typed schema wins
        ("s", "true", "true"),
        ("s", "null", "null"),  # null only where the schema allows it
        ("i", "42", 42),
        ("i", "-7", -7),
        ("i", "5.0", 5),
        ("i", "abc", "abc"),  # nothing matches: the text is kept
        ("n", "3.14", 3.14),
        ("n", "5.0", 5),
        ("n", "1e3", 1000),
        ("n", "inf", "inf"),  # non-finite values are refused
        ("n", "nan", "nan"),
        ("b", "true", True),
        ("b", "False", False),
        ("b", "1", True),
        ("b", "0", False),
        ("b", "yes", "yes"),  # not silently False
        ("o", '{"a": [1, 2]}', {"a": [1, 2]}),
        ("o", "{'a': 1, 'b': None}", {"a": 1, "b": None}),  # a Python literal
        ("o", "[1]", "[1]"),
        ("a", '["x", 2]', ["x", 2]),
        ("a", "not json", "not json"),
        ("ni", "null", None),
        ("ni", "7", 7),
        ("ns", "null", None),
        ("ns", "7", "7"),
        ("i64", "9", 9),
        ("d", "2.5", 2.5),
        ("any", "4", 4),
        ("any", "null", None),
        ("e", "2", 2),
        ("untyped", "3", "3"),
        ("unknown", "3", "3"),  # not in the schema: stays a string
    ],
)
def test_values_typed_by_schema(param: str, raw: str, value: Any) -> None:
    tools = [tool("f", SCHEMA)]
    assert parsed(function("f", **{param: raw}), tools) == [("f", {param: value})]


def test_no_tools_means_strings() -> None:
    assert parsed(function("f", i="42", b="true", a='["a"]', z="null")) == [
        ("f", {"i": "42", "b": "true", "a": '["a"]', "z": "null"})
    ]


def test_tool_not_in_tools_keeps_strings_and_is_flagged() -> None:
    (call,) = (
        TextToolCallParser("qwen3_coder", [tool("g", SCHEMA)])
        .parse(function("f", i="42"))
        .tool_calls
    )
    assert call.arguments == {"i": "42"}
    assert call.error == "tool f was not offered; offered: g"


def test_nested_values_follow_nested_schemas() -> None:
    schema = {
        "filters": {
            "type": "object",
            "properties": {"language": {"type": "string"}, "min_stars": {"type": "integer"}},
        },
        "tags": {"type": "array", "items": {"type": "string"}},
        "answers": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "multiSelect": {"type": "boolean"},
                    "answer": {"type": ["string", "null"]},
                    "count": {"type": "integer"},
                },
            },
        },
    }
    text = function(
        "f",
        filters='{"language": "python", "min_stars": 100}',
        tags='["ml", "42"]',
        answers='[{"multiSelect": false, "answer": null, "count": "3"}]',
    )
    assert parsed(text, [tool("f", schema)]) == [
        (
            "f",
            {
                "filters": {"language": "python", "min_stars": 100},
                "tags": ["ml", "42"],
                "answers": [{"multiSelect": False, "answer": None, "count": 3}],
            },
        )
    ]


def test_tool_declarations_work_like_openai_dicts() -> None:
    declaration = ToolDeclaration("f", parameters={"properties": {"i": {"type": "integer"}}})
    assert parsed(function("f", i="1"), [declaration]) == [("f", {"i": 1})]


def test_one_line_values_in_an_indented_layout_are_stripped() -> None:
    # SGLang's streaming test: the template indented, the values are the words.
    text = (
        "<tool_call>\n        <function=f>\n        <parameter=city>\n        Dallas\n"
        "        </parameter>\n        </function>\n        </tool_call>"
    )
    assert parsed(text) == [("f", {"city": "Dallas"})]


def test_a_function_missing_its_end_tag_among_three_in_one_block() -> None:
    # Each function runs to the next <function=; the first one's value is not its neighbours'.
    text = (
        "<tool_call><function=a><parameter=x>1</parameter>"
        "<function=b><parameter=y>2</parameter></function>\n"
        "<function=c></function></tool_call>"
    )
    result = TextToolCallParser("qwen3_coder").parse(text)
    assert comparable(result.contents) == [
        ("call", "a", {"x": "1"}, '{"x": "1"}', None),
        ("call", "b", {"y": "2"}, '{"y": "2"}', None),
        ("call", "c", {}, "{}", None),
    ]
    assert [c.raw for c in result.tool_calls] == [
        "<function=a><parameter=x>1</parameter>",
        "<function=b><parameter=y>2</parameter></function>",
        "<function=c></function>",
    ]


def test_hundreds_of_functions_and_parameters_in_one_block() -> None:
    params = "".join(f"<parameter=p{i}>{i}</parameter>" for i in range(300))
    text = "<tool_call>" + "<function=f></function>" * 299 + f"<function=g>{params}</function>"
    found = parsed(text + "</tool_call>")
    assert found == [("f", {})] * 299 + [("g", {f"p{i}": str(i) for i in range(300)})]


def test_text_after_a_function_inside_the_block_is_error_text() -> None:
    text = "<tool_call><function=a></function> junk</tool_call>"
    result = TextToolCallParser("qwen3_coder").parse(text)
    assert comparable(result.contents) == [("call", "a", {}, "{}", None), ("error", "junk")]
    assert result.tool_calls[0].raw == "<function=a></function>"


def test_unclosed_tool_call_after_a_complete_function_is_only_that_call() -> None:
    text = "<tool_call>\n<function=f>\n</function>\n"
    (call,) = TextToolCallParser("qwen3_coder").parse(text).contents
    assert isinstance(call, FunctionCallContent)
    assert (call.name, call.arguments) == ("f", {})
    assert call.error is not None and "not closed at end of stream" in call.error


def test_bare_function_cut_by_the_end_keeps_its_value() -> None:
    result = TextToolCallParser("qwen3_coder").parse("ok <function=f><parameter=a>1")
    assert result.content == "ok "
    (call,) = result.tool_calls
    assert (call.name, call.arguments) == ("f", {"a": "1"})
    assert call.error is not None and "not closed at end of stream" in call.error


def test_bare_function_whose_name_starts_with_an_underscore() -> None:
    text = "Use <function=_private><parameter=a>1</parameter></function> now"
    assert comparable(TextToolCallParser("qwen3_coder").parse(text).contents) == [
        ("text", "Use "),
        ("call", "_private", {"a": "1"}, '{"a": "1"}', None),
        ("text", " now"),
    ]
    assert_split_invariant(text, "qwen3_coder")


@pytest.mark.parametrize("after", ["(name)>", "{x}>", "1>", " <b>"])
def test_bare_function_marker_in_prose_is_released_as_text_at_once(after: str) -> None:
    # Only a letter or "_" can begin a name; anything else means the marker was prose.
    text = f"Write <function={after} tags"
    parser = TextToolCallParser("qwen3_coder")
    assert comparable(parser.feed(text)) == [("text", text)]
    assert parser.finish() == []

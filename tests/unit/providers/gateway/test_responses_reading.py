"""A Responses request body read into the pipeline's messages and options, and what is refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers import (
    ChatRole,
    DataContent,
    FunctionCallContent,
    FunctionResultContent,
    InvalidRequestError,
    TextContent,
    TextReasoningContent,
    UriContent,
)
from providers.abstractions.options import ChatToolMode
from providers.abstractions.reasoning_options import ReasoningEffort
from providers.gateway.responses_reading import ResponsesRequest, read_request


def read(**body: Any) -> ResponsesRequest:
    return read_request(json.dumps({"model": "m", **body}).encode())


def test_a_string_input_is_one_user_message_after_the_instructions() -> None:
    request = read(input="hello", instructions="be brief")
    assert [(m.role, m.text) for m in request.messages] == [
        (ChatRole.SYSTEM, "be brief"),
        (ChatRole.USER, "hello"),
    ]
    assert request.stream is False
    assert request.echo["instructions"] == "be brief"


def test_message_items_with_and_without_type_and_every_role() -> None:
    request = read(
        input=[
            {"type": "message", "role": "developer", "content": "rules"},
            {"role": "system", "content": [{"type": "input_text", "text": "more"}]},
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"role": "assistant", "content": [{"type": "output_text", "text": "hey"}]},
            {"type": "message", "role": "user", "content": "again"},
        ]
    )
    assert [(m.role, m.text) for m in request.messages] == [
        (ChatRole.SYSTEM, "rules"),  # developer: chat templates know no such role
        (ChatRole.SYSTEM, "more"),
        (ChatRole.USER, "hi"),
        (ChatRole.ASSISTANT, "hey"),
        (ChatRole.USER, "again"),
    ]


def test_image_parts_become_the_chat_readers_contents() -> None:
    request = read(
        input=[
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "what is it"},
                    {"type": "input_image", "image_url": "https://x.test/a.png"},
                    {"type": "input_image", "image_url": "data:image/png;base64,AAEC"},
                ],
            }
        ]
    )
    text, url, data = request.messages[0].contents
    assert text == TextContent("what is it")
    assert isinstance(url, UriContent)
    assert url.uri == "https://x.test/a.png"
    assert isinstance(data, DataContent)
    assert (data.data, data.media_type) == (b"\x00\x01\x02", "image/png")


def test_reasoning_text_and_calls_join_one_assistant_turn_and_outputs_are_tool_messages() -> None:
    request = read(
        input=[
            {"role": "user", "content": "weather?"},
            {"type": "reasoning", "id": "rs_1", "summary": [], "content": [
                {"type": "reasoning_text", "text": "need a tool"}
            ]},
            {"role": "assistant", "content": "checking"},
            {"type": "function_call", "call_id": "c1", "name": "get", "arguments": '{"q": 1}'},
            {"type": "function_call", "call_id": "c2", "name": "get", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
            {"type": "function_call_output", "call_id": "c2", "output": [
                {"type": "input_text", "text": "rain"}
            ]},
            {"role": "assistant", "content": "mixed"},
        ]
    )  # fmt: skip
    user, turn, out1, out2, last = request.messages
    assert user.role == ChatRole.USER
    assert turn.role == ChatRole.ASSISTANT
    assert turn.contents[:2] == [TextReasoningContent("need a tool"), TextContent("checking")]
    assert [(c.call_id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("c1", "get", {"q": 1}),
        ("c2", "get", {}),
    ]
    assert out1.role == out2.role == ChatRole.TOOL
    assert out1.contents == [FunctionResultContent("c1", "sunny")]
    assert out2.contents == [FunctionResultContent("c2", "rain")]
    assert (last.role, last.text) == (ChatRole.ASSISTANT, "mixed")


def test_two_assistant_answers_in_a_row_stay_two_turns() -> None:
    request = read(
        input=[
            {"role": "assistant", "content": "one"},
            {"role": "assistant", "content": "two"},
        ]
    )
    assert [m.text for m in request.messages] == ["one", "two"]


def test_reasoning_summary_is_read_when_there_is_no_reasoning_text() -> None:
    request = read(
        input=[
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "short"}]},
            {"role": "assistant", "content": "done"},
        ]
    )
    (turn,) = request.messages
    assert (turn.reasoning, turn.text) == ("short", "done")


def test_options_are_the_chat_forms_the_pipeline_checks() -> None:
    tool = {
        "type": "function",
        "name": "get",
        "description": "look up",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        "strict": True,
    }
    request = read(
        input="x",
        tools=[tool],
        tool_choice={"type": "function", "name": "get"},
        parallel_tool_calls=False,
        temperature=0.2,
        top_p=0.9,
        max_output_tokens=64,
        reasoning={"effort": "high"},
        text={"format": {"type": "json_schema", "name": "r", "schema": {"type": "object"}}},
        stream=True,
        seed=7,
        prompt_cache_key="conv-1",
    )
    options = request.options
    assert request.stream is True
    assert [d.name for d in options.tool_declarations()] == ["get"]
    assert options.to_openai()["tools"] == [
        {"type": "function", "function": {k: v for k, v in tool.items() if k != "type"}}
    ]
    assert options.tool_mode == ChatToolMode.require("get")
    assert options.tool_mode is not None
    assert options.tool_mode.function_name == "get"
    assert (options.allow_multiple_tool_calls, options.temperature, options.top_p) == (
        False,
        0.2,
        0.9,
    )
    assert options.max_output_tokens == 64
    assert options.reasoning is not None
    assert options.reasoning.effort == ReasoningEffort.HIGH
    assert options.response_format is not None
    assert options.response_format.kind == "json_schema"
    assert options.response_format.schema_name == "r"
    assert options.seed == 7
    assert options.conversation_id == "conv-1"
    assert options.model_id is None  # the pipeline's model is the one meant
    assert request.echo["tools"] == [tool]
    assert request.echo["tool_choice"] == {"type": "function", "name": "get"}


def test_json_object_and_text_formats() -> None:
    as_json = read(input="x", text={"format": {"type": "json_object"}})
    assert as_json.options.response_format is not None
    assert as_json.options.response_format.kind == "json_object"
    assert read(input="x", text={"format": {"type": "text"}}).options.response_format is None


def test_store_is_accepted_and_echoed() -> None:
    assert read(input="x", store=True).echo["store"] is True


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"input": "x", "previous_response_id": "resp_1"}, "previous_response_id"),
        ({"input": "x", "conversation": "conv_1"}, "conversation"),
        ({"input": "x", "prompt": {"id": "p"}}, "prompt"),
        ({"input": "x", "background": True}, "background"),
        ({"input": 3}, "input"),
        ({}, "input"),
        ({"input": ["hi"]}, "input[0]"),
        ({"input": [{"type": "web_search_call"}]}, "input[0].type"),
        ({"input": [{"content": "no role, no type"}]}, "input[0].type"),
        ({"input": [{"role": "tool", "content": "x"}]}, "input[0].role"),
        ({"input": [{"type": "message", "content": "x"}]}, "input[0].role"),
        ({"input": [{"role": "user", "content": 5}]}, "input[0].content"),
        (
            {"input": [{"role": "user", "content": [{"type": "input_file", "file_id": "f"}]}]},
            "input[0].content[0].type",
        ),
        (
            {"input": [{"role": "user", "content": [{"type": "input_image", "file_id": "f"}]}]},
            "input[0].content[0].image_url",
        ),
        ({"input": [{"type": "item_reference", "id": "msg_1"}]}, "input[0]"),
        ({"input": [{"type": "function_call", "name": "f"}]}, "input[0].call_id"),
        (
            {"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}]},
            "input[0].arguments",
        ),
        ({"input": [{"type": "function_call_output", "call_id": "c"}]}, "input[0].output"),
        ({"input": "x", "stream": "yes"}, "stream"),
        ({"input": "x", "tools": [{"type": "web_search"}]}, "tools[0].type"),
        ({"input": "x", "tools": [{"type": "function"}]}, "tools[0].name"),
        ({"input": "x", "tools": {"type": "function"}}, "tools"),
        ({"input": "x", "tool_choice": {"type": "file_search"}}, "tool_choice"),
        ({"input": "x", "temperature": "hot"}, "temperature"),
        ({"input": "x", "max_output_tokens": 1.5}, "max_output_tokens"),
        ({"input": "x", "parallel_tool_calls": 1}, "parallel_tool_calls"),
        ({"input": "x", "reasoning": {"effort": "enormous"}}, "reasoning.effort"),
        ({"input": "x", "text": {"format": {"type": "grammar"}}}, "text.format"),
        (
            {"input": "x", "text": {"format": {"type": "json_schema", "name": "r"}}},
            "text.format.schema",
        ),
        ({"input": "x", "instructions": 1}, "instructions"),
        ({"input": "x", "metadata": {"k": 1}}, "metadata"),
    ],
)
def test_bad_input_is_refused_naming_the_field(body: dict[str, Any], param: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        read_request(json.dumps(body).encode())
    assert caught.value.param == param
    assert caught.value.status == 400


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b"\xff\xfe", b"[" * 100_000])
def test_a_body_that_is_not_a_json_object_is_refused(body: bytes) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        read_request(body)
    assert caught.value.param is None
    assert caught.value.status == 400


def test_a_stored_call_id_in_history_keeps_its_argument_text() -> None:
    request = read(
        input=[{"type": "function_call", "call_id": "c", "name": "f", "arguments": "not json"}]
    )
    (call,) = request.messages[0].contents
    assert isinstance(call, FunctionCallContent)
    assert call.raw_arguments == "not json"
    assert call.error is not None

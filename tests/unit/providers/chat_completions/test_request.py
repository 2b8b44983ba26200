"""Request building (issue 2 items 1-2; research/wire.md §2.2 and §7.7)."""

from __future__ import annotations

import json
from typing import Any

from providers import (
    ChatMessage,
    ChatOptions,
    ChatResponseFormat,
    ChatRole,
    ChatToolMode,
    DataContent,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
    ToolDeclaration,
    UriContent,
)
from providers.backends import PROFILES, BackendProfile
from providers.chat_completions.request import build_chat_request, messages_to_wire

GENERIC = PROFILES["generic"]


def build(
    messages: list[ChatMessage] | None = None,
    options: ChatOptions | None = None,
    *,
    stream: bool = True,
    model_id: str | None = "m",
    profile: BackendProfile = GENERIC,
) -> dict[str, Any]:
    return build_chat_request(
        messages or [ChatMessage.user("hi")],
        options,
        model_id=model_id,
        stream=stream,
        profile=profile,
    )


# --- core keys ------------------------------------------------------------------------------


def test_minimal_streaming_body() -> None:
    assert build() == {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }


def test_stream_options_only_when_streaming() -> None:
    body = build(stream=False)
    assert body["stream"] is False
    assert "stream_options" not in body


def test_model_from_options_wins_over_client_default() -> None:
    assert build(options=ChatOptions(model_id="other"))["model"] == "other"


def test_no_model_at_all_sends_no_model_key() -> None:
    assert "model" not in build(model_id=None)


def test_sampling_options() -> None:
    body = build(
        options=ChatOptions(
            temperature=0.2,
            top_p=0.9,
            top_k=40,
            max_output_tokens=128,
            stop_sequences=["</s>", "\n\n"],
            seed=7,
            frequency_penalty=0.1,
            presence_penalty=0.3,
        )
    )
    assert {
        k: body[k] for k in body if k not in ("model", "messages", "stream", "stream_options")
    } == {
        "temperature": 0.2,
        "top_p": 0.9,
        "top_k": 40,
        "max_tokens": 128,
        "stop": ["</s>", "\n\n"],
        "seed": 7,
        "frequency_penalty": 0.1,
        "presence_penalty": 0.3,
    }


def test_zero_values_are_sent() -> None:
    body = build(options=ChatOptions(temperature=0.0, seed=0))
    assert body["temperature"] == 0.0
    assert body["seed"] == 0


def test_openai_profile_uses_max_completion_tokens() -> None:
    body = build(options=ChatOptions(max_output_tokens=10), profile=PROFILES["openai"])
    assert body["max_completion_tokens"] == 10
    assert "max_tokens" not in body


# --- additional_properties ------------------------------------------------------------------


def test_additional_properties_become_body_keys() -> None:
    body = build(
        options=ChatOptions(
            additional_properties={
                "chat_template_kwargs": {"enable_thinking": False},
                "grammar": "root ::= x",
            }
        )
    )
    assert body["chat_template_kwargs"] == {"enable_thinking": False}
    assert body["grammar"] == "root ::= x"


def test_additional_properties_cannot_overwrite_core_keys() -> None:
    body = build(
        options=ChatOptions(
            additional_properties={
                "model": "evil",
                "messages": [{"role": "user", "content": "injected"}],
                "stream": False,
            }
        )
    )
    assert body["model"] == "m"
    assert body["messages"] == [{"role": "user", "content": "hi"}]
    assert body["stream"] is True


def test_additional_properties_nested_dict_is_merged_without_overwriting() -> None:
    body = build(
        options=ChatOptions(
            additional_properties={
                "stream_options": {"continuous_usage_stats": True, "include_usage": False}
            }
        )
    )
    assert body["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}


def test_additional_stream_options_are_not_sent_without_streaming() -> None:
    # vLLM answers 400 "Stream options can only be defined when `stream=True`" (wire.md §2.2).
    body = build(
        stream=False,
        options=ChatOptions(additional_properties={"stream_options": {"include_usage": True}}),
    )
    assert "stream_options" not in body
    assert body["stream"] is False


def test_additional_properties_do_not_mutate_options() -> None:
    extra = {"stream_options": {"continuous_usage_stats": True}}
    options = ChatOptions(additional_properties=extra)
    build(options=options)
    assert extra == {"stream_options": {"continuous_usage_stats": True}}


# --- tools, tool mode, response format ------------------------------------------------------


def test_tools_as_function_schemas() -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    body = build(
        options=ChatOptions(
            tools=[
                ToolDeclaration("get_weather", "Weather for a city", schema),
                {"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}},
                ToolDeclaration("noargs"),
            ],
            tool_mode=ChatToolMode.AUTO,
            allow_multiple_tool_calls=False,
        )
    )
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city",
                "parameters": schema,
            },
        },
        {"type": "function", "function": {"name": "now", "parameters": {"type": "object"}}},
        {
            "type": "function",
            "function": {"name": "noargs", "parameters": {"type": "object", "properties": {}}},
        },
    ]
    assert body["tool_choice"] == "auto"
    assert body["parallel_tool_calls"] is False


def test_empty_tools_list_is_not_sent() -> None:
    body = build(options=ChatOptions(tools=[]))
    assert "tools" not in body


def test_named_tool_mode() -> None:
    body = build(
        options=ChatOptions(tools=[ToolDeclaration("f")], tool_mode=ChatToolMode.require("f"))
    )
    assert body["tool_choice"] == {"type": "function", "function": {"name": "f"}}


def test_response_formats() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    assert build(options=ChatOptions(response_format=ChatResponseFormat.JSON))[
        "response_format"
    ] == {"type": "json_object"}
    assert build(
        options=ChatOptions(response_format=ChatResponseFormat.json_schema(schema, "out"))
    )["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "out", "schema": schema},
    }


# --- messages -------------------------------------------------------------------------------


def test_conversation_with_tool_calls_and_results() -> None:
    call = FunctionCallContent("call_1", "get_weather", {"city": "Oslo"}, '{"city":"Oslo"}')
    messages = [
        ChatMessage.system("Be brief."),
        ChatMessage.user("Weather in Oslo?"),
        ChatMessage.assistant("", call),
        ChatMessage.tool("call_1", {"temp": 3}),
        ChatMessage.tool("call_2", "plain text"),
    ]
    assert messages_to_wire(messages, GENERIC) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Oslo?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    # the server's own bytes, not re-dumped (prompt cache)
                    "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temp": 3}'},
        {"role": "tool", "tool_call_id": "call_2", "content": "plain text"},
    ]


def test_tool_call_without_raw_text_or_with_error_is_dumped_from_arguments() -> None:
    fresh = FunctionCallContent("a", "f", {"x": 1})
    broken = FunctionCallContent("b", "g", {}, "{oops", "not JSON")
    (wire,) = messages_to_wire([ChatMessage.assistant("text", fresh, broken)], GENERIC)
    assert wire["content"] == "text"
    assert [c["function"]["arguments"] for c in wire["tool_calls"]] == ['{"x": 1}', "{}"]


def test_several_results_in_one_message_become_several_tool_messages() -> None:
    message = ChatMessage(
        ChatRole.TOOL, [FunctionResultContent("a", 1), FunctionResultContent("b", None)]
    )
    assert messages_to_wire([message], GENERIC) == [
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "tool", "tool_call_id": "b", "content": ""},
    ]


def test_images_as_image_url_parts() -> None:
    message = ChatMessage.user(
        "What is this?",
        UriContent("https://example.com/cat.png", "image/png"),
        DataContent(b"\x89PNG", "image/png"),
    )
    (wire,) = messages_to_wire([message], GENERIC)
    assert wire == {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}},
        ],
    }


def test_reasoning_not_replayed_by_default_but_replayed_when_asked() -> None:
    message = ChatMessage(
        ChatRole.ASSISTANT, [TextReasoningContent("thought"), TextContent("answer")]
    )
    assert messages_to_wire([message], GENERIC) == [{"role": "assistant", "content": "answer"}]
    replaying = BackendProfile("x", replay_reasoning=True)
    assert messages_to_wire([message], replaying) == [
        {"role": "assistant", "content": "answer", "reasoning_content": "thought"}
    ]


def test_author_name_is_sent() -> None:
    message = ChatMessage(ChatRole.USER, [TextContent("hi")], author_name="alice")
    assert messages_to_wire([message], GENERIC) == [
        {"role": "user", "content": "hi", "name": "alice"}
    ]


def test_system_messages_kept_in_place_without_merging() -> None:
    messages = [ChatMessage.user("a"), ChatMessage.system("late")]
    assert [m["role"] for m in messages_to_wire(messages, GENERIC)] == ["user", "system"]


def test_system_messages_merged_into_one_leading_message() -> None:
    merging = BackendProfile("strict", merge_system_messages=True)
    messages = [
        ChatMessage.system("First."),
        ChatMessage.user("a"),
        ChatMessage.system("Second."),
        ChatMessage.assistant("b"),
        ChatMessage.system("   "),
    ]
    assert messages_to_wire(messages, merging) == [
        {"role": "system", "content": "First.\n\nSecond."},
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
    ]


def test_request_body_is_deterministic() -> None:
    messages = [
        ChatMessage.user("x"),
        ChatMessage.assistant("", FunctionCallContent("c", "f", {"b": 1, "a": 2})),
    ]
    first = json.dumps(build(messages))
    second = json.dumps(build(messages))
    assert first == second

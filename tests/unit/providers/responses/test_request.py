"""Request building: our messages and options as a ``/v1/responses`` body (issue 11 item 1)."""

from __future__ import annotations

from typing import Any

import pytest
from structlog.testing import capture_logs

from providers import (
    ChatMessage,
    ChatOptions,
    ChatResponseFormat,
    ChatRole,
    ChatToolMode,
    ConfigurationError,
    DataContent,
    FunctionCallContent,
    TextReasoningContent,
    ToolDeclaration,
    UriContent,
)
from providers.responses import build_responses_request, messages_to_input

WEATHER = ToolDeclaration(
    "get_weather", "Get the weather", {"type": "object", "properties": {"city": {}}}
)
RAW_ARGUMENTS = '{"city": "Paris", "unit": "celsius"}'


def tool_loop() -> list[ChatMessage]:
    call = FunctionCallContent("call_1", "get_weather", {"city": "Paris"}, RAW_ARGUMENTS)
    return [
        ChatMessage.system("Be brief."),
        ChatMessage.user("What is the weather in Paris?"),
        ChatMessage(ChatRole.ASSISTANT, [TextReasoningContent("\nI should call.\n"), call]),
        ChatMessage.tool("call_1", {"temperature_c": 21}),
    ]


def items_of(messages: list[ChatMessage], **kwargs: Any) -> tuple[str | None, list[Any]]:
    settings = {"merge_system_messages": False, "replay_reasoning": False, **kwargs}
    return messages_to_input(messages, **settings)


def test_history_becomes_message_function_call_and_output_items() -> None:
    instructions, items = items_of(tool_loop())
    assert instructions == "Be brief."
    assert items == [
        {"type": "message", "role": "user", "content": "What is the weather in Paris?"},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "get_weather",
            "arguments": RAW_ARGUMENTS,
        },  # the server's own bytes, not re-dumped
        {"type": "function_call_output", "call_id": "call_1", "output": '{"temperature_c": 21}'},
    ]


def test_reasoning_is_replayed_only_when_asked() -> None:
    _, items = items_of(tool_loop(), replay_reasoning=True)
    assert items[1] == {
        "type": "reasoning",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": "\nI should call.\n"}],
    }
    assert items[2]["type"] == "function_call"


def test_template_whitespace_before_a_call_is_not_replayed_as_a_turn() -> None:
    # vLLM and SGLang stream "\n\n" as a message item between reasoning and the call.
    call = FunctionCallContent("c", "f", {}, "{}")
    _, items = items_of([ChatMessage.assistant("\n\n", call)])
    assert [item["type"] for item in items] == ["function_call"]
    _, items = items_of([ChatMessage.assistant("Let me check.\n", call)])
    assert items[0] == {"type": "message", "role": "assistant", "content": "Let me check.\n"}


def test_arguments_that_did_not_parse_are_sent_as_the_parsed_object() -> None:
    call = FunctionCallContent("c", "f", {}, '{"cut', error="not JSON")
    _, items = items_of([ChatMessage.assistant("", call)])
    assert items[0]["arguments"] == "{}"


def test_later_system_messages_are_items_unless_merged() -> None:
    messages = [ChatMessage.system("A."), ChatMessage.user("hi"), ChatMessage.system("B.")]
    instructions, items = items_of(messages)
    assert instructions == "A."
    assert items[-1] == {"type": "message", "role": "system", "content": "B."}
    instructions, items = items_of(messages, merge_system_messages=True)
    assert instructions == "A.\n\nB."
    assert [item["role"] for item in items] == ["user"]


def test_images_become_input_image_parts() -> None:
    image = DataContent(b"\x89PNG", "image/png")
    message = ChatMessage.user("What is this?", image, UriContent("https://x/y.jpg"))
    _, (item,) = items_of([message])
    assert item["content"] == [
        {"type": "input_text", "text": "What is this?"},
        {"type": "input_image", "image_url": image.uri},
        {"type": "input_image", "image_url": "https://x/y.jpg"},
    ]


def test_audio_is_refused_with_a_typed_error() -> None:
    message = ChatMessage.user("Listen", DataContent(b"RIFF", "audio/wav"))
    with pytest.raises(ConfigurationError, match="Responses API"):
        items_of([message])


def body_for(options: ChatOptions | None = None, **kwargs: Any) -> dict[str, Any]:
    instructions, items = items_of([ChatMessage.user("hi")])
    settings: dict[str, Any] = {"instructions": instructions, "model_id": "m", "stream": True}
    settings.update(kwargs)
    return build_responses_request(items, options, **settings)


def test_options_use_the_responses_names() -> None:
    options = ChatOptions(
        temperature=0.2,
        top_p=0.9,
        max_output_tokens=200,
        tools=[WEATHER],
        tool_mode=ChatToolMode.require("get_weather"),
        allow_multiple_tool_calls=False,
        response_format=ChatResponseFormat.json_schema({"type": "object"}, "answer"),
        stop_sequences=["END"],
    )
    body = body_for(options)
    assert body["model"] == "m"
    assert body["stream"] is True
    assert body["input"] == [{"type": "message", "role": "user", "content": "hi"}]
    assert "instructions" not in body
    assert body["max_output_tokens"] == 200
    assert "max_tokens" not in body
    assert body["tools"] == [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Get the weather",
            "parameters": {"type": "object", "properties": {"city": {}}},
        }
    ]
    assert body["tool_choice"] == {"type": "function", "name": "get_weather"}
    assert body["parallel_tool_calls"] is False
    assert body["text"] == {
        "format": {"type": "json_schema", "name": "answer", "schema": {"type": "object"}}
    }
    assert body["stop"] == ["END"]
    assert (body["temperature"], body["top_p"]) == (0.2, 0.9)


def test_nothing_unset_is_sent() -> None:
    body = body_for(None, model_id=None)
    assert set(body) == {"input", "stream"}


def test_no_empty_tools_and_no_tool_choice_without_tools() -> None:
    """As on the chat path: vLLM answers 400 to a tool choice without tools."""
    body = body_for(ChatOptions(tools=[], tool_mode=ChatToolMode.NONE))
    assert "tools" not in body
    assert "tool_choice" not in body
    body = body_for(ChatOptions(tools=[ToolDeclaration("f")], tool_mode=ChatToolMode.NONE))
    assert body["tool_choice"] == "none"


def test_reasoning_effort_is_translated() -> None:
    body = body_for(ChatOptions(additional_properties={"reasoning_effort": "low"}))
    assert body["reasoning"] == {"effort": "low"}
    assert "reasoning_effort" not in body


def test_state_fields() -> None:
    body = body_for(None, store=False)
    assert body["store"] is False
    body = body_for(None, store=True, background=True, previous_response_id="resp_1")
    assert (body["store"], body["background"], body["previous_response_id"]) == (
        True,
        True,
        "resp_1",
    )
    # A caller's own `store` wins over the conversation mode's default.
    body = body_for(ChatOptions(additional_properties={"store": True}), store=False)
    assert body["store"] is True


def test_extras_extend_but_never_replace_client_keys() -> None:
    options = ChatOptions(
        additional_properties={"input": "replaced?", "metadata": {"a": "1"}, "top_k": 5}
    )
    with capture_logs() as logs:
        body = body_for(options)
    assert body["input"] == [{"type": "message", "role": "user", "content": "hi"}]
    assert body["metadata"] == {"a": "1"}
    assert body["top_k"] == 5
    assert logs == [
        {
            "event": "oaicompat.request.extra_key_ignored",
            "key": "input",
            "reason": "set by the client",
            "log_level": "warning",
        }
    ]

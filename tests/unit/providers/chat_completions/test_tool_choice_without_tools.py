"""``tool_choice`` (``tool_mode``) and ``parallel_tool_calls`` only with tools (issue 33 item 3):
vLLM answers 400 "When using `tool_choice`, `tools` must be set." to a body with the first and
no tools, which an agent framework sends for every turn (``tool_choice: "auto"``)."""

from __future__ import annotations

import json

import httpx
import pytest
import respx

from providers import (
    ChatMessage,
    ChatOptions,
    ChatToolMode,
    OpenAiCompatibleChatClient,
    ToolDeclaration,
)
from providers.backends import PROFILES
from providers.chat_completions.request import build_chat_request

MODES = [ChatToolMode.AUTO, ChatToolMode.NONE, ChatToolMode.REQUIRED, ChatToolMode.require("f")]


def body_for(options: ChatOptions) -> dict[str, object]:
    return build_chat_request(
        [ChatMessage.user("hi")], options, model_id="m", stream=True, profile=PROFILES["vllm"]
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("tools", [None, []])
def test_no_tool_choice_without_tools(
    mode: ChatToolMode, tools: list[ToolDeclaration] | None
) -> None:
    body = body_for(ChatOptions(tools=tools, tool_mode=mode, allow_multiple_tool_calls=False))
    assert "tool_choice" not in body
    assert "tools" not in body
    assert "parallel_tool_calls" not in body


@pytest.mark.parametrize("mode", MODES)
def test_tool_choice_with_tools(mode: ChatToolMode) -> None:
    body = body_for(
        ChatOptions(tools=[ToolDeclaration("f")], tool_mode=mode, allow_multiple_tool_calls=False)
    )
    assert body["tool_choice"] == mode.to_openai()
    assert body["parallel_tool_calls"] is False


def test_a_request_read_from_an_openai_body_drops_tool_choice_without_tools() -> None:
    """What an adapter hands over: an OpenAI body with ``tool_choice: "auto"`` and no tools."""
    options = ChatOptions.from_openai({"model": "m", "tool_choice": "auto"})
    assert options.tool_mode == ChatToolMode.AUTO
    assert "tool_choice" not in body_for(options)


@respx.mock
async def test_the_client_sends_no_tool_choice_without_tools() -> None:
    answer = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}
        ],
    }
    route = respx.post("http://llm.test/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=answer)
    )
    async with OpenAiCompatibleChatClient("http://llm.test", "m", backend="vllm") as client:
        response = await client.get_response("hi", ChatOptions(tool_mode=ChatToolMode.AUTO))
    assert response.text == "hi"
    sent = json.loads(route.calls.last.request.content)
    assert "tool_choice" not in sent and "tools" not in sent

"""The tool loop runs a plain Python function given in ``ChatOptions.tools`` (issue 34, item 9):
it failed with ``AttributeError: 'function' object has no attribute 'get'``."""

from __future__ import annotations

import json

from providers import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    FunctionCallContent,
    FunctionInvokingChatClient,
    FunctionResultContent,
)
from tests.unit.scripted_client import ScriptedClient, answer, role, text

RUNS: list[str] = []


def get_weather(city: str) -> str:
    """Current weather in a city."""
    RUNS.append(city)
    return f"sunny in {city}"


CALL = FunctionCallContent("c1", "get_weather", {"city": "Paris"}, json.dumps({"city": "Paris"}))


async def test_a_plain_function_is_run_by_the_tool_loop() -> None:
    RUNS.clear()
    calling = ChatResponse(
        [ChatMessage(ChatRole.ASSISTANT, [CALL])], finish_reason=ChatFinishReason.TOOL_CALLS
    )
    inner = ScriptedClient(calling, answer("It is sunny."))
    client = FunctionInvokingChatClient(inner)

    response = await client.get_response("Weather?", ChatOptions(tools=[get_weather]))

    assert RUNS == ["Paris"]
    assert response.text == "It is sunny."
    assert response.messages[1].contents == [FunctionResultContent("c1", "sunny in Paris")]


async def test_a_plain_function_is_run_by_the_streamed_tool_loop() -> None:
    RUNS.clear()
    calls: list[ChatResponseUpdate | BaseException] = [
        role(),
        ChatResponseUpdate([CALL], finish_reason=ChatFinishReason.TOOL_CALLS),
    ]
    inner = ScriptedClient(calls, [role(), text("It is sunny.")])
    client = FunctionInvokingChatClient(inner)

    stream = client.get_streaming_response("Weather?", ChatOptions(tools=[get_weather]))
    updates = [update async for update in stream]

    assert RUNS == ["Paris"]
    results = [c for u in updates for c in u.contents if isinstance(c, FunctionResultContent)]
    assert results == [FunctionResultContent("c1", "sunny in Paris")]
    assert ChatResponse.from_updates(updates).messages[-1].text.endswith("It is sunny.")

"""The tool loop against a real ``llama-server``: the server's own grammar forces a call to an
``AIFunction`` made from a Python function, ``FunctionInvokingChatClient`` runs it and asks
again, and the second request carries the call and its result.

The first turn is ``test_llamacpp_server_tool_calls``'s (the same prefill and ``logit_bias``,
``tool_choice: "required"``): the model is inside the call from its first token, and every
argument is an ``enum`` (a ``Literal`` here, which pydantic writes as one), so the call the
random-weight model makes is valid. The loop drops ``required`` after the first round (or the
model would be forced to call again and again), so the second turn is free, and the end-of-turn
bias ends it at once: an answer without calls, which ends the loop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any, Literal

from providers import (
    AIFunction,
    ChatInput,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    DelegatingChatClient,
    FunctionInvokingChatClient,
    FunctionResultContent,
)
from providers.abstractions.options import ChatToolMode
from providers.factory import create_chat_client
from tests.integration.test_llamacpp_server_tool_calls import (
    CONVERSATION,
    WEATHER_SCHEMA,
    schema_violations,
    steering_bias,
)


class Requests(DelegatingChatClient):
    """Keeps the messages and options of every request the loop makes."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.sent: list[tuple[list[ChatMessage], ChatOptions | None]] = []

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        self.sent.append((ChatMessage.coerce_all(messages), options))
        return await super().get_response(messages, options)

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        self.sent.append((ChatMessage.coerce_all(messages), options))
        return super().get_streaming_response(messages, options)


class Weather:
    def __init__(self) -> None:
        self.ran: list[dict[str, str]] = []

    def function(self) -> AIFunction:
        async def get_weather(
            city: Literal["Paris", "London", "Tokyo"], unit: Literal["celsius", "fahrenheit"]
        ) -> str:
            """Current weather in a city."""
            self.ran.append({"city": city, "unit": unit})
            return f"Sunny in {city}, 21 degrees {unit}"

        return AIFunction.from_callable(get_weather)


def options(function: AIFunction) -> ChatOptions:
    return ChatOptions(
        max_output_tokens=80,
        tools=[function],
        tool_mode=ChatToolMode.REQUIRED,
        allow_multiple_tool_calls=False,
        additional_properties={"logit_bias": steering_bias()},
    )


def check_the_loop(response: ChatResponse, weather: Weather, requests: Requests) -> None:
    first_turn = response.messages[0]
    calls = first_turn.tool_calls
    assert calls, response.messages
    for call in calls:
        assert call.name == "get_weather"
        assert call.error is None, call.error
        assert schema_violations(call.arguments, WEATHER_SCHEMA) == []
    # Each call ran once, with the arguments the server's grammar let the model write.
    assert weather.ran == [call.arguments for call in calls]
    # The second request: the conversation, the assistant's calls, the results; not required.
    assert len(requests.sent) == 2
    history, second_options = requests.sent[1]
    assert history[: len(CONVERSATION)] == CONVERSATION
    assert history[len(CONVERSATION)].tool_calls == calls
    results = history[-1].contents
    assert history[-1].role == ChatRole.TOOL
    assert [r.call_id for r in results if isinstance(r, FunctionResultContent)] == [
        c.call_id for c in calls
    ]
    assert second_options is not None and second_options.tool_mode is None
    # The loop ended on an answer without calls.
    assert response.messages[-1].role == ChatRole.ASSISTANT
    assert response.messages[-1].tool_calls == []


async def test_the_loop_runs_the_servers_own_tool_call(plain_server: Any) -> None:
    weather = Weather()
    requests = Requests(create_chat_client(plain_server.base_url, backend="llamacpp"))
    client = FunctionInvokingChatClient(requests)
    async with aclosing(client):
        response = await client.get_response(CONVERSATION, options(weather.function()))
    check_the_loop(response, weather, requests)
    assert [m.role for m in response.messages] == [
        ChatRole.ASSISTANT,
        ChatRole.TOOL,
        ChatRole.ASSISTANT,
    ]
    assert response.usage is not None and response.usage.output_token_count


async def test_the_loop_streams_the_turns_and_the_result(plain_server: Any) -> None:
    weather = Weather()
    requests = Requests(create_chat_client(plain_server.base_url, backend="llamacpp"))
    client = FunctionInvokingChatClient(requests)
    async with aclosing(client):
        updates = [
            u
            async for u in client.get_streaming_response(CONVERSATION, options(weather.function()))
        ]
    tool_updates = [u for u in updates if u.role == ChatRole.TOOL]
    assert len(tool_updates) == len(weather.ran) >= 1
    # Rebuild the turns as get_response returns them: the updates before the results, the
    # results, the updates after.
    first_result = updates.index(tool_updates[0])
    last_result = updates.index(tool_updates[-1])
    first_turn = ChatResponse.from_updates(updates[:first_result]).messages
    final_turn = ChatResponse.from_updates(updates[last_result + 1 :]).messages
    tool_message = ChatMessage(ChatRole.TOOL, [c for u in tool_updates for c in u.contents])
    check_the_loop(ChatResponse([*first_turn, tool_message, *final_turn]), weather, requests)

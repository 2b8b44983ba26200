"""``OaicompatChatClient`` under Agent Framework's agent loop against a real ``llama-server``:
the server's grammar forces a call to the agent's tool (``framework_steering``), the framework's
function-invocation layer runs it and asks again, and the second request carries the call and
its result; and a call to a tool the agent did not offer, forced as text, is told to the model
instead of ending the run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any, Literal

import pytest

from providers import (
    ChatClient,
    ChatInput,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    ChatToolMode,
    DelegatingChatClient,
    FunctionCallContent,
    FunctionResultContent,
    create_chat_client,
)
from tests.integration.framework_steering import Steering
from tests.integration.test_llamacpp_server_tool_calls import WEATHER_SCHEMA, schema_violations
from tests.integration.test_llamacpp_text_tool_calls import HERMES_TIME, PROMPT, forced
from tests.integrations.exchanges import require

require("agent_framework", "agent-framework")

from providers.integrations.agent_framework import OaicompatChatClient  # noqa: E402


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run-stream"])
async def test_the_agent_runs_the_servers_tool_call(plain_server: Any, streamed: bool) -> None:
    ran: list[dict[str, str]] = []

    def get_weather(
        city: Literal["Paris", "London", "Tokyo"], unit: Literal["celsius", "fahrenheit"]
    ) -> str:
        """Current weather in a city."""
        ran.append({"city": city, "unit": unit})
        return f"Sunny in {city}, 21 degrees {unit}"

    steering = Steering(create_chat_client(plain_server.base_url, backend="llamacpp"))
    chat = OaicompatChatClient(steering)
    agent = chat.as_agent(tools=[get_weather])
    if streamed:
        stream = agent.run("What is the weather in Paris?", stream=True)
        [_ async for _ in stream]
        response = await stream.get_final_response()
    else:
        response = await agent.run("What is the weather in Paris?")
    await chat.aclose()

    call_turn = response.messages[0]
    calls = [c for c in call_turn.contents if c.type == "function_call"]
    assert [c.name for c in calls] == ["get_weather"]
    arguments = calls[0].parse_arguments()
    assert schema_violations(arguments, WEATHER_SCHEMA) == []
    assert ran == [arguments]
    assert [c.type for c in response.messages[1].contents] == ["function_result"]
    assert response.usage_details and response.usage_details.get("output_token_count")
    # The second request: the call as the server made it, then its result.
    assert len(steering.sent) == 2
    history, _ = steering.sent[1]
    (sent_call,) = [c for c in history[-2].contents if isinstance(c, FunctionCallContent)]
    assert (sent_call.call_id, sent_call.arguments) == (calls[0].call_id, ran[0])
    assert history[-1].role == ChatRole.TOOL


class Forcing(DelegatingChatClient):
    """The model writes a Hermes call to ``get_time`` (a tool the agent never offered) in its
    first answer, then ``ANSWER``: each request gets the grammar of its text, with the tools
    kept but ``tool_mode: none`` so llama-server takes the grammar and leaves the call in the
    text for oaicompat's recovery (``test_llamacpp_text_tool_calls``)."""

    def __init__(self, inner: ChatClient, call: ChatOptions, answer: ChatOptions) -> None:
        super().__init__(inner)
        self._call, self._answer = call, answer
        self.sent: list[tuple[list[ChatMessage], ChatOptions]] = []

    def _force(
        self, messages: ChatInput, options: ChatOptions | None
    ) -> tuple[list[ChatMessage], ChatOptions]:
        history = ChatMessage.coerce_all(messages)
        answered = any(m.role == ChatRole.TOOL for m in history)
        forced = self._answer if answered else self._call
        options = replace(
            options or ChatOptions(),
            tool_mode=ChatToolMode.NONE,
            max_output_tokens=forced.max_output_tokens,
            additional_properties={**forced.additional_properties},
        )
        self.sent.append((history, options))
        return history, options

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        return await super().get_response(*self._force(messages, options))

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        return super().get_streaming_response(*self._force(messages, options))


ANSWER = "No such tool."


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run-stream"])
async def test_a_call_to_a_tool_not_offered_is_told_to_the_model(
    plain_server: Any, streamed: bool
) -> None:
    """Issue 34 item 6: the model calls ``get_time``, the agent offers ``get_weather``. Nothing
    runs; the framework's function layer answers "not found", and the model's next answer is
    the run's answer (it was an empty answer after one request, with no error)."""
    ran: list[str] = []

    def get_weather(city: str) -> str:
        """Current weather in a city."""
        ran.append(city)
        return f"Sunny in {city}"

    pipeline = create_chat_client(plain_server.base_url, backend="llamacpp", telemetry=False)
    forcing = Forcing(
        pipeline,
        await forced(plain_server.base_url, HERMES_TIME),
        await forced(plain_server.base_url, ANSWER),
    )
    chat = OaicompatChatClient(forcing)
    agent = chat.as_agent(tools=[get_weather])
    if streamed:
        stream = agent.run(PROMPT, stream=True)
        [_ async for _ in stream]
        response = await stream.get_final_response()
    else:
        response = await agent.run(PROMPT)
    await chat.aclose()

    assert ran == []
    assert response.text == ANSWER
    assert len(forcing.sent) == 2
    history, _ = forcing.sent[1]
    (call,) = [c for c in history[-2].contents if isinstance(c, FunctionCallContent)]
    assert (call.name, call.arguments) == ("get_time", {"tz": "CET"})
    (result,) = history[-1].contents
    assert isinstance(result, FunctionResultContent) and result.call_id == call.call_id
    assert "not found" in str(result.result)

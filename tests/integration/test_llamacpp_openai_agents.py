"""``OaicompatAgentsModel`` under the OpenAI Agents SDK's runner against a real ``llama-server``.

The random-weight model is steered underneath the SDK, by a layer between the transport and the
real pipeline. A call to the agent's tool: ``framework_steering`` (the server's grammar forces
it), the runner runs the tool and asks again, and the second request carries the call and its
result. A call to a tool the agent does not have: the grammar makes the model write a Hermes
call to ``get_weather`` as text while the agent offers only ``get_time``; the call never reaches
the SDK as one (which would end the run with ``ModelBehaviorError``), so the run ends after one
request with the call as written as its answer, and nothing runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any, Literal

import pytest

from providers import (
    ChatInput,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    DelegatingChatClient,
    FunctionCallContent,
    create_chat_client,
)
from providers.abstractions.options import ChatToolMode
from tests.integration.framework_steering import Steering
from tests.integration.test_llamacpp_server_tool_calls import WEATHER_SCHEMA, schema_violations
from tests.integration.test_llamacpp_text_tool_calls import HERMES_WEATHER, forced
from tests.integrations.exchanges import require

agents = require("agents", "openai-agents")
agents.set_tracing_disabled(True)  # the SDK would export traces to OpenAI's servers

from providers.integrations.openai_agents import OaicompatAgentsModel  # noqa: E402

QUESTION = "What is the weather in Paris?"
MODES = pytest.mark.parametrize("streamed", [False, True], ids=["run", "run-streamed"])


async def run(agent: Any, streamed: bool) -> Any:
    if not streamed:
        return await agents.Runner.run(agent, QUESTION)
    result = agents.Runner.run_streamed(agent, QUESTION)
    async for _ in result.stream_events():
        pass
    return result


@MODES
async def test_the_agent_runs_the_servers_tool_call(plain_server: Any, streamed: bool) -> None:
    ran: list[dict[str, str]] = []

    def get_weather(
        city: Literal["Paris", "London", "Tokyo"], unit: Literal["celsius", "fahrenheit"]
    ) -> str:
        """Current weather in a city."""
        ran.append({"city": city, "unit": unit})
        return f"Sunny in {city}, 21 degrees {unit}"

    steering = Steering(create_chat_client(plain_server.base_url, backend="llamacpp"))
    async with OaicompatAgentsModel(steering, owns_client=True) as model:
        agent = agents.Agent(name="weather", model=model, tools=[agents.function_tool(get_weather)])
        result = await run(agent, streamed)

    (call,) = [item for item in result.new_items if isinstance(item, agents.ToolCallItem)]
    assert call.raw_item.name == "get_weather"
    (arguments,) = ran
    assert schema_violations(arguments, WEATHER_SCHEMA) == []
    (output,) = [i for i in result.new_items if isinstance(i, agents.ToolCallOutputItem)]
    assert output.output == f"Sunny in {arguments['city']}, 21 degrees {arguments['unit']}"
    assert isinstance(result.final_output, str)
    usage = result.context_wrapper.usage
    assert usage.requests == 2 and usage.output_tokens > 0  # streamed runs count too
    # The second request: the call as the server made it, then its result.
    assert len(steering.sent) == 2
    history, _ = steering.sent[1]
    sent_calls = [c for c in history[-2].contents if isinstance(c, FunctionCallContent)]
    assert [(c.call_id, c.arguments) for c in sent_calls] == [(call.raw_item.call_id, arguments)]
    assert history[-1].role == ChatRole.TOOL


class WritesTheCall(DelegatingChatClient):
    """Makes the model write ``options`` (a Hermes call, by grammar) with the agent's own tools
    offered, and counts the requests."""

    def __init__(self, inner: Any, options: ChatOptions) -> None:
        super().__init__(inner)
        self._forced = options
        self.requests = 0

    def _steer(self, options: ChatOptions | None) -> ChatOptions:
        self.requests += 1
        options = options or ChatOptions()
        extras = {**options.additional_properties, **self._forced.additional_properties}
        return replace(
            options,
            tool_mode=ChatToolMode.NONE,  # the server parses nothing; the grammar is allowed
            max_output_tokens=self._forced.max_output_tokens,
            additional_properties=extras,
        )

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        return await super().get_response(messages, self._steer(options))

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        return super().get_streaming_response(messages, self._steer(options))


@MODES
async def test_a_call_to_a_tool_not_offered_is_the_answer(
    plain_server: Any, streamed: bool
) -> None:
    def get_time(tz: str) -> str:
        """The local time in a time zone."""
        raise AssertionError("the model called get_weather, which the agent does not have")

    writes = WritesTheCall(
        create_chat_client(plain_server.base_url, backend="llamacpp"),
        await forced(plain_server.base_url, HERMES_WEATHER),
    )
    async with OaicompatAgentsModel(writes, owns_client=True) as model:
        agent = agents.Agent(name="clock", model=model, tools=[agents.function_tool(get_time)])
        result = await run(agent, streamed)

    assert writes.requests == 1
    assert not [item for item in result.new_items if isinstance(item, agents.ToolCallItem)]
    assert str(result.final_output).strip() == HERMES_WEATHER

"""``OaicompatModel`` under pydantic-ai's agent loop against a real ``llama-server``: the
server's grammar forces a call to the agent's tool (``framework_steering``), pydantic-ai runs it
and asks again, and the second request carries the call and its result."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from providers import ChatRole, FunctionCallContent, create_chat_client
from tests.integration.framework_steering import Steering
from tests.integration.test_llamacpp_server_tool_calls import WEATHER_SCHEMA, schema_violations
from tests.integrations.exchanges import require

require("pydantic_ai", "pydantic-ai")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ModelResponse, ToolCallPart  # noqa: E402

from providers.integrations.pydantic_ai import OaicompatModel  # noqa: E402


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
async def test_the_agent_runs_the_servers_tool_call(plain_server: Any, streamed: bool) -> None:
    ran: list[dict[str, str]] = []

    def get_weather(
        city: Literal["Paris", "London", "Tokyo"], unit: Literal["celsius", "fahrenheit"]
    ) -> str:
        """Current weather in a city."""
        ran.append({"city": city, "unit": unit})
        return f"Sunny in {city}, 21 degrees {unit}"

    steering = Steering(create_chat_client(plain_server.base_url, backend="llamacpp"))
    model = OaicompatModel(steering)
    agent = Agent(model, tools=[get_weather], output_type=str)
    if streamed:
        async with agent.run_stream("What is the weather in Paris?") as result:
            await result.get_output()
        messages = result.all_messages()
    else:
        messages = (await agent.run("What is the weather in Paris?")).all_messages()
    await model.aclose()

    responses = [m for m in messages if isinstance(m, ModelResponse)]
    calls = [p for p in responses[0].parts if isinstance(p, ToolCallPart)]
    assert [c.tool_name for c in calls] == ["get_weather"]
    assert schema_violations(calls[0].args_as_dict(), WEATHER_SCHEMA) == []
    assert ran == [calls[0].args_as_dict()]
    assert responses[0].usage.output_tokens > 0
    # The second request: the call as the server made it, then its result.
    history, _ = steering.sent[1]
    (sent_call,) = [c for c in history[-2].contents if isinstance(c, FunctionCallContent)]
    assert (sent_call.call_id, sent_call.arguments) == (calls[0].tool_call_id, ran[0])
    assert history[-1].role == ChatRole.TOOL

"""``OaicompatChatClient`` under Agent Framework's agent loop against a real ``llama-server``:
the server's grammar forces a call to the agent's tool (``framework_steering``), the framework's
function-invocation layer runs it and asks again, and the second request carries the call and
its result."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from providers import ChatRole, FunctionCallContent, create_chat_client
from tests.integration.framework_steering import Steering
from tests.integration.test_llamacpp_server_tool_calls import WEATHER_SCHEMA, schema_violations
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

"""``OaicompatChatClient`` under Microsoft Agent Framework's real agent loop, over recorded
two-turn exchanges.

The first request is answered with a recorded tool call (vLLM and SGLang: reasoning, then a
hermes call; llama.cpp: the call left in the text, which only the oaicompat pipeline turns into
a call), the second with a recorded answer. The framework's function-invocation layer runs the
tool and builds the second request; the tests check what the agent returned (messages, reasoning,
usage) and what went on the wire.
"""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from providers import (
    AuthenticationError,
    InvalidRequestError,
    InvalidResponseError,
    ProviderError,
    ServerError,
    create_chat_client,
)
from providers.abstractions.services import service_of
from providers.layers.retry import RetryingChatClient
from providers.replay.server import ReplayServer
from telemetry.telemetry_client import TelemetryChatClient
from tests.integrations.exchanges import (
    BY_ID,
    SCENARIOS,
    Exchange,
    KeepsStreams,
    Scenario,
    StallingServer,
    Weather,
    require,
    tool_result,
)

require("agent_framework", "agent-framework")

from agent_framework import Agent, AgentResponse  # noqa: E402
from agent_framework.exceptions import (  # noqa: E402
    ChatClientException,
    ChatClientInvalidAuthException,
    ChatClientInvalidRequestException,
    ChatClientInvalidResponseException,
)

from providers.integrations.agent_framework import OaicompatChatClient  # noqa: E402
from providers.integrations.agent_framework.contents import to_framework_error  # noqa: E402

INSTRUCTIONS = "Answer in one sentence."


def client(server: ReplayServer | StallingServer, backend: str) -> KeepsStreams:
    return KeepsStreams(
        create_chat_client(server.base_url, backend=backend, telemetry=False, retry=None)
    )


async def run(
    scenario: Scenario, chat: OaicompatChatClient[Any], weather: Weather
) -> AgentResponse[Any]:
    agent = chat.as_agent(instructions=INSTRUCTIONS, tools=[weather.get_weather])
    if scenario.streamed:
        stream = agent.run("What is the weather in Paris?", stream=True)
        updates = [update async for update in stream]
        assert updates
        return await stream.get_final_response()
    return await agent.run("What is the weather in Paris?")


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.call for s in SCENARIOS])
async def test_the_agent_runs_the_recorded_call_once_and_returns_the_recorded_answer(
    scenario: Scenario,
) -> None:
    exchange, weather = scenario.exchange(), Weather()
    async with ReplayServer(exchange.answer) as server:
        response = await run(
            scenario, OaicompatChatClient(client(server, scenario.first.backend)), weather
        )
    name, arguments, call_id = scenario.recorded_call()
    assert weather.ran == [arguments]
    assert response.text.strip() == scenario.second.expected["text"].strip()
    call_turn, result_turn, answer = response.messages
    (call,) = [c for c in call_turn.contents if c.type == "function_call"]
    assert call.name == name and call.parse_arguments() == arguments
    assert call_id in ("", call.call_id)
    assert [c.type for c in result_turn.contents] == ["function_result"]
    # Reasoning is in the framework's slot for it, never in the answer.
    reasoning = [c.text for c in answer.contents if c.type == "text_reasoning"]
    assert (
        "".join(r or "" for r in reasoning).strip() == scenario.second.expected["reasoning"].strip()
    )
    assert answer.text.strip() == scenario.second.expected["text"].strip()
    usage = response.usage_details
    assert usage is not None
    assert (usage.get("input_token_count"), usage.get("output_token_count")) == scenario.usage()
    check_the_second_request(exchange, call.call_id or "", arguments, name)


def check_the_second_request(
    exchange: Exchange, call_id: str, arguments: dict[str, Any], name: str
) -> None:
    assert len(exchange.bodies) == 2
    first, second = exchange.bodies
    assert first["messages"][0] == {"role": "system", "content": INSTRUCTIONS}
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather"]
    assert second["messages"][: len(first["messages"])] == first["messages"]
    assistant, result = second["messages"][len(first["messages"]) :]
    (wire_call,) = assistant["tool_calls"]
    assert (wire_call["id"], wire_call["function"]["name"]) == (call_id, name)
    assert result == {"role": "tool", "tool_call_id": call_id, "content": tool_result(arguments)}


async def test_from_config_builds_the_configured_pipeline(tmp_path: Path) -> None:
    scenario = SCENARIOS[1]
    exchange, weather = scenario.exchange(), Weather()
    async with ReplayServer(exchange.answer) as server:
        config = tmp_path / "oaicompat.yaml"
        config.write_text(
            textwrap.dedent(
                f"""\
                backends:
                  gpu: {{base_url: "{server.base_url}", model_id: qwen3, backend: vllm}}
                roles: {{main: gpu}}
                """
            )
        )
        chat = OaicompatChatClient.from_config(config, role="main")
        # The framework instruments the call; oaicompat's own telemetry layer is left out.
        assert service_of(chat.client, TelemetryChatClient) is None
        assert service_of(chat.client, RetryingChatClient) is not None
        assert chat.service_url() == server.base_url + "/v1"
        response = await run(scenario, chat, weather)
        await chat.aclose()
    assert response.text.strip() == scenario.second.expected["text"].strip()
    assert exchange.bodies[0]["model"] == "qwen3"


class Weather2(BaseModel):
    city: str
    sunny: bool


async def test_a_pydantic_response_format_is_sent_as_its_json_schema() -> None:
    exchange = Exchange([BY_ID["vllm/captured--plain--nonstream-text"]])
    async with ReplayServer(exchange.answer) as server:
        chat = OaicompatChatClient(client(server, "vllm"))
        agent: Agent[Any] = chat.as_agent()
        # The replayed answer is plain text, which the schema asked for does not admit: the
        # client says so (issue 33: never a silent unconstrained answer).
        with pytest.raises(ChatClientException, match="ConstraintViolationError"):
            await agent.run("hi", options={"response_format": Weather2})
    sent = exchange.bodies[0]["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["name"] == "Weather2"
    assert sent["json_schema"]["schema"] == Weather2.model_json_schema()


@pytest.mark.parametrize(
    "transcript",
    [
        "vllm/captured--plain--error-context-exceeded",
        "vllm/captured--plain--error-context-exceeded-stream",
    ],
)
async def test_an_error_answer_is_the_frameworks_chat_client_exception(transcript: str) -> None:
    recorded = BY_ID[transcript]
    async with ReplayServer(Exchange([recorded]).answer) as server:
        agent = OaicompatChatClient(client(server, "vllm")).as_agent()
        with pytest.raises(ChatClientInvalidRequestException) as caught:
            if recorded.request.get("stream"):
                stream = agent.run("hi", stream=True)
                async for _ in stream:
                    pass
            else:
                await agent.run("hi")
    assert "ContextLengthExceededError (HTTP 400)" in str(caught.value)


async def test_an_error_inside_the_stream_is_a_chat_client_exception() -> None:
    async with ReplayServer(
        Exchange([BY_ID["vllm/reconstructed--error-midstream"]]).answer
    ) as server:
        agent = OaicompatChatClient(client(server, "vllm")).as_agent()
        stream = agent.run("hi", stream=True)
        with pytest.raises(ChatClientException) as caught:
            async for _ in stream:
                pass
    assert "HTTP 500" in str(caught.value)


async def test_closing_the_frameworks_stream_closes_the_upstream_request() -> None:
    async with StallingServer(BY_ID["vllm/captured--plain--stream-text"]) as server:
        agent = OaicompatChatClient(client(server, "vllm")).as_agent()
        stream = agent.run("hi", stream=True)
        async for _ in stream:
            break
        await stream.close()
        await asyncio.wait_for(server.closed.wait(), 5)
    assert server.requests == 1


async def test_cancelling_the_run_closes_the_upstream_request() -> None:
    async with StallingServer(BY_ID["vllm/captured--plain--stream-text"]) as server:
        agent = OaicompatChatClient(client(server, "vllm")).as_agent()
        first = asyncio.Event()

        async def consume() -> None:
            async for _ in agent.run("hi", stream=True):
                first.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(first.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(server.closed.wait(), 5)


async def test_a_call_the_server_cut_off_is_kept_but_never_runs() -> None:
    """vLLM cut the call at ``max_tokens``: the call stays in the answer, with the reason in
    ``exception``, marked informational so the function-invocation layer does not run it."""
    weather = Weather()
    exchange = Exchange([BY_ID["vllm/captured--qwen3-hermes--stream-tool-call-length-cut"]])
    async with ReplayServer(exchange.answer) as server:
        agent = OaicompatChatClient(client(server, "vllm")).as_agent(tools=[weather.get_weather])
        stream = agent.run("What is the weather in Paris?", stream=True)
        [_ async for _ in stream]
        response = await stream.get_final_response()
    assert weather.ran == []
    assert len(exchange.bodies) == 1
    (call,) = [c for m in response.messages for c in m.contents if c.type == "function_call"]
    assert call.informational_only and call.exception
    assert response.finish_reason == "length"


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (AuthenticationError("bad key", status=401), ChatClientInvalidAuthException),
        (InvalidRequestError("bad tools", status=400), ChatClientInvalidRequestException),
        (InvalidResponseError("not JSON"), ChatClientInvalidResponseException),
        (ServerError("boom", status=500), ChatClientException),
    ],
    ids=["401", "400", "unreadable", "500"],
)
def test_each_failure_is_the_frameworks_chat_client_exception(
    error: ProviderError, expected: type[Exception]
) -> None:
    translated = to_framework_error(error)
    assert type(translated) is expected
    assert translated.args[1] is error

"""Issue 34's scenario matrix for pydantic-ai: its own ``Agent`` over ``OaicompatModel``.

Each scenario runs ``agent.run`` and ``agent.run_stream`` (where both apply) over the loopback
replay server with the bundled transcripts, and checks what the pydantic-ai user sees. Per
scenario, what the user gets:

* text_call_in_content: llama.cpp's ``<tool_call>`` left in the text is a ``ToolCallPart``; the
  tool runs once and the run returns the server's answer, no markup in any text.
* structured_call: vLLM's parsed call is a ``ToolCallPart``; the tool runs once and the second
  request carries the call and its result.
* reasoning_field: the server's reasoning field is a ``ThinkingPart``; the output is the answer
  alone.
* think_tags: a ``<think>`` block left in the content is a ``ThinkingPart``; the output has no
  tags.
* harmony: gpt-oss's harmony markup in the content is split: analysis is a ``ThinkingPart``,
  the call addressed to ``functions.get_weather`` runs the tool; no markup shows.
* unoffered_call: a call to a tool the agent does not have never runs; pydantic-ai tells the
  model (a tool result: "Unknown tool name") and returns the model's next answer.
* structured_output: ``NativeOutput`` is a JSON Schema ``response_format``; the output is the
  validated model, and ``run_stream`` shows partial values as the JSON arrives.
* mid_stream_error: the text that arrived reaches the user, then ``ModelServerError`` (status
  500, ``in_stream``), the oaicompat error with the partial answer on ``__cause__``.
* per_request_header: ``extra_headers`` in the model settings are request headers, never body
  keys.
* session_id: each run is its own conversation (pydantic-ai's ``conversation_id`` is the
  session-affinity key): two runs that open alike get two routing keys.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field

from providers import ChatClient, ProviderError, SessionAffinity, create_chat_client
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from providers.replay.transcripts import Transcript
from tests.integrations.exchanges import BY_ID, Exchange, Weather, require
from tests.integrations.pydantic_ai_replies import Reply, Script
from tests.integrations.replay_turns import SCENARIOS, TwoTurnServer

require("pydantic_ai", "pydantic-ai")

from pydantic_ai import Agent, NativeOutput  # noqa: E402
from pydantic_ai.exceptions import ModelHTTPError, ModelServerError  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)
from pydantic_ai.settings import ModelSettings  # noqa: E402

from providers.integrations.pydantic_ai import OaicompatModel  # noqa: E402

STREAMED = pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
QUESTION = "What is the weather in Paris?"
WEATHER = {"city": "Paris", "unit": "celsius"}


def model(server: ReplayServer, backend: str, **kwargs: Any) -> OaicompatModel:
    client: ChatClient = create_chat_client(
        server.base_url, backend=backend, telemetry=False, retry=None, **kwargs
    )
    return OaicompatModel(client)


async def ask(agent: Agent[None, Any], streamed: bool, **kwargs: Any) -> tuple[Any, list[Any]]:
    """The run's output and messages, by ``run`` or by ``run_stream``."""
    if not streamed:
        done = await agent.run(QUESTION, **kwargs)
        return done.output, done.all_messages()
    async with agent.run_stream(QUESTION, **kwargs) as result:
        output = await result.get_output()
    return output, result.all_messages()


def responses(messages: list[ModelMessage]) -> list[ModelResponse]:
    return [m for m in messages if isinstance(m, ModelResponse)]


def texts(messages: list[ModelMessage]) -> str:
    return "".join(
        p.content for r in responses(messages) for p in r.parts if isinstance(p, TextPart)
    )


def thinking(response: ModelResponse) -> str:
    return "".join(p.content for p in response.parts if isinstance(p, ThinkingPart))


def recorded(transcript: Transcript) -> ReplayServer:
    """A loopback server answering with ``transcript``: its stream to a streamed request, and
    the same answer as one ``chat.completion`` (built from what the stream says) otherwise."""

    def answer(request: ReceivedRequest) -> RecordedReply:
        if json.loads(request.body).get("stream") is True:
            return RecordedReply(200, transcript.body, {"Content-Type": "text/event-stream"})
        return RecordedReply(200, whole(transcript), {"Content-Type": "application/json"})

    return ReplayServer(answer)


def whole(transcript: Transcript) -> bytes:
    if not transcript.is_stream:
        return transcript.body
    expected = transcript.expected
    message = {"role": "assistant", "content": expected["text"]}
    if expected["reasoning"]:
        message["reasoning_content"] = expected["reasoning"]
    body = {
        "id": expected["response_id"],
        "object": "chat.completion",
        "created": 1,
        "model": expected["model_id"],
        "choices": [{"index": 0, "message": message, "finish_reason": expected["finish_reason"]}],
    }
    return json.dumps(body, ensure_ascii=False).encode()


@STREAMED
async def test_text_call_in_content(streamed: bool) -> None:
    scenario, weather = SCENARIOS["llamacpp"], Weather()
    async with TwoTurnServer(scenario) as server:
        agent = Agent(model(server, "llamacpp"), tools=[weather.get_weather])
        output, messages = await ask(agent, streamed)
    assert weather.ran == [WEATHER]
    first = responses(messages)[0]
    (call,) = [p for p in first.parts if isinstance(p, ToolCallPart)]
    assert (call.tool_name, call.args_as_dict()) == ("get_weather", WEATHER)
    assert first.finish_reason == "tool_call"
    assert output == scenario.answer(streamed).expected["text"].strip()
    assert "<tool_call>" not in texts(messages)


@STREAMED
async def test_structured_call(streamed: bool) -> None:
    scenario, weather = SCENARIOS["vllm"], Weather()
    async with TwoTurnServer(scenario) as server:
        agent = Agent(model(server, "vllm"), tools=[weather.get_weather])
        output, messages = await ask(agent, streamed)
        second = server.chat_requests[1]["messages"]
    assert weather.ran == [WEATHER]
    (call,) = [p for p in responses(messages)[0].parts if isinstance(p, ToolCallPart)]
    assert output == scenario.answer(streamed).expected["text"].strip()
    assert second[-2]["tool_calls"][0]["id"] == call.tool_call_id
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == call.tool_call_id


@STREAMED
async def test_reasoning_field(streamed: bool) -> None:
    name = "stream-reasoning" if streamed else "nonstream-reasoning"
    transcript = BY_ID[f"vllm/captured--qwen3-hermes--{name}"]
    async with ReplayServer(Exchange([transcript]).answer) as server:
        output, messages = await ask(Agent(model(server, "vllm")), streamed)
    (response,) = responses(messages)
    assert thinking(response) == transcript.expected["reasoning"].strip()
    assert output == transcript.expected["text"].strip()


@STREAMED
async def test_think_tags(streamed: bool) -> None:
    transcript = BY_ID["llamacpp/captured--qwen3-reasoning-none--stream-think-in-content"]
    async with recorded(transcript) as server:
        output, messages = await ask(Agent(model(server, "llamacpp")), streamed)
    (response,) = responses(messages)
    assert thinking(response).strip() == "The user asks for the weather in Paris."
    assert output == "It is sunny in Paris."
    assert "think>" not in texts(messages)


HARMONY_CALL = (
    "<|channel|>analysis<|message|>Need the weather.<|end|>"
    "<|start|>assistant to=functions.get_weather<|channel|>commentary<|constrain|>json"
    f"<|message|>{json.dumps(WEATHER)}<|call|>"
)
"""gpt-oss's turn as a server that leaves the harmony format in the content sends it (no
transcript holds one: the rigs serve no gpt-oss): its analysis, then a call in the role header."""


@STREAMED
async def test_harmony(streamed: bool) -> None:
    weather = Weather()
    script = Script([Reply(text=HARMONY_CALL), Reply(text="It is sunny in Paris.")])
    async with ReplayServer(script.answer) as server:
        agent = Agent(model(server, "vllm"), tools=[weather.get_weather])
        output, messages = await ask(agent, streamed)
    assert weather.ran == [WEATHER]
    first = responses(messages)[0]
    assert thinking(first) == "Need the weather."
    assert [p.tool_name for p in first.parts if isinstance(p, ToolCallPart)] == ["get_weather"]
    assert output == "It is sunny in Paris."
    assert "<|" not in texts(messages)


@STREAMED
async def test_unoffered_call(streamed: bool) -> None:
    """The recorded answer calls ``get_weather``; this agent has only ``get_time``."""
    ran: list[str] = []

    def get_time(city: str) -> str:
        """The local time in a city."""
        ran.append(city)
        return "noon"

    scenario = SCENARIOS["vllm"]
    async with TwoTurnServer(scenario) as server:
        agent = Agent(model(server, "vllm"), tools=[get_time])
        output, messages = await ask(agent, streamed)
        first, second = server.chat_requests
    assert ran == []
    asked = [p.tool_name for p in responses(messages)[0].parts if isinstance(p, ToolCallPart)]
    assert asked == ["get_weather"]
    assert [t["function"]["name"] for t in first["tools"]] == ["get_time"]
    told = second["messages"][-1]
    assert told["role"] == "tool" and "Unknown tool name: 'get_weather'" in told["content"]
    assert output == scenario.answer(streamed).expected["text"].strip()


class Thing(BaseModel):
    """The schema the llama-server recording was constrained to."""

    name: str = Field(max_length=8)
    n: int = Field(ge=0, le=99)


@STREAMED
async def test_structured_output(streamed: bool) -> None:
    name = "stream-json-schema" if streamed else "nonstream-json-schema"
    transcript = BY_ID[f"llamacpp/captured--qwen25-plain--{name}"]
    exchange = Exchange([transcript])
    partial: list[Thing] = []
    async with ReplayServer(exchange.answer) as server:
        agent = Agent(model(server, "llamacpp"), output_type=NativeOutput(Thing))
        if streamed:
            async with agent.run_stream(QUESTION) as result:
                partial = [value async for value in result.stream_output(debounce_by=None)]
                output = await result.get_output()
        else:
            output = (await agent.run(QUESTION)).output
    assert output == Thing.model_validate_json(transcript.expected["text"])
    assert exchange.bodies[0]["response_format"]["json_schema"]["name"] == "Thing"
    if streamed:  # values while the JSON arrived, then the validated one
        assert partial[-1] == output
        assert any(value != output for value in partial)


async def test_mid_stream_error() -> None:
    transcript = BY_ID["vllm/reconstructed--error-midstream"]
    seen: list[str] = []
    async with ReplayServer(Exchange([transcript]).answer) as server:
        agent = Agent(model(server, "vllm"))
        with pytest.raises(ModelServerError) as caught:
            async with agent.run_stream(QUESTION) as result:
                async for delta in result.stream_text(delta=True, debounce_by=None):
                    seen.append(delta)
    assert "".join(seen) == transcript.expected["text"]
    assert isinstance(caught.value, ModelHTTPError)
    assert caught.value.status_code == 500 and caught.value.in_stream
    cause = caught.value.__cause__
    assert isinstance(cause, ProviderError) and cause.partial_response is not None
    assert cause.partial_response.text == transcript.expected["text"]


@STREAMED
async def test_per_request_header(streamed: bool) -> None:
    transcript = BY_ID["vllm/captured--plain--stream-text"]
    settings = ModelSettings(extra_headers={"X-Tenant": "acme-7"})
    async with recorded(transcript) as server:
        agent = Agent(model(server, "vllm"), model_settings=settings)
        output, _ = await ask(agent, streamed)
        (request,) = server.requests
    assert output == transcript.expected["text"].strip()
    assert request.headers["x-tenant"] == "acme-7"
    assert b"acme-7" not in request.body and b"X-Tenant" not in request.body


@STREAMED
async def test_session_id(streamed: bool) -> None:
    transcript = BY_ID["vllm/captured--plain--stream-text"]
    async with recorded(transcript) as server:
        agent = Agent(model(server, "vllm", session_affinity=SessionAffinity("vllm-router")))
        ids = []
        for _ in range(2):
            _, messages = await ask(agent, streamed)
            ids.append(messages[-1].conversation_id)
        keys = [request.headers["x-session-id"] for request in server.requests]
    assert keys == ids
    assert keys[0] != keys[1]

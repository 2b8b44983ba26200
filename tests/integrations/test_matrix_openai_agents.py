"""The scenario matrix for the OpenAI Agents SDK over ``OaicompatAgentsModel``.

An ``Agent`` run with ``Runner.run`` (whole) and ``Runner.run_streamed`` (streamed) against
replayed traffic; what the SDK's user gets, per scenario:

* text_call_in_content: llama.cpp's ``<tool_call>`` text is a call: the tool runs once with its
  arguments and ``final_output`` is the second turn's answer.
* structured_call: the server's call runs the tool once; the answer follows.
* reasoning_field: the reasoning is a ``ReasoningItem`` among ``new_items``, not in
  ``final_output``.
* think_tags: ``<think>…</think>`` left in the content is a ``ReasoningItem`` too.
* harmony: gpt-oss's channels left in the content give a ``ReasoningItem`` (analysis) and a
  call the tool runs; the answer follows.
* unoffered_call: a call to a tool the agent does not have never reaches the SDK as a call
  (which would raise ``ModelBehaviorError``): ``final_output`` is the call as the model wrote
  it, after one request, and no tool runs.
* structured_output: ``output_type=`` a pydantic model gives ``final_output`` as that model.
* mid_stream_error: streamed only; the text before the break arrives as events, then
  ``openai.APIError``.
* per_request_header: ``ModelSettings.extra_headers`` reach the backend (and the SDK's
  ``User-Agent``), ``ModelSettings.extra_body`` keys its body; the SDK's ``Authorization`` and
  ``X-Stainless-*`` do not.
* session_id: the run's ``session`` (or ``RunConfig.group_id``) is the conversation's routing
  key (``prompt_cache_key``, here ``X-Session-ID`` under vllm-router): two sessions that open
  with the same question are routed apart, and every turn of one keeps its key.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from tests.integrations.frameworks import require
from tests.integrations.openai_matrix import (
    CALL_IN_CONTENT,
    HARMONY_ARGUMENTS,
    QUESTION,
    MatrixServer,
    Reply,
    harmony_turn,
    matrix_pipeline,
    recorded,
)

agents = require("agents")
openai = require("openai")
agents.set_tracing_disabled(True)  # the SDK would export traces to OpenAI's servers

MODES = pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
ANSWER = "It is sunny in Paris."


class Weather:
    def __init__(self) -> None:
        self.ran: list[dict[str, Any]] = []

    def tool(self) -> Any:
        def get_weather(city: str, unit: str = "celsius", days: int = 0) -> str:
            """The current weather in a city."""
            self.ran.append({"city": city, "unit": unit, "days": days})
            return "sunny, 21 degrees"

        return agents.function_tool(get_weather)


def get_time(city: str) -> str:
    """The local time in a city."""
    raise AssertionError("never called in these tests")


async def run(
    turns: list[Reply],
    backend: str,
    stream: bool,
    *,
    tools: list[Any] | None = None,
    events: list[Any] | None = None,
    agent_options: dict[str, Any] | None = None,
    **run_options: Any,
) -> tuple[Any, MatrixServer]:
    """One agent run over the replayed turns; the SDK's result and the server."""
    from providers.integrations.openai_agents import OaicompatAgentsModel

    async with MatrixServer(turns) as server:
        model = OaicompatAgentsModel(matrix_pipeline(server, backend), owns_client=True)
        async with model:
            agent = agents.Agent(
                name="weather", model=model, tools=tools or [], **(agent_options or {})
            )
            if not stream:
                return await agents.Runner.run(agent, QUESTION, **run_options), server
            result = agents.Runner.run_streamed(agent, QUESTION, **run_options)
            async for event in result.stream_events():
                if events is not None:
                    events.append(event)
            return result, server


def reasoning(result: Any) -> str:
    items = [item for item in result.new_items if isinstance(item, agents.ReasoningItem)]
    parts = [p for item in items for p in item.raw_item.content or item.raw_item.summary or []]
    return "".join(part.text for part in parts)


@MODES
async def test_text_call_in_content(stream: bool) -> None:
    weather = Weather()
    answer = recorded("llamacpp/captured--qwen25-plain--nonstream-text")
    result, server = await run(
        [recorded(CALL_IN_CONTENT), answer], "llamacpp", stream, tools=[weather.tool()]
    )
    assert weather.ran == [{"city": "Paris", "unit": "celsius", "days": 0}]
    assert result.final_output == answer_text("llamacpp/captured--qwen25-plain--nonstream-text")
    assert len(server.bodies) == 2
    (result_message,) = [m for m in server.bodies[1]["messages"] if m["role"] == "tool"]
    assert "sunny, 21 degrees" in str(result_message["content"])


def answer_text(transcript: str) -> str:
    from tests.integrations.exchanges import BY_ID

    text: str = BY_ID[transcript].expected["text"]
    return text


@MODES
async def test_structured_call(stream: bool) -> None:
    weather = Weather()
    form = "stream" if stream else "nonstream"
    turns = [
        recorded(f"vllm/captured--qwen3-hermes--{form}-tool-call"),
        recorded(f"vllm/captured--qwen3-hermes--{form}-reasoning"),
    ]
    result, server = await run(turns, "vllm", stream, tools=[weather.tool()])
    assert weather.ran == [{"city": "Paris", "unit": "celsius", "days": 0}]
    assert result.final_output == ANSWER
    assert len(server.bodies) == 2
    # Usage is asked for on streamed runs too (the stock class asks only OpenAI's servers).
    assert result.context_wrapper.usage.output_tokens == sum(
        recorded_usage(f"vllm/captured--qwen3-hermes--{form}-{turn}")
        for turn in ("tool-call", "reasoning")
    )
    assert (
        all(body.get("stream_options") == {"include_usage": True} for body in server.bodies)
        == stream
    )


def recorded_usage(transcript: str) -> int:
    from tests.integrations.exchanges import BY_ID

    count: int = BY_ID[transcript].expected["usage"]["output_token_count"]
    return count


@MODES
async def test_reasoning_field(stream: bool) -> None:
    form = "stream" if stream else "nonstream"
    turn = recorded(f"vllm/captured--qwen3-hermes--{form}-reasoning")
    result, _ = await run([turn], "vllm", stream)
    assert reasoning(result).strip() == "The user asks for the weather in Paris."
    assert result.final_output == ANSWER


@MODES
async def test_think_tags(stream: bool) -> None:
    turn = recorded("llamacpp/captured--qwen3-reasoning-none--stream-think-in-content")
    result, _ = await run([turn], "llamacpp", stream)
    assert reasoning(result).strip() == "The user asks for the weather in Paris."
    assert result.final_output == ANSWER
    assert "<think>" not in result.final_output


@MODES
async def test_harmony(stream: bool) -> None:
    weather = Weather()
    answer = recorded("vllm/captured--qwen3-hermes--nonstream-reasoning")
    result, _ = await run([harmony_turn(), answer], "vllm", stream, tools=[weather.tool()])
    assert weather.ran == [{"city": "Paris", "unit": "celsius", **HARMONY_ARGUMENTS}]
    assert reasoning(result).startswith("Need the weather.")
    assert result.final_output == ANSWER


@MODES
async def test_unoffered_call(stream: bool) -> None:
    form = "stream" if stream else "nonstream"
    turn = recorded(f"vllm/captured--qwen3-hermes--{form}-tool-call")
    result, server = await run([turn], "vllm", stream, tools=[agents.function_tool(get_time)])
    assert len(server.bodies) == 1
    written = str(result.final_output)
    assert "get_weather" in written and "Paris" in written
    assert not [item for item in result.new_items if isinstance(item, agents.ToolCallItem)]


class Thing(BaseModel):
    name: str
    n: int


@MODES
async def test_structured_output(stream: bool) -> None:
    form = "stream" if stream else "nonstream"
    turn = recorded(f"llamacpp/captured--qwen25-plain--{form}-json-schema")
    result, server = await run([turn], "llamacpp", stream, agent_options={"output_type": Thing})
    assert isinstance(result.final_output, Thing)
    assert result.final_output.n == 64
    assert server.bodies[0]["response_format"]["type"] == "json_schema"


async def test_mid_stream_error() -> None:
    """Streamed only: a whole answer has no middle to break in."""
    events: list[Any] = []
    with pytest.raises(openai.APIError) as caught:
        await run([recorded("vllm/reconstructed--error-midstream")], "vllm", True, events=events)
    assert not isinstance(caught.value, openai.APIStatusError)
    deltas = [
        event.data.delta
        for event in events
        if event.type == "raw_response_event" and event.data.type == "response.output_text.delta"
    ]
    assert "".join(deltas) == "Hello!"


@MODES
async def test_per_request_header(stream: bool) -> None:
    form = "stream" if stream else "nonstream"
    settings = agents.ModelSettings(
        extra_headers={"X-Tenant": "acme", "X-Session-ID": "t-7"}, extra_body=NO_THINKING
    )
    turn = recorded(f"vllm/captured--plain--{form}-text")
    _, server = await run([turn], "vllm", stream, agent_options={"model_settings": settings})
    (got,) = server.headers
    assert (got["x-tenant"], got["x-session-id"]) == ("acme", "t-7")
    assert got["user-agent"].startswith("Agents/Python")
    assert "authorization" not in got  # the SDK's key; the configured backend has none
    assert not [name for name in got if name.startswith("x-stainless-")]
    assert server.bodies[0]["chat_template_kwargs"] == NO_THINKING["chat_template_kwargs"]


NO_THINKING = {"chat_template_kwargs": {"enable_thinking": False}}


@MODES
async def test_session_id(stream: bool) -> None:
    form = "stream" if stream else "nonstream"
    turn = recorded(f"vllm/captured--plain--{form}-text")
    sessions = {thread: agents.SQLiteSession(thread) for thread in ("thread-a", "thread-b")}
    keys: list[str] = []
    for thread in ("thread-a", "thread-a", "thread-b"):
        _, server = await run([turn], "vllm", stream, session=sessions[thread])
        keys += [headers["x-session-id"] for headers in server.headers]
    assert keys[0] == keys[1]  # one session, one key, turn after turn (its history grew)
    assert keys[2] != keys[0]  # the same opening in another session
    assert all(key.startswith("agents-sdk:session:") for key in keys)

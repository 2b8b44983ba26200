"""``ChatOaicompat`` in LangChain's own agent loop (``create_agent``), over replayed traffic.

Same two-turn replays as the transport's tests (``replay_turns``); here LangChain's messages
are checked field by field: the call in ``tool_calls`` (from llama.cpp's ``<tool_call>`` text
too), reasoning in ``additional_kwargs["reasoning_content"]``, each answer's
``usage_metadata`` equal to its recording's usage. Then what only an adapter can do: a call
cut by ``max_tokens`` is an ``invalid_tool_call`` the agent does not run, errors are LangChain's
exception types, and closing a stream hangs up on the server.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any, cast

import pytest

from providers import (
    ChatMessage,
    ChatResponse,
    ContextLengthExceededError,
    FunctionCallContent,
    ServerError,
    create_chat_client,
)
from tests.integrations.frameworks import require
from tests.integrations.replay_turns import (
    QUESTION,
    SCENARIOS,
    TOOL_RESULT,
    TRANSCRIPTS,
    Scenario,
    TwoTurnServer,
)
from tests.integrations.servers import InThread, StallingServer, serve_recording
from tests.integrations.test_openai_transport import ANSWERS

langchain_core = require("langchain_core")
agents = require("langchain.agents")

from langchain_core import exceptions as lc_errors  # noqa: E402
from langchain_core.messages import AIMessage, AIMessageChunk, ToolMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

from providers.integrations._langchain_convert import ai_message  # noqa: E402
from providers.integrations.langchain import ChatOaicompat  # noqa: E402


def weather_tool(ran: list[dict[str, Any]]) -> Any:
    @tool
    def get_weather(city: str, unit: str = "celsius") -> str:
        """The current weather in a city."""
        ran.append({"city": city, "unit": unit})
        return TOOL_RESULT

    return get_weather


def pipeline(base_url: str, backend: str) -> Any:
    return create_chat_client(f"{base_url}/v1", "served", backend=backend, telemetry=False)


async def run_agent(scenario: Scenario, mode: str) -> tuple[list[Any], list[dict[str, Any]], Any]:
    """``mode``: ``whole`` (``ainvoke``), ``streamed`` (``ainvoke`` on a streaming model),
    ``astream`` (the agent's ``astream`` in ``messages`` mode, token by token)."""
    ran: list[dict[str, Any]] = []
    async with TwoTurnServer(scenario) as server:
        client = pipeline(server.base_url, scenario.backend)
        # `streaming` only when set: LangChain reads an explicit False as "never stream", even
        # for the agent's token stream.
        if mode == "streamed":
            model = ChatOaicompat(client=client, streaming=True)
        else:
            model = ChatOaicompat(client=client)
        agent = agents.create_agent(model, [weather_tool(ran)])
        request = {"messages": [{"role": "user", "content": QUESTION}]}
        if mode == "astream":
            tokens: list[AIMessageChunk] = []
            async for kind, item in agent.astream(request, stream_mode=["messages", "values"]):
                if kind == "values":
                    state = item
                elif isinstance(item[0], AIMessageChunk):
                    tokens.append(item[0])
            assert "".join(t.text for t in tokens) == ANSWERS[scenario.backend]
        else:
            state = await agent.ainvoke(request)
        await model.aclose()
    return state["messages"], ran, server


@pytest.mark.parametrize("mode", ["whole", "streamed", "astream"])
@pytest.mark.parametrize("backend", list(SCENARIOS))
async def test_the_agent_loop_completes_each_scenario(backend: str, mode: str) -> None:
    scenario = SCENARIOS[backend]
    messages, ran, server = await run_agent(scenario, mode)
    stream = mode != "whole"
    assert ran == [scenario.arguments()]
    call_message, tool_message, answer = messages[1:]
    assert isinstance(call_message, AIMessage) and isinstance(answer, AIMessage)
    (call,) = call_message.tool_calls
    assert (call["name"], call["args"]) == ("get_weather", scenario.arguments())
    assert call_message.invalid_tool_calls == []
    assert isinstance(tool_message, ToolMessage) and tool_message.tool_call_id == call["id"]
    assert answer.content == ANSWERS[backend]
    assert answer.tool_calls == []
    reasoning = scenario.call(stream).expected["reasoning"].strip()
    assert call_message.additional_kwargs.get("reasoning_content", "") == reasoning
    assert answer.additional_kwargs.get("reasoning_content", "") == (
        scenario.answer(stream).expected["reasoning"].strip()
    )
    turns = ((call_message, scenario.call(stream)), (answer, scenario.answer(stream)))
    for message, turn in turns:
        usage = message.usage_metadata
        assert usage is not None
        assert usage["input_tokens"] == turn.count("input_token_count")
        assert usage["output_tokens"] == turn.count("output_token_count")
        assert usage["total_tokens"] == turn.count("total_token_count")
    history = server.chat_requests[1]["messages"]
    (sent_call,) = history[1]["tool_calls"]
    assert sent_call["id"] == call["id"]
    assert json.loads(sent_call["function"]["arguments"]) == scenario.arguments()
    assert history[2] == {"role": "tool", "tool_call_id": call["id"], "content": TOOL_RESULT}


async def test_a_call_cut_by_max_tokens_is_invalid_and_not_run() -> None:
    ran: list[dict[str, Any]] = []
    async with serve_recording(
        "vllm", "captured--qwen3-hermes--stream-tool-call-length-cut"
    ) as server:
        model = ChatOaicompat(client=pipeline(server.base_url, "vllm"), streaming=True)
        bound = model.bind_tools([weather_tool(ran)])
        message = await bound.ainvoke(QUESTION)
        chunks = [chunk async for chunk in bound.astream(QUESTION)]
        await model.aclose()
    assert isinstance(message, AIMessage)
    assert message.tool_calls == []
    (invalid,) = message.invalid_tool_calls
    assert invalid["name"] == "get_weather"
    streamed = sum(chunks[1:], chunks[0])
    assert isinstance(streamed, AIMessageChunk)
    assert streamed.tool_calls == []
    assert [c["name"] for c in streamed.invalid_tool_calls] == ["get_weather"]
    # The model's own text (here: none came) survives JSON-quoted: LangChain reads empty
    # arguments as `{}`, which would make the cut call executable.
    (chunk_call,) = streamed.tool_call_chunks
    assert json.loads(chunk_call["args"] or "null") == ""
    assert ran == []
    # Nothing else came: the answer is the call as written, not an empty message.
    written = '<tool_call>\n{"name": "get_weather", "arguments": {}}\n</tool_call>'
    assert message.text == streamed.text == written


def test_a_flagged_call_in_a_whole_answer_keeps_its_error() -> None:
    cut = FunctionCallContent.from_json("call_1", "get_weather", '{"city": "Par')
    message = ai_message(ChatResponse([ChatMessage.assistant("", cut)]))
    assert message.tool_calls == []
    (invalid,) = message.invalid_tool_calls
    assert invalid["args"] == '{"city": "Par'
    assert invalid["error"] == cut.error and cut.error


async def test_context_overflow_is_langchains_and_ours() -> None:
    async with serve_recording("vllm", "captured--plain--error-context-exceeded") as server:
        model = ChatOaicompat(client=pipeline(server.base_url, "vllm"))
        with pytest.raises(lc_errors.ContextOverflowError) as caught:
            await model.ainvoke(QUESTION)
        await model.aclose()
    assert isinstance(caught.value, ContextLengthExceededError)
    assert "maximum context length is 4096" in str(caught.value)


async def test_a_mid_stream_error_is_a_model_api_error_with_the_partial_answer() -> None:
    async with serve_recording("vllm", "reconstructed--error-midstream") as server:
        model = ChatOaicompat(client=pipeline(server.base_url, "vllm"))
        got: list[str] = []
        with pytest.raises(lc_errors.ModelAPIError) as caught:
            async for chunk in model.astream(QUESTION):
                got.append(chunk.text)
        await model.aclose()
    assert isinstance(caught.value, ServerError)
    assert "".join(got) == "Hello!"
    partial = caught.value.partial_response
    assert partial is not None and partial.text == "Hello!"


async def test_closing_the_stream_hangs_up_on_the_server() -> None:
    recording = TRANSCRIPTS / "vllm" / "captured--qwen3-hermes--stream-reasoning.sse"
    async with StallingServer(recording) as server:
        model = ChatOaicompat(client=pipeline(server.base_url, "vllm"))
        stream = cast(AsyncGenerator[AIMessageChunk, None], model.astream(QUESTION))
        first = await anext(stream)
        assert first.additional_kwargs.get("reasoning_content")
        await stream.aclose()
        await asyncio.wait_for(server.hung_up.wait(), 10)
        await model.aclose()


async def test_cancelling_the_agent_hangs_up_on_the_server() -> None:
    recording = TRANSCRIPTS / "vllm" / "captured--qwen3-hermes--stream-reasoning.sse"
    async with StallingServer(recording) as server:
        model = ChatOaicompat(client=pipeline(server.base_url, "vllm"), streaming=True)
        agent = agents.create_agent(model, [weather_tool([])])
        task = asyncio.create_task(agent.ainvoke({"messages": [{"role": "user", "content": "hi"}]}))
        while server.requests == 0:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.wait_for(server.hung_up.wait(), 10)
        await model.aclose()


def write_config(path: Path, base_url: str) -> Path:
    path.write_text(
        "backends:\n"
        f'  replay: {{base_url: "{base_url}/v1", model_id: served, backend: llamacpp}}\n'
        "roles: {main: replay}\n"
    )
    return path


async def test_from_config_runs_the_configured_pipeline(tmp_path: Path) -> None:
    scenario = SCENARIOS["llamacpp"]
    ran: list[dict[str, Any]] = []
    async with TwoTurnServer(scenario) as server:
        model = ChatOaicompat.from_config(
            write_config(tmp_path / "oaicompat.yaml", server.base_url)
        )
        agent = agents.create_agent(model, [weather_tool(ran)])
        state = await agent.ainvoke({"messages": [{"role": "user", "content": QUESTION}]})
        await model.aclose()
    assert ran == [scenario.arguments()]
    assert state["messages"][-1].content == ANSWERS["llamacpp"]
    assert server.chat_requests[0]["model"] == "served"


@pytest.mark.parametrize("streaming", [False, True], ids=["whole", "streamed"])
def test_the_sync_agent_loop_completes_the_llamacpp_scenario(streaming: bool) -> None:
    """``invoke`` from blocking code: ``SyncChatClient`` runs the pipeline on its own loop
    thread (the replay server has its own too)."""
    scenario = SCENARIOS["llamacpp"]
    ran: list[dict[str, Any]] = []
    with InThread(TwoTurnServer(scenario)) as server:
        client = pipeline(server.base_url, "llamacpp")
        if streaming:
            model = ChatOaicompat(client=client, streaming=True, owns_client=True)
        else:
            model = ChatOaicompat(client=client, owns_client=True)
        agent = agents.create_agent(model, [weather_tool(ran)])
        state = agent.invoke({"messages": [{"role": "user", "content": QUESTION}]})
        model.close()
    assert ran == [scenario.arguments()]
    call_message, answer = state["messages"][1], state["messages"][-1]
    assert [c["args"] for c in call_message.tool_calls] == [scenario.arguments()]
    assert answer.content == ANSWERS["llamacpp"]
    assert answer.usage_metadata["output_tokens"] == scenario.answer(streaming).count(
        "output_token_count"
    )
    assert len(server.chat_requests) == 2


def test_leaving_a_sync_stream_early_hangs_up_on_the_server() -> None:
    recording = TRANSCRIPTS / "vllm" / "captured--qwen3-hermes--stream-reasoning.sse"
    with InThread(StallingServer(recording)) as server:
        model = ChatOaicompat(client=pipeline(server.base_url, "vllm"), owns_client=True)
        for chunk in model.stream(QUESTION):
            assert chunk.additional_kwargs.get("reasoning_content")
            break
        deadline = time.monotonic() + 10
        while not server.hung_up.is_set() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.hung_up.is_set()
        model.close()

"""``OaicompatTransport`` under each framework's own OpenAI class, over replayed traffic.

The replay server plays a real server's two turns (``replay_turns``); the framework's agent
loop talks to it through the oaicompat pipeline inside the transport. Each run must end as the
recording says it should: the tool ran once with the recorded arguments, the exact answer,
the reasoning where the framework keeps it, the recorded usage, and a second request that
carries the assistant's call and the tool's result. The llama.cpp scenario is the one the
frameworks fail alone: its call is ``<tool_call>`` text in the content.
"""

from __future__ import annotations

import json
from contextlib import aclosing
from typing import Any

import httpx
import pytest

from providers import create_chat_client
from providers.integrations.openai import OaicompatTransport
from tests.integrations.frameworks import RUNNERS, AgentRun, require
from tests.integrations.replay_turns import SCENARIOS, TOOL_RESULT, Scenario, TwoTurnServer

ANSWERS = {
    # Qwen3 writes two newlines after </think>; the pipeline drops them before the answer.
    "vllm": "It is sunny in Paris.",
    "sglang": "It is sunny in Paris.",
    "llamacpp": 'Line one\u2028line two\u2029para\x85next: "\u2028" done.',
}
NO_REASONING_SLOT = {"langchain-openai", "agent-framework"}
"""Classes that read no ``reasoning_content``: LangChain's ``ChatOpenAI`` (its docs say so) and
agent-framework's ``OpenAIChatCompletionClient`` (it reads only ``reasoning_details``). The
transport hands it to them and they drop it; ``ChatOaicompat`` keeps it."""


def openai_client(pipeline: Any, flavour: str) -> Any:
    openai = require("openai")
    if flavour == "httpx2":
        httpx2 = require("httpx2")
        from providers.integrations.openai_httpx2 import OaicompatHttpx2Transport

        http: Any = httpx2.AsyncClient(transport=OaicompatHttpx2Transport(pipeline))
    else:
        http = httpx.AsyncClient(transport=OaicompatTransport(pipeline))
    return openai.AsyncOpenAI(
        api_key="unused", base_url="http://oaicompat.invalid/v1", http_client=http, max_retries=0
    )


async def run_framework(
    framework: str, scenario: Scenario, stream: bool
) -> tuple[AgentRun, TwoTurnServer]:
    kind, runner = RUNNERS[framework]
    async with TwoTurnServer(scenario) as server:
        pipeline = create_chat_client(
            f"{server.base_url}/v1", "served", backend=scenario.backend, telemetry=False
        )
        async with aclosing(pipeline):
            if kind == "httpx":
                client: Any = httpx.AsyncClient(transport=OaicompatTransport(pipeline))
            else:
                client = openai_client(pipeline, "httpx2")
            run = await runner(client, stream)
    return run, server


def check_run(run: AgentRun, server: TwoTurnServer, framework: str, stream: bool) -> None:
    scenario = server.scenario
    assert run.tool_calls == [scenario.arguments()]
    assert run.answer == ANSWERS[scenario.backend]
    call_turn = scenario.call(stream)
    if framework not in NO_REASONING_SLOT:
        assert (run.reasoning or "") == call_turn.expected["reasoning"].strip()
    answer_turn = scenario.answer(stream)
    for name, got in (
        ("input_token_count", run.input_tokens),
        ("output_token_count", run.output_tokens),
    ):
        assert got == call_turn.count(name) + answer_turn.count(name), name
    assert len(server.chat_requests) == 2
    history = server.chat_requests[1]["messages"]
    assistant = next(m for m in history if m["role"] == "assistant")
    (call,) = assistant["tool_calls"]
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == scenario.arguments()
    (result,) = [m for m in history if m["role"] == "tool"]
    assert result["tool_call_id"] == call["id"]
    assert TOOL_RESULT in str(result["content"])


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("backend", list(SCENARIOS))
@pytest.mark.parametrize("framework", list(RUNNERS))
async def test_framework_agent_on_the_transport(framework: str, backend: str, stream: bool) -> None:
    run, server = await run_framework(framework, SCENARIOS[backend], stream)
    check_run(run, server, framework, stream)

"""The tool loop over recorded exchanges: ``FunctionInvokingChatClient`` on the real wire client,
served on loopback, its bytes cut inside every UTF-8 character and between CR and LF.

The first request is answered with a recorded tool-call exchange, the second with a recorded
plain-text answer: each offered function must run exactly once with the recorded arguments (or,
for a call the server cut off or sent unparseable, not at all), the second request must carry
the assistant's calls and the results, and the final answer must be the second recording's text,
streamed and not.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

from providers import (
    AIFunction,
    ChatOptions,
    ChatResponse,
    ChatRole,
    FunctionInvokingChatClient,
    FunctionResultContent,
    OpenAiCompatibleChatClient,
)
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from providers.replay.transcripts import Transcript, iter_transcripts
from tests.transcripts.replaying import awkward_cuts, cut_at

BY_ID = {t.id: t for t in iter_transcripts()}


@dataclass
class Exchange:
    """Serves the recordings in order, one per request, and keeps the request bodies."""

    replies: list[Transcript]
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def answer(self, request: ReceivedRequest) -> RecordedReply:
        self.bodies.append(json.loads(request.body))
        transcript = self.replies[len(self.bodies) - 1]
        content_type = transcript.sidecar["response"].get("content_type", "")
        return RecordedReply(transcript.status, transcript.body, {"Content-Type": content_type})


class Tools:
    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []

    def functions(self) -> list[AIFunction]:
        async def get_weather(city: str, unit: str = "celsius", days: int = 1) -> str:
            """Get the weather."""
            self.ran.append(("get_weather", {"city": city, "unit": unit}))
            return f"Sunny, 21 degrees {unit}"

        def get_time(tz: str) -> dict[str, str]:
            """Get the time."""
            self.ran.append(("get_time", {"tz": tz}))
            return {"tz": tz, "time": "12:00"}

        return [AIFunction.from_callable(get_weather), AIFunction.from_callable(get_time)]


async def run_loop(
    first: Transcript, second: Transcript, tools: Tools
) -> tuple[ChatResponse, list[dict[str, Any]]]:
    exchange = Exchange([first, second])
    options = ChatOptions(tools=list(tools.functions()))
    splitter = lambda data: cut_at(data, awkward_cuts(data))  # noqa: E731
    async with ReplayServer(exchange.answer, splitter) as server:
        wire = OpenAiCompatibleChatClient(server.base_url, backend=first.backend)
        async with FunctionInvokingChatClient(wire) as client:
            if first.is_stream:
                updates = [u async for u in client.get_streaming_response("Weather?", options)]
                response = ChatResponse.from_updates(updates)
                # The final answer is what came after the last tool result.
                last_result = max(i for i, u in enumerate(updates) if u.role == ChatRole.TOOL)
                answer = "".join(u.text for u in updates[last_result + 1 :])
                assert answer == second.expected["text"]
            else:
                response = await client.get_response("Weather?", options)
                assert response.messages[-1].text == second.expected["text"]
    assert len(exchange.bodies) == 2
    return response, exchange.bodies


def recorded_calls(transcript: Transcript) -> list[tuple[str, dict[str, Any]]]:
    return [(c["name"], c["arguments"]) for c in transcript.expected["tool_calls"]]


PARALLEL = [
    (
        "vllm/captured--qwen3-hermes--stream-parallel-tool-calls",
        "vllm/captured--plain--stream-text",
    ),
    (
        "vllm/captured--qwen3-hermes--nonstream-parallel-tool-calls",
        "vllm/captured--plain--nonstream-text",
    ),
    (
        "sglang/captured--qwen3-qwen25--stream-parallel-tool-calls",
        "sglang/captured--plain--stream-text",
    ),
    (
        "sglang/captured--qwen3-qwen25--nonstream-parallel-tool-calls",
        "sglang/captured--plain--nonstream-text",
    ),
]


@pytest.mark.parametrize(("first_id", "second_id"), PARALLEL, ids=[p[0] for p in PARALLEL])
async def test_a_recorded_parallel_call_runs_both_tools_once_and_returns_the_answer(
    first_id: str, second_id: str
) -> None:
    first, second = BY_ID[first_id], BY_ID[second_id]
    tools = Tools()
    response, bodies = await run_loop(first, second, tools)

    assert sorted(tools.ran) == sorted(recorded_calls(first))
    assert [name for name, _ in recorded_calls(first)] == ["get_weather", "get_time"]
    # The tools went out as declarations, from the functions' signatures.
    assert [t["function"]["name"] for t in bodies[0]["tools"]] == ["get_weather", "get_time"]
    # The second request replays the calls verbatim and answers each, in call order.
    wire_calls = bodies[1]["messages"][1]["tool_calls"]
    recorded = first.expected["tool_calls"]
    assert [(c["id"], c["function"]["arguments"]) for c in wire_calls] == [
        (c["call_id"], c["raw_arguments"]) for c in recorded
    ]
    assert bodies[1]["messages"][2:] == [
        {
            "role": "tool",
            "tool_call_id": recorded[0]["call_id"],
            "content": "Sunny, 21 degrees celsius",
        },
        {
            "role": "tool",
            "tool_call_id": recorded[1]["call_id"],
            "content": json.dumps({"tz": "Europe/Paris", "time": "12:00"}),
        },
    ]
    # Usage is the two requests' together, streamed or not.
    usage = response.usage
    assert usage is not None
    assert usage.total_token_count == (
        first.expected["usage"]["total_token_count"] + second.expected["usage"]["total_token_count"]
    )


UNRUNNABLE = [
    (
        "vllm/captured--qwen3-hermes--stream-tool-call-length-cut",
        "vllm/captured--plain--stream-text",
    ),
    (
        "sglang/captured--qwen3-qwen25--stream-tool-call-length-cut",
        "sglang/captured--plain--stream-text",
    ),
    (
        "vllm/captured--qwen3coder--stream-tool-call-length-cut",
        "vllm/captured--plain--stream-text",
    ),
]


@pytest.mark.parametrize(("first_id", "second_id"), UNRUNNABLE, ids=[p[0] for p in UNRUNNABLE])
async def test_a_call_cut_by_length_or_unparseable_is_never_run_and_the_model_is_told(
    first_id: str, second_id: str
) -> None:
    first, second = BY_ID[first_id], BY_ID[second_id]
    assert [c["error"] for c in first.expected["tool_calls"]] == [True]
    tools = Tools()
    response, bodies = await run_loop(first, second, tools)

    assert tools.ran == []
    (call,) = first.expected["tool_calls"]
    (tool_message,) = bodies[1]["messages"][2:]
    assert tool_message["tool_call_id"] == call["call_id"]
    assert tool_message["content"].startswith("Error: the call's arguments could not be read")
    results = [c for m in response.messages for c in m.contents]
    assert any(isinstance(c, FunctionResultContent) for c in results)
    assert response.text.endswith(second.expected["text"])

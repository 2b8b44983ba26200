"""A two-turn tool loop (call → ``function_call_output`` → answer) on both servers, replayed from
the captures, with the store off and on (issue 11 item 3 and "done when").

The captured exchanges chain: the continuation requests used the ids and call ids of the
captured first turns, so the requests our client builds can be compared with what was actually
sent, and each capture's ``engine_prompt`` shows what the model saw for that request.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from structlog.testing import capture_logs

from providers import ChatMessage, ChatResponse
from providers.replay.transcripts import Transcript
from providers.responses import (
    STORE_UNAVAILABLE_EVENT,
    ConversationMode,
    OpenAiCompatibleResponsesClient,
)
from tests.transcripts.replaying import BASE_URL, Pieces
from tests.transcripts.responses_replaying import BY_ID

SETS = {
    ("vllm", False): "qwen3-hermes",
    ("vllm", True): "qwen3-hermes-store",
    ("sglang", False): "qwen3-qwen25",
    ("sglang", True): "qwen3-qwen25-store",
}
QUESTION = "What is the weather in Paris?"
TOOL_RESULT = '{"temperature_c": 21, "condition": "sunny"}'
ANSWER = "\n\nIt is 21 degrees Celsius and sunny in Paris."


def capture(backend: str, store: bool, name: str) -> Transcript:
    return BY_ID[f"{backend}/captured--{SETS[backend, store]}--responses--{name}"]


class Exchanges:
    """A client whose requests are answered by these captures, one per request, in order."""

    def __init__(self, backend: str, answers: list[Transcript], **options: Any) -> None:
        self.answers = answers
        self.bodies: list[dict[str, Any]] = []

        def handler(request: httpx.Request) -> httpx.Response:
            transcript = self.answers[len(self.bodies)]
            self.bodies.append(json.loads(request.content))
            headers = {"content-type": transcript.sidecar["response"]["content_type"]}
            return httpx.Response(
                transcript.status, headers=headers, stream=Pieces([transcript.body])
            )

        self.client = OpenAiCompatibleResponsesClient(
            BASE_URL,
            backend=backend,
            http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
            **options,
        )


async def tool_loop(exchanges: Exchanges, *, streamed: bool) -> tuple[ChatResponse, ChatResponse]:
    client = exchanges.client
    first = await client.get_response(QUESTION)
    (call,) = first.tool_calls
    history = [
        ChatMessage.user(QUESTION),
        *first.messages,
        ChatMessage.tool(call.call_id, TOOL_RESULT),
    ]
    if streamed:
        updates = [u async for u in client.get_streaming_response(history)]
        second = ChatResponse.from_updates(updates)
    else:
        second = await client.get_response(history)
    return first, second


def assistant_turns(prompt: str) -> list[str]:
    return [turn for turn in prompt.split("<|im_start|>")[1:] if turn.startswith("assistant")]


@pytest.mark.parametrize("backend", ["vllm", "sglang"])
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_store_off_stateless_default_sends_the_whole_history(
    backend: str, streamed: bool
) -> None:
    history = capture(backend, False, "continue-stateless-history" + ("-stream" * streamed))
    exchanges = Exchanges(
        backend, [capture(backend, False, "nonstream-reasoning-then-tool-call"), history]
    )
    async with exchanges.client:
        first, second = await tool_loop(exchanges, streamed=streamed)
    assert first.finish_reason == "tool_calls"
    assert second.text == ANSWER
    assert second.finish_reason == "stop"
    sent = exchanges.bodies[1]
    assert sent["input"] == history.request["input"]  # exactly what was captured working
    assert "previous_response_id" not in sent
    assert sent["store"] is False
    # …and the model saw the call before its result (the captured prompt for that input).
    assert "<tool_call>" in assistant_turns(history.sidecar["engine_prompt"])[-2]


@pytest.mark.parametrize("backend", ["vllm", "sglang"])
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_store_off_previous_response_id_falls_back_with_one_warning(
    backend: str, streamed: bool
) -> None:
    suffix = "-stream" * streamed
    refused = capture(backend, False, "continue-previous-response-id" + suffix)
    history = capture(backend, False, "continue-stateless-history" + suffix)
    first_turn = capture(backend, False, "nonstream-reasoning-then-tool-call")
    exchanges = Exchanges(
        backend,
        [first_turn, refused, history],
        conversation_mode=ConversationMode.PREVIOUS_RESPONSE_ID,
    )
    with capture_logs() as logs:
        async with exchanges.client:
            _, second = await tool_loop(exchanges, streamed=streamed)
    assert second.text == ANSWER
    tried, resent = exchanges.bodies[1], exchanges.bodies[2]
    assert tried["previous_response_id"] == refused.request["previous_response_id"]
    # What was tried: the output alone (SGLang), or with the call vLLM's store would drop.
    resent_call = [history.request["input"][1]] if backend == "vllm" else []
    assert tried["input"] == [*resent_call, *refused.request["input"]]
    assert resent["input"] == history.request["input"]
    assert "previous_response_id" not in resent
    warnings = [log for log in logs if log["event"] == STORE_UNAVAILABLE_EVENT]
    assert len(warnings) == 1
    assert warnings[0]["status"] == refused.status  # vLLM 404, SGLang 400


@pytest.mark.parametrize("backend", ["vllm", "sglang"])
@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_store_on_previous_response_id_and_the_model_still_sees_the_call(
    backend: str, streamed: bool
) -> None:
    continued = capture(backend, True, "continue-previous-response-id" + ("-stream" * streamed))
    chain = capture(backend, True, "continue-previous-response-id-chain")
    exchanges = Exchanges(
        backend,
        [capture(backend, True, "nonstream-reasoning-then-tool-call"), continued, chain],
        conversation_mode=ConversationMode.PREVIOUS_RESPONSE_ID,
    )
    async with exchanges.client:
        first, second = await tool_loop(exchanges, streamed=streamed)
        (call,) = first.tool_calls
        history = [
            ChatMessage.user(QUESTION),
            *first.messages,
            ChatMessage.tool(call.call_id, TOOL_RESULT),
            *second.messages,
            ChatMessage.user("And tomorrow?"),
        ]
        third = await exchanges.client.get_response(history)
    assert second.text == ANSWER
    assert third.text == "\n\nI only know today's weather."
    sent = exchanges.bodies[1]
    assert exchanges.bodies[0]["store"] is True
    assert sent["previous_response_id"] == continued.request["previous_response_id"]
    output_item = continued.request["input"][-1]
    assert output_item["type"] == "function_call_output"
    captured_prompt = continued.sidecar["engine_prompt"]
    if backend == "sglang":
        # SGLang replays the stored assistant turn itself, call included: only the output.
        assert sent["input"] == [output_item]
        assert "<tool_call>" in assistant_turns(captured_prompt)[0]
    else:
        # vLLM's stored history drops the call (its captured prompt has no assistant turn
        # before the tool result), so the client sends the call again ahead of the output.
        assert assistant_turns(captured_prompt) == ["assistant\n"]
        function_call = {
            "type": "function_call",
            "call_id": call.call_id,
            "name": "get_weather",
            "arguments": call.raw_arguments,
        }
        assert sent["input"] == [function_call, output_item]
    # The third turn continues from the second, sending only the new question.
    third_sent = exchanges.bodies[2]
    assert third_sent["previous_response_id"] == second.response_id
    if not streamed:  # the chain was captured after the non-streamed second turn
        assert second.response_id == chain.request["previous_response_id"]
    assert third_sent["input"] == [
        {"type": "message", "role": "user", "content": chain.request["input"]}
    ]

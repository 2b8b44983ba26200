"""The issue's Done-when, through the real client: captured bytes in, cache table out.

Each transcript is served by ``httpx.MockTransport`` one SSE event at a time, with a short
pause, to ``OpenAiCompatibleChatClient`` wrapped in ``TelemetryChatClient``.
"""

from __future__ import annotations

from typing import Any

import pytest
from structlog.testing import capture_logs

from providers import AuthenticationError, ChatMessage, ChatResponse
from telemetry import (
    CLIENT_MEASURED,
    SERVER_REPORTED,
    CacheEvolution,
    Measurement,
    TelemetryChatClient,
    events,
    request_timings,
)
from tests.unit.telemetry.helpers import serving, transcript

CACHE_TURNS = [f"captured--qwen25-plain--cache-turn{i}" for i in (1, 2, 3)]


async def stream(client: TelemetryChatClient, messages: list[ChatMessage]) -> ChatResponse:
    return ChatResponse.from_updates(
        [update async for update in client.get_streaming_response(messages)]
    )


async def test_three_llamacpp_cache_turns_give_5_177_195_server_reported() -> None:
    evolution = CacheEvolution()
    turns = [transcript("llamacpp", name) for name in CACHE_TURNS]
    async with serving(turns) as (inner, requests):
        client = TelemetryChatClient(inner, observers=[evolution.add])
        assert client.backend == "llamacpp"
        history: list[ChatMessage] = [ChatMessage.system("You are terse.")]
        with capture_logs() as logs:
            for number in (1, 2, 3):
                history.append(ChatMessage.user(f"Turn {number}?"))
                response = await stream(client, history)
                history.append(ChatMessage.assistant(response.text))
                timings = request_timings(response)
                assert timings is not None and timings.server is not None
                assert timings.client.ttft_ms is not None and timings.client.ttft_ms > 0
                # The raw llama.cpp object is still there, under its own key.
                assert response.additional_properties["timings"]["cache_n"] == (
                    timings.server.cached_input_tokens
                )
    assert len(requests) == 3

    cached = [turn.cached_tokens for turn in evolution.turns]
    assert cached == [
        Measurement(5, "token", SERVER_REPORTED),
        Measurement(177, "token", SERVER_REPORTED),
        Measurement(195, "token", SERVER_REPORTED),
    ]
    assert [t.input_tokens.value for t in evolution.turns if t.input_tokens] == [177, 195, 213]
    assert [t.uncached_tokens.value for t in evolution.turns if t.uncached_tokens] == [
        172,
        18,
        18,
    ]
    assert [t.prompt_ms_server.value for t in evolution.turns if t.prompt_ms_server] == [
        25.6,
        23.824,
        23.723,
    ]
    for turn in evolution.turns:
        assert turn.ttft_ms_client is not None
        assert turn.ttft_ms_client.source == CLIENT_MEASURED
        assert turn.ttft_ms_client.value > 0
        assert turn.output_tokens_per_second_server is not None

    text = evolution.render_text()
    assert [line.split()[2] for line in text.splitlines()[1:4]] == ["5", "177", "195"]
    assert "n/a" not in text.splitlines()[1].split()[:6]
    data = evolution.to_json()
    assert [t["cached_tokens"]["value"] for t in data["turns"]] == [5, 177, 195]
    assert {t["cached_tokens"]["source"] for t in data["turns"]} == {"server_reported"}
    assert data["notes"] == []

    completed = [e for e in logs if e["event"] == events.REQUEST_COMPLETED]
    assert [e[events.USAGE]["cached_input_tokens"] for e in completed] == [5, 177, 195]
    assert not [e for e in logs if e["event"] == events.CACHE_REPORT_UNAVAILABLE]


async def test_vllm_without_the_flag_shows_na_logs_the_hint_once_and_measures_ttft() -> None:
    served = [transcript("vllm", "captured--plain--stream-text")] * 2
    evolution = CacheEvolution()
    async with serving(served) as (inner, _):
        client = TelemetryChatClient(
            inner, observers=[evolution.add], cache_hint=evolution.cache_hint
        )
        with capture_logs() as logs:
            first = await stream(client, [ChatMessage.user("weather?")])
            await stream(client, [ChatMessage.user("weather?")])
    timings = request_timings(first)
    assert timings is not None
    assert timings.backend == "vllm"
    assert timings.client.ttft_ms is not None and timings.client.ttft_ms > 0
    assert timings.client.first_byte is not None
    assert timings.client.request_sent <= timings.client.first_byte <= timings.client.end
    assert timings.server is not None
    assert timings.server.input_tokens == 15
    assert timings.server.cached_input_tokens is None
    assert timings.server.prompt_ms is None  # vLLM reports no server timings: none invented

    hints = [e for e in logs if e["event"] == events.CACHE_REPORT_UNAVAILABLE]
    assert len(hints) == 1
    assert hints[0][events.SERVER_FLAG] == "--enable-prompt-tokens-details"
    assert hints[0][events.BACKEND] == "vllm"

    rows = [line.split() for line in evolution.render_text().splitlines()[1:3]]
    for row in rows:
        assert row[1:4] == ["15", "n/a", "n/a"]  # input, cached, uncached
        assert row[4] == "n/a"  # prompt_ms_server
        assert float(row[5]) > 0  # ttft_ms_client
    assert evolution.to_json()["turns"][0]["cached_tokens"] is None


async def test_vllm_with_the_flag_reads_cached_tokens_from_usage() -> None:
    async with serving([transcript("vllm", "reconstructed--usage")]) as (inner, _):
        client = TelemetryChatClient(inner)
        with capture_logs() as logs:
            response = await stream(client, [ChatMessage.user("Say hello")])
    timings = request_timings(response)
    assert timings is not None and timings.server is not None
    assert timings.server.cached_input_tokens == 16
    assert timings.client.ttft_ms is not None and timings.client.ttft_ms > 0
    turn = CacheEvolution().add(response)
    assert turn is not None
    assert turn.cached_tokens == Measurement(16, "token", SERVER_REPORTED)
    assert turn.uncached_tokens == Measurement(14, "token", SERVER_REPORTED)
    assert not [e for e in logs if e["event"] == events.CACHE_REPORT_UNAVAILABLE]


async def test_sglang_reasoning_tokens_and_the_cache_report_hint() -> None:
    served = [transcript("sglang", "assembled--seed000-gpt-oss-reasoning-length")]
    async with serving(served) as (inner, _):
        client = TelemetryChatClient(inner)
        with capture_logs() as logs:
            response = await stream(client, [ChatMessage.user("think")])
    timings = request_timings(response)
    assert timings is not None and timings.server is not None
    assert timings.server.reasoning_tokens == 200
    assert timings.server.cached_input_tokens is None
    (hint,) = [e for e in logs if e["event"] == events.CACHE_REPORT_UNAVAILABLE]
    assert hint[events.SERVER_FLAG] == "--enable-cache-report"


async def test_non_streamed_llamacpp_response_gets_top_level_timings() -> None:
    async with serving([transcript("llamacpp", "captured--qwen25-plain--nonstream-text")]) as (
        inner,
        _,
    ):
        client = TelemetryChatClient(inner)
        with capture_logs() as logs:
            response = await client.get_response("hi")
    timings = request_timings(response)
    assert timings is not None and timings.server is not None
    assert timings.streamed is False
    assert timings.server.cached_input_tokens == 35
    assert timings.server.prompt_ms == 4.869
    c = timings.client
    assert c.response_headers is not None and c.first_byte is not None
    assert c.request_sent <= c.response_headers <= c.first_byte <= c.end
    assert c.e2e_ms > 0
    (completed,) = [e for e in logs if e["event"] == events.REQUEST_COMPLETED]
    assert completed[events.STREAMED] is False


async def test_a_planted_api_key_never_reaches_the_logs() -> None:
    secret = "sk-PLANTED-0123456789abcdef"
    ok = transcript("llamacpp", "captured--qwen25-plain--cache-turn1")
    refused = _unauthorized(ok, secret)
    async with serving([ok, refused], api_key=secret) as (inner, requests):
        client = TelemetryChatClient(inner)
        with capture_logs() as logs:
            await stream(client, [ChatMessage.user("hi")])
            with pytest.raises(AuthenticationError):  # the 401, typed by the client
                await client.get_response("hi")
    assert requests[0].headers["authorization"] == f"Bearer {secret}"  # it was really sent
    assert [e["event"] for e in logs] == [events.REQUEST_COMPLETED, events.REQUEST_FAILED]
    assert secret not in repr(logs)
    assert "Bearer" not in repr(logs)


def _unauthorized(template: Any, secret: str) -> Any:
    """A 401 whose body echoes the key, as some gateways do."""
    from providers.replay.transcripts import Transcript

    body = (
        '{"error":{"message":"Incorrect API key provided: ' + secret + '",'
        '"type":"invalid_request_error","code":"invalid_api_key"}}'
    ).encode()
    sidecar = {**template.sidecar, "response": {"status": 401, "content_type": "application/json"}}
    return Transcript(template.backend, "unauthorized", body, sidecar)

"""``TelemetryChatClient`` over a fake inner client: observes, never alters, always reports."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, MutableMapping
from typing import Any

import pytest
from structlog.testing import capture_logs

from providers import (
    ChatFinishReason,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    RateLimitError,
    TextReasoningContent,
    UsageDetails,
)
from providers.builder import ChatClientBuilder
from providers.chat_completions.client import TRANSPORT_TIMESTAMPS
from telemetry import (
    REQUEST_TIMINGS,
    RETRY_ATTEMPTS_PROPERTY,
    RequestRecord,
    SglangTimingsExtractor,
    TelemetryChatClient,
    events,
    request_timings,
)
from tests.unit.telemetry.helpers import (
    FakeChatClient,
    StepClock,
    streaming,
    text,
    usage_update,
)


def only(logs: list[MutableMapping[str, Any]], name: str) -> MutableMapping[str, Any]:
    (event,) = [e for e in logs if e["event"] == name]
    return event


STAMPS = {"request_sent": 100.25, "response_headers": 100.3, "first_byte": 100.4}


def llamacpp_stream() -> list[ChatResponseUpdate]:
    return [
        ChatResponseUpdate(
            role=ChatRole.ASSISTANT,
            model_id="rig/tiny.gguf",
            response_id="c1",
            additional_properties={TRANSPORT_TIMESTAMPS: dict(STAMPS)},
        ),
        text("An"),
        ChatResponseUpdate([TextReasoningContent("hm")]),
        text("swer"),
        ChatResponseUpdate(finish_reason=ChatFinishReason.STOP),
        usage_update(
            177,
            6,
            5,
            timings={
                "cache_n": 5,
                "prompt_n": 172,
                "prompt_ms": 25.6,
                "predicted_per_second": 47.2,
            },
        ),
    ]


async def collect(
    client: TelemetryChatClient, options: ChatOptions | None = None
) -> list[ChatResponseUpdate]:
    return [u async for u in client.get_streaming_response("hi", options)]


async def test_updates_pass_through_unchanged_and_in_order() -> None:
    updates = llamacpp_stream()
    snapshot = [(u.contents[:], u.role, u.finish_reason) for u in updates]
    client = TelemetryChatClient(FakeChatClient(stream=streaming(updates)), backend="llamacpp")
    with capture_logs():
        got = await collect(client)
    assert [id(u) for u in got] == [id(u) for u in updates]
    assert [(u.contents, u.role, u.finish_reason) for u in got] == snapshot
    response = ChatResponse.from_updates(got)
    assert response.text == "Answer" and response.reasoning == "hm"


async def test_stream_timings_use_transport_stamps_and_substantive_updates() -> None:
    clock = StepClock(start=100.0, step=0.5)
    client = TelemetryChatClient(
        FakeChatClient(stream=streaming(llamacpp_stream())), backend="llamacpp", clock=clock
    )
    with capture_logs():
        updates = await collect(client)
    timings = request_timings(updates[-1])
    assert timings is not None
    assert request_timings(ChatResponse.from_updates(updates)) is timings
    assert all(request_timings(u) is None for u in updates[:-1])
    c = timings.client
    # clock readings: 100.0 start, 100.5 "An", 101.0 "hm", 101.5 "swer", 102.0 end.
    assert (c.started, c.request_sent, c.response_headers, c.first_byte) == (
        100.0,
        100.25,
        100.3,
        100.4,
    )
    assert (c.first_token, c.last_token, c.end) == (100.5, 101.5, 102.0)
    assert c.substantive_updates == 3  # role-only, finish and usage updates are not tokens
    assert c.ttft_ms == 250.0
    assert c.mean_inter_token_gap_ms == 500.0
    assert timings.output_tokens_per_second_client == 5.0  # (6 - 1) tokens over 1 s
    assert timings.server is not None
    assert timings.server.cached_input_tokens == 5
    assert timings.server.prompt_ms == 25.6


async def test_one_completed_event_per_stream() -> None:
    client = TelemetryChatClient(
        FakeChatClient(stream=streaming(llamacpp_stream()), model_id="anything"),
        backend="llamacpp",
    )
    with capture_logs() as logs:
        await collect(client)
    assert [e["event"] for e in logs] == [events.REQUEST_COMPLETED]
    event = logs[0]
    assert event["log_level"] == "info"
    assert event[events.BACKEND] == "llamacpp"
    assert event[events.MODEL] == "rig/tiny.gguf"
    assert event[events.REQUEST_MODEL] == "anything"
    assert event[events.STREAMED] is True
    assert event[events.FINISH_REASONS] == ["stop"]
    assert event[events.USAGE]["cached_input_tokens"] == 5
    assert event[events.TIMINGS]["prompt_ms_server"] == 25.6
    assert event[events.TIMINGS]["ttft_ms_client"] > 0
    assert event[events.RETRY_ATTEMPTS] is None


async def test_request_model_comes_from_options_first() -> None:
    client = TelemetryChatClient(
        FakeChatClient(stream=streaming([text("x")]), model_id="default"), backend="vllm"
    )
    with capture_logs() as logs:
        await collect(client, ChatOptions(model_id="chosen"))
    assert logs[0][events.REQUEST_MODEL] == "chosen"


async def test_retry_attempts_are_read_from_the_retry_layer_property() -> None:
    updates = [text("a", **{RETRY_ATTEMPTS_PROPERTY: 2}), usage_update(3, 1)]
    client = TelemetryChatClient(FakeChatClient(stream=streaming(updates)), backend="vllm")
    with capture_logs() as logs:
        await collect(client)
    assert only(logs, events.REQUEST_COMPLETED)[events.RETRY_ATTEMPTS] == 2


async def test_a_failed_stream_logs_failed_with_the_error_class_and_reraises() -> None:
    error = RateLimitError("busy", status=429, backend="vllm")
    error.retry_attempts = 3
    closed: list[bool] = []
    client = TelemetryChatClient(
        FakeChatClient(stream=streaming([text("a")], error=error, closed=closed)),
        backend="vllm",
    )
    got: list[ChatResponseUpdate] = []
    with capture_logs() as logs, pytest.raises(RateLimitError) as caught:
        async for update in client.get_streaming_response("hi"):
            got.append(update)
    assert caught.value is error
    assert len(got) == 1 and request_timings(got[0]) is None  # not attached on failure
    assert [e["event"] for e in logs] == [events.REQUEST_FAILED]
    event = logs[0]
    assert event["log_level"] == "warning"
    assert event[events.STATUS] == "error"
    assert event[events.ERROR_TYPE] == "RateLimitError"
    assert event[events.HTTP_STATUS] == 429
    assert event[events.RETRY_ATTEMPTS] == 3
    assert closed == [True]


async def test_stopping_early_closes_the_inner_stream_and_logs_cancelled() -> None:
    closed: list[bool] = []
    updates = [text("a"), text("b"), text("c")]
    client = TelemetryChatClient(
        FakeChatClient(stream=streaming(updates, closed=closed)), backend="vllm"
    )
    with capture_logs() as logs:
        stream = client.get_streaming_response("hi")
        async for update in stream:
            assert update is updates[0]
            break
        await stream.aclose()  # type: ignore[attr-defined]
    assert closed == [True]
    assert [e["event"] for e in logs] == [events.REQUEST_CANCELLED]
    assert logs[0][events.STATUS] == "cancelled"


async def test_a_cancelled_task_logs_cancelled() -> None:
    gate = asyncio.Event()

    def stream(messages: object, options: object) -> AsyncIterator[ChatResponseUpdate]:
        async def generate() -> AsyncIterator[ChatResponseUpdate]:
            yield text("a")
            await gate.wait()
            yield text("never")

        return generate()

    client = TelemetryChatClient(FakeChatClient(stream=stream), backend="vllm")

    async def consume() -> None:
        async for _ in client.get_streaming_response("hi"):
            pass

    with capture_logs() as logs:
        task = asyncio.create_task(consume())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert [e["event"] for e in logs] == [events.REQUEST_CANCELLED]


async def test_non_streamed_response_gets_timings_and_an_event() -> None:
    stamps = {
        "request_sent": 10.25,
        "response_headers": 10.5,
        "first_byte": 10.6,
        "response_end": 10.7,
    }
    response = ChatResponse(
        model_id="Qwen/Qwen3-0.6B",
        finish_reason=ChatFinishReason.STOP,
        usage=UsageDetails(input_token_count=15, output_token_count=7),
        additional_properties={TRANSPORT_TIMESTAMPS: stamps},
    )
    client = TelemetryChatClient(
        FakeChatClient(respond=lambda m, o: response), backend="vllm", clock=StepClock(10.0, 1.0)
    )
    with capture_logs() as logs:
        got = await client.get_response("hi")
    assert got is response
    timings = request_timings(got)
    assert timings is not None and got.additional_properties[REQUEST_TIMINGS] is timings
    assert timings.streamed is False
    assert timings.client.ttft_ms is None  # a non-streamed call has no first token
    assert timings.client.e2e_ms == 750.0  # 10.25 sent, 11.0 end
    assert timings.client.time_to_headers_ms == 250.0
    assert timings.server is not None and timings.server.cached_input_tokens is None
    # vLLM without --enable-prompt-tokens-details: the hint comes first, once.
    assert [e["event"] for e in logs] == [
        events.CACHE_REPORT_UNAVAILABLE,
        events.REQUEST_COMPLETED,
    ]
    completed = logs[-1]
    assert completed[events.STREAMED] is False
    assert completed[events.FINISH_REASONS] == ["stop"]


async def test_non_streamed_failure_logs_failed() -> None:
    def respond(messages: object, options: object) -> ChatResponse:
        raise RateLimitError("busy", status=429)

    client = TelemetryChatClient(FakeChatClient(respond=respond), backend="llamacpp")
    with capture_logs() as logs, pytest.raises(RateLimitError):
        await client.get_response("hi")
    assert [e["event"] for e in logs] == [events.REQUEST_FAILED]
    assert logs[0][events.STREAMED] is False


async def test_observers_get_the_record_and_their_errors_never_reach_the_caller() -> None:
    seen: list[RequestRecord] = []

    def broken(record: RequestRecord) -> None:
        raise RuntimeError("observer bug")

    client = TelemetryChatClient(
        FakeChatClient(stream=streaming(llamacpp_stream())),
        backend="llamacpp",
        observers=[seen.append, broken],
    )
    with capture_logs() as logs:
        updates = await collect(client)
    assert len(updates) == 6
    assert len(seen) == 1 and seen[0].status == "ok"
    assert seen[0].timings.server is not None
    assert [e["event"] for e in logs] == [events.REQUEST_COMPLETED, events.TELEMETRY_FAILED]
    assert logs[1][events.ERROR_TYPE] == "RuntimeError"


async def test_attach_timings_can_be_turned_off() -> None:
    updates = llamacpp_stream()
    client = TelemetryChatClient(
        FakeChatClient(stream=streaming(updates)), backend="llamacpp", attach_timings=False
    )
    with capture_logs():
        got = await collect(client)
    assert all(request_timings(u) is None for u in got)


async def test_an_empty_stream_still_reports() -> None:
    client = TelemetryChatClient(FakeChatClient(stream=streaming([])), backend="llamacpp")
    with capture_logs() as logs:
        assert await collect(client) == []
    assert [e["event"] for e in logs] == [events.REQUEST_COMPLETED]


async def test_the_builder_composes_it_and_aclose_reaches_the_inner_client() -> None:
    inner = FakeChatClient(stream=streaming([text("x")]))
    client = ChatClientBuilder(inner).use(lambda c: TelemetryChatClient(c, backend="vllm")).build()
    assert isinstance(client, TelemetryChatClient)
    assert client.backend == "vllm"
    await client.aclose()
    assert inner.closed


def test_backend_defaults_to_the_profile_found_down_the_chain() -> None:
    from providers import OpenAiCompatibleChatClient

    real = OpenAiCompatibleChatClient("http://x.test", backend="sglang")
    wrapped = TelemetryChatClient(TelemetryChatClient(real))
    assert wrapped.backend == "sglang"
    assert wrapped.extractor == SglangTimingsExtractor()
    assert TelemetryChatClient(FakeChatClient()).backend == "generic"

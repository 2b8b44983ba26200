"""Fault injection: the real client and ``RetryingChatClient`` against a misbehaving server.

Each test asserts the error type, the attempt count (requests the server received), the waits
(recorded by the injected sleep, so nothing really sleeps), and that what the caller saw is the
server's output exactly once: nothing lost, nothing repeated.
"""

from __future__ import annotations

import email.utils
import json
import time

import pytest
from structlog.testing import capture_logs

from providers import (
    BackendUnavailableError,
    ChatResponse,
    ChatResponseUpdate,
    ContextLengthExceededError,
    ProviderConnectionError,
    ProviderError,
    RateLimitError,
    ServerError,
    StreamInterruptedError,
)
from providers.layers.retry import RETRY_ATTEMPTS, RETRY_EVENT
from tests.faults.helpers import (
    CAPTURED_OVERFLOW,
    DONE,
    HEL,
    HELLO,
    LO,
    PROMPT,
    ROLE,
    STOP,
    TOOL_DONE,
    TOOL_REST,
    TOOL_START,
    Waits,
    assert_no_prompt,
    client_for,
    consume,
    error_reply,
    roles,
    seen_text,
    stream_reply,
    unavailable,
    whole,
)
from tests.faults.server import GATE, FaultServer, Reply, chunk, sse

# --- Done when ---------------------------------------------------------------------------------


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_done_when_503_then_200_succeeds_after_one_retry(streaming: bool) -> None:
    waits = Waits()
    success = stream_reply(*HELLO) if streaming else whole()
    async with (
        FaultServer([unavailable(), success]) as server,
        client_for(server.base_url, waits) as client,
    ):
        with capture_logs() as logs:
            if streaming:
                updates, error = await consume(client.get_streaming_response(PROMPT))
                assert error is None
                response = ChatResponse.from_updates(updates)
                assert roles(updates) == 1
            else:
                response = await client.get_response(PROMPT)
    assert response.text == "Hello"
    assert server.attempts == 2
    assert waits == [0.25]  # full jitter: 0.5 (random) x min(8, 0.5 x 2^0)
    assert response.additional_properties[RETRY_ATTEMPTS] == 1
    retries = [log for log in logs if log["event"] == RETRY_EVENT]
    assert [(r["attempt"], r["wait"], r["reason"]) for r in retries] == [(1, 0.25, "http_503")]
    assert server.requests[0].json() == server.requests[1].json()  # the same request again


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_done_when_context_overflow_fails_at_once_with_the_sizes(streaming: bool) -> None:
    waits = Waits()
    async with (
        FaultServer([whole(CAPTURED_OVERFLOW, 400)]) as server,
        client_for(server.base_url, waits) as client,
    ):
        with pytest.raises(ContextLengthExceededError) as caught:
            if streaming:
                async for _ in client.get_streaming_response(PROMPT):
                    pytest.fail("no update expected")
            else:
                await client.get_response(PROMPT)
    error = caught.value
    assert (error.prompt_tokens, error.context_window) == (3030, 2048)
    assert (error.status, error.error_type) == (400, "exceed_context_size_error")
    assert error.body == CAPTURED_OVERFLOW.decode()
    assert server.attempts == 1
    assert waits == []
    assert error.retry_attempts == 0
    assert_no_prompt(error)


async def test_done_when_reset_after_first_content_chunk_is_interrupted_with_that_content() -> None:
    waits = Waits()
    script = [stream_reply(ROLE, HEL, GATE, end="reset"), stream_reply(*HELLO)]
    async with FaultServer(script) as server, client_for(server.base_url, waits) as client:

        def reset_once_seen(update: ChatResponseUpdate) -> None:
            if update.text == "Hel":
                server.release()  # the caller has "Hel": now the server resets

        updates, error = await consume(client.get_streaming_response(PROMPT), reset_once_seen)
    assert isinstance(error, StreamInterruptedError)
    assert seen_text(updates) == "Hel"
    assert error.partial_response is not None
    assert error.partial_response.text == "Hel"
    assert server.attempts == 1  # no retry: "Hel" had reached the caller
    assert waits == []
    assert error.retry_attempts == 0
    assert_no_prompt(error)


# --- 429 and Retry-After -------------------------------------------------------------------------


def rate_limited(**headers: str) -> Reply:
    return error_reply(429, {"error": {"message": "slow down", "type": "rate_limit"}}, **headers)


@pytest.mark.parametrize(
    ("headers", "wait"),
    [({"retry-after-ms": "1500"}, 1.5), ({"Retry-After": "7"}, 7.0)],
    ids=["retry-after-ms", "retry-after-seconds"],
)
async def test_429_retry_after_is_waited_exactly(headers: dict[str, str], wait: float) -> None:
    waits = Waits()
    async with (
        FaultServer([rate_limited(**headers), stream_reply(*HELLO)]) as server,
        client_for(server.base_url, waits) as client,
    ):
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert error is None
    assert seen_text(updates) == "Hello"
    assert server.attempts == 2
    assert waits == [wait]


async def test_429_retry_after_http_date() -> None:
    waits = Waits()
    date = email.utils.formatdate(time.time() + 30, usegmt=True)
    async with (
        FaultServer([rate_limited(**{"Retry-After": date}), whole()]) as server,
        client_for(server.base_url, waits) as client,
    ):
        response = await client.get_response(PROMPT)
    assert response.text == "Hello"
    assert server.attempts == 2
    assert len(waits) == 1
    assert 28.0 < waits[0] <= 30.0  # an HTTP-date has whole seconds; a little time passed


async def test_429_asking_longer_than_the_cap_fails_at_once_with_the_wait() -> None:
    waits = Waits()
    async with (
        FaultServer([rate_limited(**{"Retry-After": "3600"}), whole()]) as server,
        client_for(server.base_url, waits) as client,
    ):
        with pytest.raises(RateLimitError) as caught:
            await client.get_response(PROMPT)
    error = caught.value
    assert error.retry_after == 3600.0
    assert "3600" in str(error)
    assert any("3600" in note and "120" in note for note in error.__notes__)
    assert server.attempts == 1
    assert waits == []


async def test_429_every_time_gives_up_after_max_attempts() -> None:
    waits = Waits()
    async with (
        FaultServer([rate_limited(**{"retry-after-ms": "200"})]) as server,
        client_for(server.base_url, waits) as client,
    ):
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert isinstance(error, RateLimitError)
    assert updates == []
    assert server.attempts == 3
    assert waits == [0.2, 0.2]
    assert error.retry_attempts == 2


# --- connection resets ---------------------------------------------------------------------------


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_reset_before_headers_is_retried(streaming: bool) -> None:
    waits = Waits()
    success = stream_reply(*HELLO) if streaming else whole()
    async with (
        FaultServer([Reply(reset_before_headers=True), success]) as server,
        client_for(server.base_url, waits) as client,
    ):
        if streaming:
            updates, error = await consume(client.get_streaming_response(PROMPT))
            assert error is None
            response = ChatResponse.from_updates(updates)
        else:
            response = await client.get_response(PROMPT)
    assert response.text == "Hello"
    assert server.attempts == 2
    assert waits == [0.25]


async def test_reset_before_headers_every_time_is_a_connection_error() -> None:
    waits = Waits()
    async with (
        FaultServer([Reply(reset_before_headers=True)]) as server,
        client_for(server.base_url, waits) as client,
    ):
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert isinstance(error, ProviderConnectionError)
    assert not isinstance(error, StreamInterruptedError)
    assert updates == []
    assert server.attempts == 3
    assert waits == [0.25, 0.5]
    assert error.retry_attempts == 2
    assert_no_prompt(error)


async def test_close_after_headers_before_any_chunk_is_retried() -> None:
    waits = Waits()
    async with (
        FaultServer([stream_reply(end="close"), stream_reply(*HELLO)]) as server,
        client_for(server.base_url, waits) as client,
    ):
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert error is None
    assert seen_text(updates) == "Hello"
    assert server.attempts == 2


async def test_reset_after_role_chunk_only_is_retried_without_repeating_the_role() -> None:
    waits = Waits()
    script = [stream_reply(ROLE, end="close"), stream_reply(*HELLO)]
    async with FaultServer(script) as server, client_for(server.base_url, waits) as client:
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert error is None
    assert roles(updates) == 1  # the first attempt's role chunk was held back, then dropped
    assert seen_text(updates) == "Hello"
    assert server.attempts == 2
    assert waits == [0.25]


async def test_reset_mid_tool_call_before_any_output_is_retried_to_one_whole_call() -> None:
    # A tool call's fragments give no substantive update until the call is complete, so
    # nothing reached the caller yet: the retry is safe and the call arrives once, whole.
    waits = Waits()
    script = [
        stream_reply(ROLE, TOOL_START, end="reset"),
        stream_reply(ROLE, TOOL_START, TOOL_REST, TOOL_DONE, DONE),
    ]
    async with FaultServer(script) as server, client_for(server.base_url, waits) as client:
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert error is None
    response = ChatResponse.from_updates(updates)
    assert [(c.name, c.arguments) for c in response.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert roles(updates) == 1
    assert server.attempts == 2
    assert waits == [0.25]


async def test_reset_mid_tool_call_after_text_is_interrupted_with_text_and_partial_call() -> None:
    waits = Waits()
    text = sse(chunk({"content": "Let me check."}))
    script = [stream_reply(ROLE, text, GATE, TOOL_START, GATE, end="reset")]
    async with FaultServer(script) as server, client_for(server.base_url, waits) as client:

        def step(update: ChatResponseUpdate) -> None:
            if update.text == "Let me check.":
                server.release()  # send the tool call's first fragment
            elif update.raw and "tool_calls" in json.dumps(update.raw):
                server.release()  # the fragment arrived: now reset

        updates, error = await consume(client.get_streaming_response(PROMPT), step)
    assert isinstance(error, StreamInterruptedError)
    assert seen_text(updates) == "Let me check."
    partial = error.partial_response
    assert partial is not None
    assert partial.text == "Let me check."
    [call] = partial.tool_calls  # the half-received call is kept, marked as broken
    assert call.name == "get_weather"
    assert call.raw_arguments == '{"city": "Par'
    assert call.error is not None
    assert server.attempts == 1
    assert waits == []


# --- bodies that are not the protocol --------------------------------------------------------


HTML_502 = (
    b"<html>\r\n<head><title>502 Bad Gateway</title><style>body{color:red}</style></head>\r\n"
    b"<body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx/1.25.3</center>"
    b"</body></html>\r\n"
)


async def test_html_502_is_backend_unavailable_retried_then_surfaced() -> None:
    waits = Waits()
    page = Reply(502, [HTML_502], content_type="text/html")
    async with FaultServer([page]) as server, client_for(server.base_url, waits) as client:
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert isinstance(error, BackendUnavailableError)
    assert updates == []
    message = str(error)
    assert "502 Bad Gateway" in message and "nginx/1.25.3" in message
    assert "<" not in message and "color:red" not in message
    assert error.body == HTML_502.decode()
    assert server.attempts == 3
    assert waits == [0.25, 0.5]


async def test_html_502_then_200_succeeds() -> None:
    waits = Waits()
    page = Reply(502, [HTML_502], content_type="text/html")
    async with FaultServer([page, whole()]) as server, client_for(server.base_url, waits) as client:
        response = await client.get_response(PROMPT)
    assert response.text == "Hello"
    assert response.additional_properties[RETRY_ATTEMPTS] == 1
    assert server.attempts == 2


async def test_200_stream_ending_without_done_but_with_a_finish_is_complete() -> None:
    waits = Waits()
    async with (
        FaultServer([stream_reply(ROLE, HEL, LO, STOP)]) as server,
        client_for(server.base_url, waits) as client,
    ):
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert error is None
    assert ChatResponse.from_updates(updates).finish_reason == "stop"
    assert seen_text(updates) == "Hello"
    assert server.attempts == 1


async def test_200_stream_ending_without_done_or_finish_is_interrupted_with_partial() -> None:
    waits = Waits()
    async with (
        FaultServer([stream_reply(ROLE, HEL, LO), stream_reply(*HELLO)]) as server,
        client_for(server.base_url, waits) as client,
    ):
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert isinstance(error, StreamInterruptedError)
    assert seen_text(updates) == "Hello"
    assert error.partial_response is not None
    assert error.partial_response.text == "Hello"
    assert error.partial_response.finish_reason is None
    assert server.attempts == 1
    assert waits == []


async def test_200_stream_with_no_output_and_no_end_is_retried() -> None:
    waits = Waits()
    async with (
        FaultServer([stream_reply(ROLE), stream_reply(*HELLO)]) as server,
        client_for(server.base_url, waits) as client,
    ):
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert error is None
    assert roles(updates) == 1
    assert seen_text(updates) == "Hello"
    assert server.attempts == 2


# --- error events inside a 200 stream ------------------------------------------------------------

VLLM_ERROR = sse(
    {
        "error": {
            "message": "Internal server error",
            "type": "InternalServerError",
            "param": None,
            "code": 500,
        }
    }
)
LLAMACPP_DIFF_ERROR = sse(
    {
        "error": {
            "code": 500,
            "message": "Invalid diff: now finding less tool calls!\n  Previous (1):\n    - name: "
            "'get_weather', args: '{\"city\": \"Par'\n  Current msg text content:\nHello",
            "type": "server_error",
        }
    }
)


@pytest.mark.parametrize(
    "tail",
    [[VLLM_ERROR, DONE], [LLAMACPP_DIFF_ERROR]],
    ids=["vllm-then-done", "llamacpp-without-done"],
)
async def test_error_event_mid_stream_surfaces_with_partial_and_no_retry(
    tail: list[bytes],
) -> None:
    waits = Waits()
    async with (
        FaultServer([stream_reply(ROLE, HEL, LO, *tail), stream_reply(*HELLO)]) as server,
        client_for(server.base_url, waits) as client,
    ):
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert type(error) is ServerError
    assert error.status == 500
    assert seen_text(updates) == "Hello"
    assert error.partial_response is not None
    assert error.partial_response.text == "Hello"
    assert "Previous (1)" not in str(error)  # llama.cpp's quote of the output stays in body
    assert server.attempts == 1
    assert waits == []


async def test_error_event_before_any_output_is_retried() -> None:
    # SGLang's kick-start: an abort on the very first output is a 200 whose first event is it.
    waits = Waits()
    abort = sse(
        {
            "error": {
                "object": "error",
                "message": "The request is aborted by a higher priority request.",
                "type": "SERVICE_UNAVAILABLE",
                "param": None,
                "code": 503,
            }
        }
    )
    async with (
        FaultServer([stream_reply(ROLE, abort, DONE), stream_reply(*HELLO)]) as server,
        client_for(server.base_url, waits) as client,
    ):
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert error is None
    assert roles(updates) == 1
    assert seen_text(updates) == "Hello"
    assert server.attempts == 2
    assert waits == [0.25]


# --- terminal errors -----------------------------------------------------------------------------


async def test_overflow_sent_as_500_by_an_old_llamacpp_is_not_retried() -> None:
    waits = Waits()
    body = json.loads(CAPTURED_OVERFLOW)
    body["error"]["code"] = 500
    body["error"]["type"] = "server_error"
    async with (
        FaultServer([error_reply(500, body), whole()]) as server,
        client_for(server.base_url, waits) as client,
    ):
        with pytest.raises(ContextLengthExceededError) as caught:
            await client.get_response(PROMPT)
    assert (caught.value.prompt_tokens, caught.value.context_window) == (3030, 2048)
    assert caught.value.status == 500
    assert server.attempts == 1
    assert waits == []


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_are_never_retried(status: int) -> None:
    waits = Waits()
    reply = error_reply(status, {"error": {"message": "no", "type": "x", "code": status}})
    async with (
        FaultServer([reply, whole()]) as server,
        client_for(server.base_url, waits) as client,
    ):
        with pytest.raises(ProviderError) as caught:
            await client.get_response(PROMPT)
    assert caught.value.status == status
    assert server.attempts == 1
    assert waits == []

"""Issue 20, "Data loss": answers the client used to throw away, or hand to the wrong request.

Each test runs the real client (under the retry layer where a retry would repeat the damage)
against the loopback ``FaultServer``, which can write an answer byte for byte (``Reply.raw``).
"""

from __future__ import annotations

import json

import pytest

from providers import ChatResponse, InvalidResponseError, OpenAiCompatibleChatClient
from tests.faults.helpers import (
    COMPLETION,
    FAST,
    HELLO,
    PROMPT,
    Waits,
    client_for,
    consume,
    seen_text,
    stream_reply,
    whole,
)
from tests.faults.server import FaultServer, Reply, raw_answer


def _completion(text: str) -> bytes:
    return json.dumps(
        {
            "id": f"chatcmpl-{text}",
            "object": "chat.completion",
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
        }
    ).encode()


# --- a JSON completion where a stream was asked for --------------------------------------------


async def test_a_json_completion_answering_a_stream_request_is_the_answer() -> None:
    """A server that ignores ``stream: true`` answered; its answer used to be dropped as a cut
    stream and generated three times by retry."""
    waits = Waits()
    async with (
        FaultServer([whole()]) as server,
        client_for(server.base_url, waits) as client,
    ):
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert error is None
    response = ChatResponse.from_updates(updates)
    assert response.text == "Hello"
    assert response.finish_reason == "stop"
    assert server.attempts == 1
    assert waits == []


async def test_a_json_error_object_answering_a_stream_request_is_its_typed_error() -> None:
    body = json.dumps({"error": {"message": "Loading model", "code": 503}}).encode()
    async with (
        FaultServer([whole(body)]) as server,
        OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST) as client,
    ):
        _, error = await consume(client.get_streaming_response(PROMPT))
    assert error is not None and error.status == 503
    assert "Loading model" in str(error)


# --- a body longer than its Content-Length -----------------------------------------------------


_SMUGGLED = raw_answer(200, _completion("INJECTED"))


@pytest.mark.parametrize("streaming", [False, True], ids=["nonstream", "stream"])
async def test_bytes_past_a_content_length_are_not_the_next_requests_answer(
    streaming: bool,
) -> None:
    """The surplus of the first answer is a whole second answer; on a reused connection it
    would be read as the answer to the next request, which the server never saw."""
    if streaming:
        first = b"".join(HELLO)
        answer = raw_answer(200, first, content_type="text/event-stream")
    else:
        answer = raw_answer(200, _completion("first"))
    async with (
        FaultServer(
            [Reply(raw=answer + _SMUGGLED), Reply(raw=raw_answer(200, _completion("second")))]
        ) as server,
        OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST) as client,
    ):
        if streaming:
            updates, error = await consume(client.get_streaming_response(PROMPT))
            assert error is None and seen_text(updates) == "Hello"
        else:
            assert (await client.get_response(PROMPT)).text == "first"
        second = await client.get_response(PROMPT)
    assert second.text == "second"
    assert server.attempts == 2


async def test_a_clean_content_length_answer_keeps_its_connection() -> None:
    """The guard closes only a connection with bytes left over: a clean one is reused."""
    reply = Reply(raw=raw_answer(200, COMPLETION))
    async with (
        FaultServer([reply]) as server,
        OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST) as client,
    ):
        for _ in range(3):
            assert (await client.get_response(PROMPT)).text == "Hello"
        assert server.connections == 1


# --- answers that are not a stream ------------------------------------------------------------

_HTML = b"<html><body><h1>Welcome to nginx!</h1></body></html>"

NOT_A_STREAM = {
    "html": (200, Reply(200, [_HTML], content_type="text/html; charset=utf-8")),
    "204": (204, Reply(raw=raw_answer(204, content_type=None))),
    "304": (304, Reply(raw=raw_answer(304, content_type=None))),
    "302": (
        302,
        Reply(
            raw=raw_answer(
                302, b"moved", content_type="text/plain", headers={"Location": "http://x/"}
            )
        ),
    ),
}


@pytest.mark.parametrize(("status", "reply"), NOT_A_STREAM.values(), ids=NOT_A_STREAM.keys())
async def test_an_answer_that_is_not_a_stream_is_invalid_and_not_retried(
    status: int, reply: Reply
) -> None:
    """It used to end as a stream without events: ``StreamInterruptedError``, retried."""
    waits = Waits()
    async with (
        FaultServer([reply, stream_reply(*HELLO)]) as server,
        client_for(server.base_url, waits) as client,
    ):
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert isinstance(error, InvalidResponseError), error
    assert updates == []
    assert server.attempts == 1
    assert waits == []
    assert error.status == status

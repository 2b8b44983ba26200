"""A real HTTP server on 127.0.0.1 answering 422 to ``stream_options`` as Mistral's API does
(issue 33 item 4): the client sends the request once more without it, over the network, and
leaves it out of the next request."""

from __future__ import annotations

from structlog.testing import capture_logs

from providers import ChatResponse, OpenAiCompatibleChatClient
from providers.abstractions.event_names import REQUEST_KEY_DROPPED
from providers.chat_completions.refused_keys import USAGE_UNAVAILABLE
from tests.faults.helpers import FAST, HELLO, consume, error_reply, stream_reply
from tests.faults.server import FaultServer

MISTRAL_422 = {
    "object": "error",
    "message": {
        "detail": [
            {
                "type": "extra_forbidden",
                "loc": ["body", "stream_options"],
                "msg": "Extra inputs are not permitted",
                "input": {"include_usage": True},
            }
        ]
    },
    "type": "invalid_request_error",
    "param": None,
    "code": None,
}


async def test_a_422_to_stream_options_is_retried_once_without_it() -> None:
    script = [error_reply(422, MISTRAL_422), stream_reply(*HELLO)]
    async with FaultServer(script) as server:
        async with OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST) as client:
            with capture_logs() as logs:
                first, error = await consume(client.get_streaming_response("hi"))
                second, again = await consume(client.get_streaming_response("hi"))
        bodies = [request.json() for request in server.requests]
    assert error is None and again is None
    assert (
        ChatResponse.from_updates(first).text == ChatResponse.from_updates(second).text == "Hello"
    )
    assert ["stream_options" in body for body in bodies] == [True, False, False]
    response = ChatResponse.from_updates(first)
    assert response.additional_properties[USAGE_UNAVAILABLE] == "stream_options refused"
    assert [entry["key"] for entry in logs if entry["event"] == REQUEST_KEY_DROPPED] == [
        "stream_options"
    ]

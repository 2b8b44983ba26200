"""A 400/422 refusing ``stream_options`` is answered by sending once more without it, and the
client leaves it out from then on (issue 33 item 4; research-33 §7 for the bodies)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import respx
from structlog.testing import capture_logs

from providers import (
    ChatMessage,
    ChatOptions,
    ChatResponse,
    InvalidRequestError,
    OpenAiCompatibleChatClient,
    ProviderError,
)
from providers.abstractions.event_names import REQUEST_KEY_DROPPED
from providers.backends import PROFILES
from providers.chat_completions.refused_keys import USAGE_UNAVAILABLE, refused_key
from providers.chat_completions.request import build_chat_request

BASE = "http://llm.test"
CHAT = f"{BASE}/v1/chat/completions"

# Mistral's API (la Plateforme), 2024: the whole field refused (cline/cline #582).
MISTRAL_FIELD = {
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
# 2025: the sub-key refused (openai/openai-agents-python #442).
MISTRAL_SUBKEY = {
    "object": "error",
    "message": {
        "detail": [
            {
                "type": "extra_forbidden",
                "loc": ["body", "stream_options", "include_usage"],
                "msg": "Extra inputs are not permitted",
                "input": True,
            }
        ]
    },
    "type": "invalid_request_error",
    "param": None,
    "code": None,
}
# Azure OpenAI "On Your Data" (microsoft/semantic-kernel #10510).
AZURE = {
    "error": {
        "code": "400",
        "message": "Validation error at #/stream_options: Extra inputs are not permitted",
    }
}
# A refusal of something else that quotes the request (pydantic's `input`): not resent.
OTHER = {
    "detail": [
        {
            "type": "missing",
            "loc": ["body", "messages"],
            "msg": "Field required",
            "input": {"model": "m", "stream": True, "stream_options": {"include_usage": True}},
        }
    ]
}


def frame(delta: dict[str, Any], finish: str | None = None, **top: Any) -> str:
    chunk = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        **top,
    }
    return f"data: {json.dumps(chunk)}\n\n"


HELLO = (
    frame({"role": "assistant", "content": "Hello"}) + frame({}, "stop") + "data: [DONE]\n\n"
).encode()


def ok_stream() -> httpx.Response:
    return httpx.Response(200, content=HELLO, headers={"content-type": "text/event-stream"})


def sent(route: respx.Route) -> list[dict[str, Any]]:
    return [json.loads(call.request.content) for call in route.calls]


@pytest.fixture
async def client() -> AsyncIterator[OpenAiCompatibleChatClient]:
    async with OpenAiCompatibleChatClient(BASE, "m") as c:
        yield c


async def stream(client: OpenAiCompatibleChatClient) -> ChatResponse:
    return ChatResponse.from_updates([u async for u in client.get_streaming_response("hi")])


@pytest.mark.parametrize(
    ("status", "refusal"), [(422, MISTRAL_FIELD), (422, MISTRAL_SUBKEY), (400, AZURE)]
)
@respx.mock
async def test_a_refused_stream_options_is_sent_again_without_it_and_never_again(
    client: OpenAiCompatibleChatClient, status: int, refusal: dict[str, Any]
) -> None:
    route = respx.post(CHAT).mock(
        side_effect=[httpx.Response(status, json=refusal), ok_stream(), ok_stream()]
    )
    with capture_logs() as logs:
        first = await stream(client)
        second = await stream(client)
    assert first.text == second.text == "Hello"
    bodies = sent(route)
    assert ["stream_options" in body for body in bodies] == [True, False, False]
    assert first.additional_properties[USAGE_UNAVAILABLE] == "stream_options refused"
    assert second.additional_properties[USAGE_UNAVAILABLE] == "stream_options refused"
    dropped = [entry for entry in logs if entry["event"] == REQUEST_KEY_DROPPED]
    assert [(e["key"], e["status"]) for e in dropped] == [("stream_options", status)]


@respx.mock
async def test_usage_that_comes_anyway_is_not_called_unavailable(
    client: OpenAiCompatibleChatClient,
) -> None:
    usage = {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
    with_usage = (frame({"content": "Hi"}, "stop", usage=usage) + "data: [DONE]\n\n").encode()
    respx.post(CHAT).mock(
        side_effect=[
            httpx.Response(422, json=MISTRAL_SUBKEY),
            httpx.Response(200, content=with_usage, headers={"content-type": "text/event-stream"}),
        ]
    )
    with capture_logs():
        response = await stream(client)
    assert response.usage is not None and response.usage.total_token_count == 4
    assert USAGE_UNAVAILABLE not in response.additional_properties


@respx.mock
async def test_a_refusal_of_something_else_is_not_resent(
    client: OpenAiCompatibleChatClient,
) -> None:
    route = respx.post(CHAT).mock(side_effect=[httpx.Response(422, json=OTHER), ok_stream()])
    with pytest.raises(ProviderError):
        await stream(client)
    assert route.call_count == 1
    with capture_logs():
        await stream(client)
    assert "stream_options" in sent(route)[-1]  # nothing was learnt


@respx.mock
async def test_a_second_refusal_after_the_resend_is_the_typed_error(
    client: OpenAiCompatibleChatClient,
) -> None:
    route = respx.post(CHAT).mock(return_value=httpx.Response(422, json=MISTRAL_FIELD))
    with capture_logs(), pytest.raises(InvalidRequestError) as caught:
        await stream(client)
    assert route.call_count == 2  # once more, never twice
    assert caught.value.status == 422
    assert caught.value.partial_response is not None
    assert caught.value.partial_response.text == ""


@respx.mock
async def test_a_whole_answer_is_not_resent_for_a_key_the_client_did_not_add(
    client: OpenAiCompatibleChatClient,
) -> None:
    route = respx.post(CHAT).mock(return_value=httpx.Response(422, json=MISTRAL_FIELD))
    with pytest.raises(InvalidRequestError):
        await client.get_response("hi")
    assert route.call_count == 1


@respx.mock
async def test_a_caller_s_own_stream_options_stays_the_caller_s(
    client: OpenAiCompatibleChatClient,
) -> None:
    route = respx.post(CHAT).mock(
        side_effect=[
            httpx.Response(422, json=MISTRAL_FIELD),
            httpx.Response(422, json=MISTRAL_FIELD),
        ]
    )
    options = ChatOptions(
        additional_properties={"stream_options": {"continuous_usage_stats": True}}
    )
    with capture_logs(), pytest.raises(InvalidRequestError):
        await stream_with(client, options)
    # Resent once without the client's own include_usage; the caller's key went out both times.
    assert [body["stream_options"] for body in sent(route)] == [
        {"include_usage": True, "continuous_usage_stats": True},
        {"continuous_usage_stats": True},
    ]


async def stream_with(client: OpenAiCompatibleChatClient, options: ChatOptions) -> ChatResponse:
    return ChatResponse.from_updates(
        [u async for u in client.get_streaming_response("hi", options)]
    )


def test_the_builder_leaves_a_dropped_key_out() -> None:
    def body(dropped: frozenset[str]) -> dict[str, Any]:
        return build_chat_request(
            [ChatMessage.user("hi")],
            None,
            model_id="m",
            stream=True,
            profile=PROFILES["generic"],
            dropped_keys=dropped,
        )

    assert body(frozenset())["stream_options"] == {"include_usage": True}
    assert "stream_options" not in body(frozenset({"stream_options"}))


@pytest.mark.parametrize(
    ("status", "content", "found"),
    [
        (422, json.dumps(MISTRAL_FIELD).encode(), "stream_options"),
        (400, json.dumps(AZURE).encode(), "stream_options"),
        (400, b"stream_options: not permitted", "stream_options"),  # not JSON: the text
        (422, json.dumps(OTHER).encode(), None),  # only quoted in `input`
        (500, json.dumps(MISTRAL_FIELD).encode(), None),  # not a refusal
        (401, json.dumps(MISTRAL_FIELD).encode(), None),
    ],
)
def test_which_answers_name_a_key(status: int, content: bytes, found: str | None) -> None:
    assert refused_key(status, content, ("stream_options",)) == found
    assert refused_key(status, content, ()) is None

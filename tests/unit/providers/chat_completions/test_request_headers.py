"""``ChatOptions.headers`` and ``ChatOptions.conversation_id`` on both wire clients, retry and
fallback (issue #22 part 3)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx

from providers import (
    ChatOptions,
    FallbackChatClient,
    InvalidRequestError,
    OpenAiCompatibleChatClient,
    OpenAiCompatibleResponsesClient,
    RetryingChatClient,
    RetryPolicy,
    ServerError,
)

BASE = "http://llm.test"
CHAT = f"{BASE}/v1/chat/completions"
RESPONSES = f"{BASE}/v1/responses"
OTHER = "http://other.test"
KEY = "sk-client-key-123456"
USER_TOKEN = "user-token-abcdef-98765"

COMPLETION = {
    "id": "c1",
    "object": "chat.completion",
    "created": 1,
    "model": "m",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
}
STREAM = (
    b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":'
    b'[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
)
RESPONSE = {
    "id": "resp_1",
    "object": "response",
    "model": "m",
    "created_at": 1,
    "status": "completed",
    "output": [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}
    ],
}


def headers_of(route: respx.Route, index: int = -1) -> httpx.Headers:
    request: httpx.Request = route.calls[index].request
    return request.headers


@respx.mock
@pytest.mark.parametrize("streamed", [False, True])
async def test_chat_client_sends_per_request_headers_and_keeps_its_own(streamed: bool) -> None:
    route = respx.post(CHAT).mock(
        return_value=httpx.Response(200, json=COMPLETION)
        if not streamed
        else httpx.Response(200, content=STREAM, headers={"content-type": "text/event-stream"})
    )
    options = ChatOptions(headers={"X-Tenant": "t1"}, conversation_id="conv-7")
    async with OpenAiCompatibleChatClient(BASE, "m", KEY, headers={"X-App": "a"}) as client:
        for given in (options, None):  # the next request: the client's headers only
            if streamed:
                _ = [u async for u in client.get_streaming_response("hi", given)]
            else:
                await client.get_response("hi", given)
    sent = headers_of(route, 0)
    assert (sent["x-tenant"], sent["x-app"], sent["authorization"]) == ("t1", "a", f"Bearer {KEY}")
    assert "x-tenant" not in headers_of(route, 1)
    body = json.loads(route.calls[0].request.content)
    assert "conversation_id" not in body and "headers" not in body


def test_to_openai_writes_neither_headers_nor_conversation_id() -> None:
    options = ChatOptions(temperature=0.5, headers={"X-A": "1"}, conversation_id="c")
    assert options.to_openai() == {"temperature": 0.5}
    assert ChatOptions.from_openai(options.to_openai()).headers is None


@respx.mock
async def test_per_request_header_wins_case_insensitively_authorization_included() -> None:
    route = respx.post(CHAT).mock(return_value=httpx.Response(200, json=COMPLETION))
    options = ChatOptions(headers={"authorization": f"Bearer {USER_TOKEN}", "x-app": "b"})
    async with OpenAiCompatibleChatClient(BASE, "m", KEY, headers={"X-App": "a"}) as client:
        await client.get_response("hi", options)
    raw = route.calls[0].request.headers.raw
    names = [name.lower() for name, _ in raw]
    assert names.count(b"authorization") == 1 and names.count(b"x-app") == 1
    assert headers_of(route)["authorization"] == f"Bearer {USER_TOKEN}"
    assert headers_of(route)["x-app"] == "b"


@pytest.mark.parametrize(
    ("headers", "named"),
    [
        ({"X-Key": "line\r\nInjected: yes"}, "a line break"),
        ({"X-Key": "caf\u00e9-secret-value"}, "a non-ASCII character"),
        ({"X-Key": " padded-secret-value\t"}, "begins or ends with whitespace"),
        ({"Bad Name": "v"}, "not a valid token"),
        ({"Content-Length": "5"}, "set by the transport"),
        ({"Transfer-Encoding": "chunked"}, "set by the transport"),
    ],
)
@respx.mock
async def test_unsendable_per_request_headers_are_refused_before_sending(
    headers: dict[str, str], named: str
) -> None:
    route = respx.post(CHAT).mock(return_value=httpx.Response(200, json=COMPLETION))
    async with OpenAiCompatibleChatClient(BASE, "m") as client:
        for call in ("get_response", "get_streaming_response"):
            with pytest.raises(InvalidRequestError) as caught:
                if call == "get_response":
                    await client.get_response("hi", ChatOptions(headers=headers))
                else:
                    _ = [
                        u
                        async for u in client.get_streaming_response(
                            "hi", ChatOptions(headers=headers)
                        )
                    ]
            assert named in str(caught.value) and caught.value.param == "headers"
            for value in headers.values():
                if len(value) > 2:
                    assert value not in str(caught.value)
    assert route.call_count == 0


@respx.mock
@pytest.mark.parametrize("streamed", [False, True])
async def test_a_per_request_credential_echoed_in_an_error_is_masked(streamed: bool) -> None:
    echoed = {
        "error": {"message": f"Invalid token {USER_TOKEN} for tenant", "type": "server_error"}
    }
    respx.post(CHAT).mock(return_value=httpx.Response(500, json=echoed))
    options = ChatOptions(headers={"X-User-Token": USER_TOKEN})
    async with OpenAiCompatibleChatClient(BASE, "m") as client:
        with pytest.raises(ServerError) as caught:
            if streamed:
                _ = [u async for u in client.get_streaming_response("hi", options)]
            else:
                await client.get_response("hi", options)
    error = caught.value
    assert USER_TOKEN not in str(error) and USER_TOKEN not in (error.body or "")
    assert "<redacted>" in (error.body or "")


@respx.mock
@pytest.mark.parametrize("streamed", [False, True])
async def test_responses_client_sends_per_request_headers(streamed: bool) -> None:
    completed = json.dumps({"type": "response.completed", "response": RESPONSE})
    events = f"event: response.completed\ndata: {completed}\n\n".encode()
    route = respx.post(RESPONSES).mock(
        return_value=httpx.Response(
            200, content=events, headers={"content-type": "text/event-stream"}
        )
        if streamed
        else httpx.Response(200, json=RESPONSE)
    )
    options = ChatOptions(headers={"X-Session-ID": "s-1"}, conversation_id="c")
    async with OpenAiCompatibleResponsesClient(BASE, "m", KEY) as client:
        if streamed:
            _ = [u async for u in client.get_streaming_response("hi", options)]
        else:
            await client.get_response("hi", options)
    assert headers_of(route)["x-session-id"] == "s-1"
    assert headers_of(route)["authorization"] == f"Bearer {KEY}"
    assert "conversation_id" not in json.loads(route.calls[0].request.content)


@respx.mock
async def test_responses_background_polls_with_the_request_headers() -> None:
    respx.post(RESPONSES).mock(
        return_value=httpx.Response(200, json={**RESPONSE, "status": "queued", "output": []})
    )
    poll = respx.get(f"{RESPONSES}/resp_1").mock(return_value=httpx.Response(200, json=RESPONSE))
    options = ChatOptions(headers={"X-SMG-Routing-Key": "k-1"})
    async with OpenAiCompatibleResponsesClient(
        BASE, "m", background=True, poll_interval=0
    ) as client:
        assert (await client.get_response("hi", options)).text == "ok"
    assert headers_of(poll)["x-smg-routing-key"] == "k-1"


@respx.mock
async def test_responses_masks_a_per_request_credential_in_errors() -> None:
    echoed = {"error": {"message": f"bad {USER_TOKEN}", "type": "invalid_request_error"}}
    respx.post(RESPONSES).mock(return_value=httpx.Response(400, json=echoed))
    async with OpenAiCompatibleResponsesClient(BASE, "m") as client:
        with pytest.raises(InvalidRequestError) as caught:
            await client.get_response("hi", ChatOptions(headers={"X-Api-Key": USER_TOKEN}))
    assert USER_TOKEN not in str(caught.value) and USER_TOKEN not in (caught.value.body or "")


@respx.mock
@pytest.mark.parametrize("streamed", [False, True])
async def test_retry_resends_the_same_headers(streamed: bool) -> None:
    ok: Any = (
        httpx.Response(200, content=STREAM, headers={"content-type": "text/event-stream"})
        if streamed
        else httpx.Response(200, json=COMPLETION)
    )
    route = respx.post(CHAT).mock(side_effect=[httpx.Response(503), httpx.Response(502), ok])
    options = ChatOptions(headers={"X-Session-ID": "s-9"})
    wire = OpenAiCompatibleChatClient(BASE, "m")
    async with RetryingChatClient(wire, RetryPolicy(base_delay=0, max_delay=0)) as client:
        if streamed:
            _ = [u async for u in client.get_streaming_response("hi", options)]
        else:
            await client.get_response("hi", options)
    assert [headers_of(route, i)["x-session-id"] for i in range(3)] == ["s-9"] * 3


@respx.mock
async def test_fallback_resends_the_same_headers() -> None:
    respx.post(CHAT).mock(return_value=httpx.Response(503))
    other = respx.post(f"{OTHER}/v1/chat/completions").mock(
        return_value=httpx.Response(200, json=COMPLETION)
    )
    main = OpenAiCompatibleChatClient(BASE, "m")
    async with FallbackChatClient(main, OpenAiCompatibleChatClient(OTHER, "m")) as client:
        await client.get_response("hi", ChatOptions(headers={"X-Session-ID": "s-3"}))
    assert headers_of(other)["x-session-id"] == "s-3"

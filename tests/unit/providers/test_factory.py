"""``create_chat_client``: the standard pipeline, its order, and the extra-body layer."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from providers import (
    ChatOptions,
    ChatResponse,
    OpenAiCompatibleChatClient,
    RetryingChatClient,
    RetryPolicy,
    TextRecoveryChatClient,
)
from providers.abstractions.errors import (
    BackendUnavailableError,
    ConfigurationError,
    ResponseTooLargeError,
)
from providers.abstractions.limits import Limits
from providers.factory import ExtraBodyChatClient, create_chat_client, merge_extra_body
from telemetry import TelemetryChatClient, request_timings

BASE = "http://llm.test"


def _sse(*contents: str) -> bytes:
    chunks = [
        {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": c}}]}
        for c in contents
    ]
    chunks.append(
        {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    )
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return body.encode()


def _json(content: str) -> dict[str, Any]:
    return {
        "id": "c1",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }


Handler = Callable[[httpx.Request], httpx.Response]


def _recording(
    seen: list[dict[str, Any]], content: str = "hello", statuses: list[int] | None = None
) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        seen.append({"body": body, "headers": dict(request.headers)})
        if statuses:
            status = statuses.pop(0)
            if status != 200:
                return httpx.Response(status, json={"error": {"message": "loading model"}})
        if body.get("stream"):
            return httpx.Response(
                200, content=_sse(content), headers={"Content-Type": "text/event-stream"}
            )
        return httpx.Response(200, json=_json(content))

    return handler


def _http(handler: Handler) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


def _layers(client: Any) -> list[type]:
    chain = []
    while True:
        chain.append(type(client))
        client = getattr(client, "inner", None)
        if client is None:
            return chain


async def test_standard_order_outermost_first() -> None:
    async with _http(_recording([])) as http:
        client = create_chat_client(BASE, "m", extra_body={"k": 1}, http_client=http)
        assert _layers(client) == [
            TelemetryChatClient,
            RetryingChatClient,
            ExtraBodyChatClient,
            TextRecoveryChatClient,
            OpenAiCompatibleChatClient,
        ]
        await client.aclose()


async def test_each_layer_can_be_left_out() -> None:
    async with _http(_recording([])) as http:
        client = create_chat_client(
            BASE,
            retry=None,
            telemetry=False,
            reasoning_tags=None,
            text_tool_calls="off",
            http_client=http,
        )
        assert _layers(client) == [OpenAiCompatibleChatClient]


async def test_extra_body_reaches_the_wire_and_the_caller_wins() -> None:
    seen: list[dict[str, Any]] = []
    async with _http(_recording(seen)) as http:
        client = create_chat_client(
            BASE,
            "m",
            extra_body={"chat_template_kwargs": {"enable_thinking": True}, "top_k": 5},
            http_client=http,
        )
        options = ChatOptions(additional_properties={"chat_template_kwargs": {"x": 1}, "top_k": 9})
        await client.get_response("hi", options)
        await client.get_response("hi")
    first, second = (s["body"] for s in seen)
    assert first["chat_template_kwargs"] == {"enable_thinking": True, "x": 1}
    assert first["top_k"] == 9
    assert second["chat_template_kwargs"] == {"enable_thinking": True}
    # The caller's options are not mutated: they may be reused against another backend.
    assert options.additional_properties == {"chat_template_kwargs": {"x": 1}, "top_k": 9}


def test_merge_extra_body_is_recursive_and_caller_wins() -> None:
    assert merge_extra_body({"a": {"b": 1, "c": 2}, "d": 1}, {"a": {"b": 3}, "d": {"e": 1}}) == {
        "a": {"b": 3, "c": 2},
        "d": {"e": 1},
    }


async def test_text_recovery_and_timings_on_a_stream() -> None:
    async with _http(_recording([], content="<think>hmm</think>It is sunny.")) as http:
        client = create_chat_client(BASE, "m", http_client=http)
        updates = [u async for u in client.get_streaming_response("weather?")]
    response = ChatResponse.from_updates(updates)
    assert response.reasoning == "hmm"
    assert response.text == "It is sunny."
    assert any(request_timings(u) is not None for u in updates)


async def test_retry_layer_retries_a_loading_server() -> None:
    seen: list[dict[str, Any]] = []
    async with _http(_recording(seen, statuses=[503, 200])) as http:
        client = create_chat_client(
            BASE, "m", retry=RetryPolicy(base_delay=0.0, max_delay=0.0), http_client=http
        )
        response = await client.get_response("hi")
    assert response.text == "hello"
    assert len(seen) == 2


async def test_without_retry_the_error_surfaces() -> None:
    async with _http(_recording([], statuses=[503])) as http:
        client = create_chat_client(BASE, "m", retry=None, http_client=http)
        with pytest.raises(BackendUnavailableError):
            await client.get_response("hi")


async def test_api_key_backend_and_timeouts_reach_the_core() -> None:
    from providers import Timeouts

    seen: list[dict[str, Any]] = []
    async with _http(_recording(seen)) as http:
        client = create_chat_client(
            BASE, "m", "sk-1", backend="auto", timeouts=Timeouts(connect=1.0), http_client=http
        )
        core = client
        while not isinstance(core, OpenAiCompatibleChatClient):
            core = core.inner  # type: ignore[attr-defined]
        assert core.profile.name == "generic"
        assert core.timeouts.connect == 1.0
        await client.get_response("hi")
    assert seen[0]["headers"]["authorization"] == "Bearer sk-1"


def test_unknown_client_keyword_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="bogus"):
        create_chat_client(BASE, bogus=1)


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_limits_reach_the_core_client_and_retry(api: str) -> None:
    limits = Limits(max_held_updates=5)
    # (prefill progress: it carries something, so retry holds each; an empty one it would not)
    progress = {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {}}], "progress": 1}
    stream = ("".join(f"data: {json.dumps(progress)}\n\n" for _ in range(20))).encode()
    stream += _sse("hi")

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=stream, headers={"Content-Type": "text/event-stream"})

    async with _http(handler) as http:
        client = create_chat_client(BASE, "m", api=api, limits=limits, http_client=http)
        core = client
        layers = []
        while getattr(core, "inner", None) is not None:
            layers.append(core)
            core = core.inner  # type: ignore[attr-defined]
        assert core.limits is limits  # type: ignore[attr-defined]
        recovery = [layer for layer in layers if isinstance(layer, TextRecoveryChatClient)]
        assert recovery and recovery[0].limits is limits
        if api == "chat":  # (the Responses client reads no chat chunks)
            with pytest.raises(ResponseTooLargeError) as caught:
                async for _ in client.get_streaming_response("hi"):
                    pass
            assert caught.value.limit == "max_held_updates"
        await client.aclose()

"""``ChatClientBuilder``'s ``use_*`` methods: the library's layers composed by name, first added
outermost, each doing its job over a real client on a mocked transport."""

from __future__ import annotations

import json

import httpx
import pytest

from providers import (
    ChatOptions,
    FunctionCallContent,
    OpenAiCompatibleChatClient,
    RetryingChatClient,
    RetryPolicy,
    TextRecoveryChatClient,
    ToolDeclaration,
)
from providers.abstractions.delegating import DelegatingChatClient
from providers.builder import ChatClientBuilder
from providers.layers.extra_body import ExtraBodyChatClient
from providers.layers.fallback import FallbackChatClient
from providers.layers.retry import RETRY_ATTEMPTS
from telemetry import TelemetryChatClient, request_timings
from tests.unit.providers.test_factory import _layers

CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def _completion(content: str) -> dict[str, object]:
    return {
        "id": "c1",
        "model": "m",
        "choices": [{"index": 0, "message": {"content": content}, "finish_reason": "stop"}],
    }


async def test_use_methods_compose_in_reading_order_and_each_layer_works() -> None:
    bodies: list[dict[str, object]] = []
    statuses = [503, 200]

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        if statuses.pop(0) == 503:
            return httpx.Response(503, json={"error": {"message": "loading"}})
        return httpx.Response(200, json=_completion(CALL))

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        core = OpenAiCompatibleChatClient("http://llm.test/v1", "m", http_client=http)
        client = (
            ChatClientBuilder(core)
            .use_telemetry()
            .use_retry(RetryPolicy(max_attempts=2, base_delay=0))
            .use_extra_body({"chat_template_kwargs": {"enable_thinking": False}})
            .use_text_tool_calls("hermes", reasoning_tags="off")
            .build()
        )
        assert _layers(client) == [
            TelemetryChatClient,
            RetryingChatClient,
            ExtraBodyChatClient,
            TextRecoveryChatClient,
            OpenAiCompatibleChatClient,
        ]
        offered = ChatOptions(max_output_tokens=50, tools=[ToolDeclaration("get_weather")])
        response = await client.get_response("weather?", offered)
    calls = [c for m in response.messages for c in m.contents if isinstance(c, FunctionCallContent)]
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", {"city": "Paris"})]
    assert response.text == ""
    assert response.additional_properties[RETRY_ATTEMPTS] == 1
    assert request_timings(response) is not None
    assert bodies[-1]["chat_template_kwargs"] == {"enable_thinking": False}
    assert len(bodies) == 2


def test_use_text_tool_calls_passes_both_modes() -> None:
    core = OpenAiCompatibleChatClient("http://llm.test/v1", "m")
    client = ChatClientBuilder(core).use_text_tool_calls("qwen3_coder").build()
    assert isinstance(client, TextRecoveryChatClient)
    assert (client.text_tool_calls, client.reasoning_tags) == ("qwen3_coder", "auto")


def test_use_fallback_wraps_the_layers_inside_it_as_main() -> None:
    core = OpenAiCompatibleChatClient("http://main.test/v1", "m")
    spare = OpenAiCompatibleChatClient("http://spare.test/v1", "s")
    client = ChatClientBuilder(core).use_fallback(spare).use_retry().build()
    assert isinstance(client, FallbackChatClient)
    assert isinstance(client.main, RetryingChatClient) and client.fallback is spare


def test_use_opentelemetry_needs_only_the_api() -> None:
    pytest.importorskip("opentelemetry")
    from telemetry.otel import OpenTelemetryChatClient

    core = OpenAiCompatibleChatClient("http://llm.test/v1", "m")
    client = ChatClientBuilder(core).use_opentelemetry().build()
    assert isinstance(client, OpenTelemetryChatClient)
    assert isinstance(client, DelegatingChatClient) and client.inner is core

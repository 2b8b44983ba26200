"""The official OpenAI Node SDK (``node/chat.cjs``, the ``openai`` package pinned in
``node/package-lock.json``) through the gateway, unmodified: what a TypeScript agent sees.

The same model texts as the openai-python tests: a hermes ``<tool_call>`` the real
``llama-server`` writes in content, harmony markup and a call to a tool never offered from a
loopback fake; and an unknown model, whose 404 the SDK must read as an ``APIError``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from providers.replay.server import ReceivedRequest, ReplayServer
from tests.integration.gateway.conftest import NodeSdk
from tests.integration.gateway.harness import BackgroundLoop, gateway_config, text_backend
from tests.integration.gateway.scenarios import (
    HARMONY,
    HERMES,
    UNOFFERED,
    chat_body,
    forced_fields,
    seen_from,
)

FAKE_TEXTS = {"harmony-model": HARMONY, "unoffered-model": UNOFFERED}
STREAMING = pytest.mark.parametrize("stream", [True, False], ids=["stream", "nonstream"])


def _fake_text(request: ReceivedRequest) -> str:
    return FAKE_TEXTS[json.loads(request.body)["model"]]


@pytest.fixture(scope="module")
def fake(background: BackgroundLoop) -> Iterator[ReplayServer]:
    with background.entered(text_backend(_fake_text)) as server:
        yield server


@pytest.fixture(scope="module")
def gateway(background: BackgroundLoop, plain_server: Any, fake: ReplayServer) -> Iterator[str]:
    config = gateway_config(
        {
            "llama": {"base_url": plain_server.base_url, "backend": "llamacpp"},
            "harmony": {"base_url": fake.base_url, "model_id": "harmony-model", "backend": "vllm"},
            "unoffered": {
                "base_url": fake.base_url,
                "model_id": "unoffered-model",
                "backend": "vllm",
            },
        },
        roles={"agent": {"backend": "llama"}},
    )
    with background.gateway(config) as url:
        yield url


@STREAMING
def test_hermes_text_from_llama_server_arrives_as_tool_calls(
    node_sdk: NodeSdk, gateway: str, plain_server: Any, stream: bool
) -> None:
    """The model is named by its role (``agent``), as an agent's configuration would."""
    body = chat_body(stream=stream, **forced_fields(plain_server.base_url, HERMES))
    seen = seen_from(node_sdk.chat(gateway, {"model": "agent", **body}))
    assert seen.calls == [("get_weather", {"city": "Paris"})]
    assert all(seen.call_ids), seen.call_ids
    assert seen.finish_reason == "tool_calls"
    assert "<tool_call" not in seen.content and "get_weather" not in seen.content


@STREAMING
def test_harmony_analysis_arrives_as_reasoning_content(
    node_sdk: NodeSdk, gateway: str, stream: bool
) -> None:
    body = chat_body(tools=False, stream=stream)
    seen = seen_from(node_sdk.chat(gateway, {"model": "harmony", **body}))
    assert seen.reasoning == "The user wants Paris weather."
    assert seen.content == "It is sunny in Paris."
    assert seen.calls == []
    assert seen.finish_reason == "stop"


@STREAMING
def test_a_call_to_a_tool_not_offered_arrives_as_text(
    node_sdk: NodeSdk, gateway: str, stream: bool
) -> None:
    seen = seen_from(node_sdk.chat(gateway, {"model": "unoffered", **chat_body(stream=stream)}))
    assert seen.calls == []
    assert seen.content == UNOFFERED
    assert seen.finish_reason == "stop"


def test_usage_arrives_in_the_last_chunk_when_asked(node_sdk: NodeSdk, gateway: str) -> None:
    body = chat_body(tools=False, stream=True, stream_options={"include_usage": True})
    result = node_sdk.chat(gateway, {"model": "harmony", **body})
    assert result["usage"]["completion_tokens"] == 3
    assert result["usage"]["total_tokens"] == 8


def test_an_unknown_model_is_an_api_error_listing_what_exists(
    node_sdk: NodeSdk, gateway: str
) -> None:
    result = node_sdk.chat(gateway, {"model": "gpt-17", **chat_body()})
    error = result["error"]
    assert error["status"] == 404
    assert error["code"] == "model_not_found"
    for name in ("agent", "llama", "harmony", "unoffered"):
        assert name in error["message"]

"""openai-python, async and sync, streamed and not, through the gateway to real and fake backends.

The backends leave everything in ``content``: the real ``llama-server`` writes a hermes
``<tool_call>`` or a ``<think>`` block (forced by a grammar; ``--reasoning-format none`` keeps
the block in content), a loopback fake writes harmony markup or a call to a tool the request
never offered. Each test first checks that the backend really sent the markup as content (else
it would prove nothing about the gateway), then what the unmodified SDK handed its caller.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from providers.replay.server import ReceivedRequest, ReplayServer
from tests.integration.gateway.harness import BackgroundLoop, gateway_config, text_backend
from tests.integration.gateway.scenarios import (
    HARMONY,
    HERMES,
    THINK,
    UNOFFERED,
    Seen,
    chat_body,
    forced_fields,
    python_chat,
    python_chat_sync,
)

MARKUP = ("<tool_call", "</tool_call", "<think", "</think", "<|channel|>", "<|message|>")
FAKE_TEXTS = {"harmony-model": HARMONY, "unoffered-model": UNOFFERED}
MODES = pytest.mark.parametrize(
    ("sync", "stream"),
    [(False, True), (False, False), (True, True), (True, False)],
    ids=["async-stream", "async", "sync-stream", "sync"],
)


def _fake_text(request: ReceivedRequest) -> str:
    return FAKE_TEXTS[json.loads(request.body)["model"]]


@pytest.fixture(scope="module")
def fake(background: BackgroundLoop) -> Iterator[ReplayServer]:
    with background.entered(text_backend(_fake_text)) as server:
        yield server


@pytest.fixture(scope="module")
def gateway(
    background: BackgroundLoop, plain_server: Any, think_in_content_server: Any, fake: ReplayServer
) -> Iterator[str]:
    config = gateway_config(
        {
            "llama": {"base_url": plain_server.base_url, "backend": "llamacpp"},
            "thinker": {"base_url": think_in_content_server.base_url, "backend": "llamacpp"},
            "harmony": {"base_url": fake.base_url, "model_id": "harmony-model", "backend": "vllm"},
            "unoffered": {
                "base_url": fake.base_url,
                "model_id": "unoffered-model",
                "backend": "vllm",
            },
        }
    )
    with background.gateway(config) as url:
        yield url


async def chat(sync: bool, base_url: str, model: str, body: dict[str, Any]) -> Seen:
    if sync:
        return python_chat_sync(base_url, model, body)
    return await python_chat(base_url, model, body)


_SENT_AS_CONTENT: set[tuple[str, str]] = set()


def assert_sent_as_content(server_url: str, body: dict[str, Any], text: str) -> None:
    """The backend itself answers ``body`` with ``text`` in ``content`` (checked once per
    server and text: each forced generation costs seconds): the evidence that the markup
    reaches the gateway as text."""
    if (server_url, text) in _SENT_AS_CONTENT:
        return
    answer = httpx.post(
        f"{server_url}/v1/chat/completions", json=body | {"stream": False}, timeout=60
    )
    answer.raise_for_status()
    message = answer.json()["choices"][0]["message"]
    assert message.get("content") == text, message
    assert not message.get("tool_calls") and not message.get("reasoning_content"), message
    _SENT_AS_CONTENT.add((server_url, text))


def assert_clean(seen: Seen) -> None:
    for marker in MARKUP:
        assert marker not in seen.content, seen.content
        assert marker not in seen.reasoning, seen.reasoning


@pytest.mark.parametrize(
    ("sync", "stream"), [(False, True), (True, False)], ids=["async-stream", "sync"]
)
async def test_hermes_text_from_llama_server_arrives_as_tool_calls(
    gateway: str, plain_server: Any, sync: bool, stream: bool
) -> None:
    """llama-server writes the call as text; the SDK gets one structured call, no markup."""
    body = chat_body(stream=stream, **forced_fields(plain_server.base_url, HERMES))
    assert_sent_as_content(plain_server.base_url, body, HERMES)
    seen = await chat(sync, gateway, "llama", body)
    assert seen.calls == [("get_weather", {"city": "Paris"})]
    assert all(seen.call_ids), seen.call_ids
    assert seen.finish_reason == "tool_calls"
    assert seen.content == ""
    assert_clean(seen)


@pytest.mark.parametrize(
    ("sync", "stream"), [(False, False), (True, True)], ids=["async", "sync-stream"]
)
async def test_think_from_llama_server_arrives_as_reasoning_content(
    gateway: str, think_in_content_server: Any, sync: bool, stream: bool
) -> None:
    """``--reasoning-format none``: the server sends ``<think>`` as content; the SDK reads
    the thought in ``reasoning_content`` and the answer alone in ``content``."""
    url = think_in_content_server.base_url
    body = chat_body(tools=False, stream=stream, **forced_fields(url, THINK))
    del body["tool_choice"]
    assert_sent_as_content(url, body, THINK)
    seen = await chat(sync, gateway, "thinker", body)
    assert seen.reasoning.strip() == "Rain."
    assert seen.content.strip() == "Take an umbrella."
    assert seen.calls == []
    assert seen.finish_reason == "stop"
    assert_clean(seen)


@MODES
async def test_harmony_analysis_arrives_as_reasoning_content(
    gateway: str, sync: bool, stream: bool
) -> None:
    seen = await chat(sync, gateway, "harmony", chat_body(tools=False, stream=stream))
    assert seen.reasoning == "The user wants Paris weather."
    assert seen.content == "It is sunny in Paris."
    assert seen.calls == []
    assert_clean(seen)


@MODES
async def test_a_call_to_a_tool_not_offered_arrives_as_text(
    gateway: str, sync: bool, stream: bool
) -> None:
    """The request offers ``get_weather``; the model calls ``delete_files``: no executable
    call reaches the SDK, the model's text does."""
    seen = await chat(sync, gateway, "unoffered", chat_body(stream=stream))
    assert seen.calls == []
    assert seen.finish_reason == "stop"
    assert seen.content == UNOFFERED

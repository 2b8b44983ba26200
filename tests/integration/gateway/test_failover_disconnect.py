"""Fallback before the first token, and a client leaving mid-stream, seen from the backends.

A role ``{backend: broken, fallback: llama}`` whose backend fails before sending a token (a
503, a connection reset) is answered by the real ``llama-server``; a client that closes its
stream makes the gateway close the backend connection: the loopback backend sees it closed,
and llama-server's slot stops generating (``GET /slots``), well before the answer would end.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.faults.server import FaultServer, Reply
from tests.integration.gateway.harness import BackgroundLoop, TrickleBackend, gateway_config
from tests.integration.gateway.scenarios import chat_body, forced_fields, python_chat

FALLBACK_TEXT = "Fine."
BROKEN = {"main-503": "refusing", "main-reset": "resetting"}
"""Each role's backend, which fails before its first token."""
FREED_WITHIN = 3.0
"""Seconds the backend may take to see the client gone (the stream would run for 10+)."""


@pytest.fixture(scope="module")
def backends(background: BackgroundLoop) -> Iterator[dict[str, Any]]:
    overloaded = Reply(
        503, [b'{"error": {"message": "overloaded"}}'], content_type="application/json"
    )
    with (
        background.entered(FaultServer([overloaded])) as refusing,
        background.entered(FaultServer([Reply(reset_before_headers=True)])) as resetting,
        background.entered(TrickleBackend()) as trickle,
    ):
        yield {"refusing": refusing, "resetting": resetting, "trickle": trickle}


@pytest.fixture(scope="module")
def gateway(
    background: BackgroundLoop, backends: dict[str, Any], plain_server: Any
) -> Iterator[str]:
    vllm = {"backend": "vllm"}
    config = gateway_config(
        {
            "refusing": {"base_url": backends["refusing"].base_url, **vllm},
            "resetting": {"base_url": backends["resetting"].base_url, **vllm},
            "trickle": {"base_url": backends["trickle"].base_url, **vllm},
            "llama": {"base_url": plain_server.base_url, "backend": "llamacpp"},
        },
        roles={
            "main-503": {"backend": "refusing", "fallback": "llama"},
            "main-reset": {"backend": "resetting", "fallback": "llama"},
        },
    )
    with background.gateway(config) as url:
        yield url


@pytest.mark.parametrize(
    ("role", "stream"),
    [("main-503", True), ("main-reset", False)],
    ids=["503-stream", "reset-nonstream"],
)
async def test_a_backend_failing_before_the_first_token_falls_over(
    gateway: str, backends: dict[str, Any], plain_server: Any, role: str, stream: bool
) -> None:
    failing: FaultServer = backends[BROKEN[role]]
    attempts = failing.attempts
    body = chat_body(tools=False, stream=stream, **forced_fields(plain_server.base_url, "Fine."))
    del body["tool_choice"]
    seen = await python_chat(gateway, role, body)
    assert failing.attempts == attempts + 1  # the role's backend was tried, once
    assert seen.content == FALLBACK_TEXT  # and llama-server answered
    assert seen.finish_reason == "stop"


async def test_a_client_leaving_mid_stream_closes_the_backend_connection(
    gateway: str, backends: dict[str, Any], background: BackgroundLoop
) -> None:
    trickle: TrickleBackend = backends["trickle"]
    async with openai.AsyncOpenAI(base_url=gateway, api_key="unused", max_retries=0) as client:
        stream = await client.chat.completions.create(
            model="trickle", messages=[{"role": "user", "content": "count"}], stream=True
        )
        texts = []
        async for chunk in stream:
            texts.append(chunk.choices[0].delta.content if chunk.choices else None)
            if len([text for text in texts if text]) == 3:
                break
        await stream.close()
    left = time.monotonic()
    await asyncio.to_thread(
        background.run, asyncio.wait_for(trickle.closed.wait(), FREED_WITHIN), FREED_WITHIN + 1
    )
    assert time.monotonic() - left < FREED_WITHIN
    assert not trickle.finished
    assert trickle.sent < trickle.count // 2, trickle.sent
    assert [text for text in texts if text] == ["[0]", "[1]", "[2]"]


def _processing(server_url: str) -> bool:
    slots = httpx.get(f"{server_url}/slots", timeout=5).json()
    return any(slot["is_processing"] for slot in slots)


def test_a_client_leaving_mid_stream_frees_the_llama_server_slot(
    gateway: str, plain_server: Any
) -> None:
    """1000 free tokens take this server 10 s or more; the slot must be idle within
    ``FREED_WITHIN`` of the client closing its stream (the sync SDK this time)."""
    body = {"max_tokens": 1000, "ignore_eos": True}
    with openai.OpenAI(base_url=gateway, api_key="unused", max_retries=0) as client:
        stream = client.chat.completions.create(
            model="llama",
            messages=[{"role": "user", "content": "Write a long story."}],
            stream=True,
            extra_body=body,
        )
        received = 0
        for chunk in stream:
            received += sum(1 for choice in chunk.choices if choice.delta.content)
            if received == 3:
                break
        assert _processing(plain_server.base_url), "the slot must be generating mid-stream"
        stream.close()
    left = time.monotonic()
    while _processing(plain_server.base_url):
        assert time.monotonic() - left < FREED_WITHIN, "llama-server still generates"
        time.sleep(0.05)

"""``POST /v1/responses`` through the gateway with both SDKs' own ``responses`` helpers.

A loopback fake leaves a hermes ``<tool_call>`` or harmony markup in chat ``content``; the
gateway runs the chat pipeline and writes the Responses API, which openai-python
(``responses.create``, ``responses.stream``) and the Node SDK (``responses.create``,
``responses.stream().finalResponse()``) parse with their own models and event accumulators.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from providers.replay.server import ReceivedRequest
from tests.integration.gateway.conftest import NodeSdk
from tests.integration.gateway.harness import BackgroundLoop, gateway_config, text_backend
from tests.integration.gateway.scenarios import HARMONY, HERMES, PROMPT

TEXTS = {"hermes-model": f"Checking.\n{HERMES}", "harmony-model": HARMONY}
TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Get the weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}
STREAMING = pytest.mark.parametrize("stream", [True, False], ids=["stream", "nonstream"])


def _text(request: ReceivedRequest) -> str:
    return TEXTS[json.loads(request.body)["model"]]


@pytest.fixture(scope="module")
def gateway(background: BackgroundLoop) -> Iterator[str]:
    with background.entered(text_backend(_text)) as fake:
        backends = {
            name: {"base_url": fake.base_url, "model_id": f"{name}-model", "backend": "vllm"}
            for name in ("hermes", "harmony")
        }
        with background.gateway(gateway_config(backends)) as url:
            yield url


def summary(response: dict[str, Any]) -> tuple[list[tuple[str, Any]], str, str]:
    """``(calls, reasoning, text)`` of a Response object's ``output`` items."""
    calls, reasoning, text = [], "", ""
    for item in response["output"]:
        if item["type"] == "function_call":
            assert item["call_id"], item
            calls.append((item["name"], json.loads(item["arguments"])))
        elif item["type"] == "reasoning":
            parts = (item.get("content") or []) + (item.get("summary") or [])
            reasoning += "".join(part["text"] for part in parts)
        elif item["type"] == "message":
            text += "".join(part.get("text", "") for part in item["content"])
    return calls, reasoning, text


async def python_response(gateway: str, model: str, stream: bool) -> dict[str, Any]:
    async with openai.AsyncOpenAI(base_url=gateway, api_key="unused", max_retries=0) as client:
        if not stream:
            response = await client.responses.create(model=model, input=PROMPT, tools=[TOOL])  # type: ignore[list-item]
            return response.model_dump()
        async with client.responses.stream(model=model, input=PROMPT, tools=[TOOL]) as events:  # type: ignore[list-item]
            async for _ in events:
                pass
            final = await events.get_final_response()
        return final.model_dump()


@STREAMING
async def test_hermes_text_arrives_as_a_function_call_item(
    gateway: str, node_sdk: NodeSdk, stream: bool
) -> None:
    python = await python_response(gateway, "hermes", stream)
    body = {"model": "hermes", "input": PROMPT, "tools": [TOOL], "stream": stream}
    node = node_sdk.chat(gateway, body, api="responses")
    for response in (python, node):
        assert response.get("error") is None, response
        assert response["status"] == "completed"
        calls, _, text = summary(response)
        assert calls == [("get_weather", {"city": "Paris"})]
        assert text == "Checking."
        assert "<tool_call" not in json.dumps(response["output"])


@STREAMING
async def test_harmony_analysis_arrives_as_a_reasoning_item(
    gateway: str, node_sdk: NodeSdk, stream: bool
) -> None:
    python = await python_response(gateway, "harmony", stream)
    body = {"model": "harmony", "input": PROMPT, "stream": stream}
    node = node_sdk.chat(gateway, body, api="responses")
    for response in (python, node):
        assert response.get("error") is None, response
        calls, reasoning, text = summary(response)
        assert calls == []
        assert reasoning == "The user wants Paris weather."
        assert text == "It is sunny in Paris."
        assert "<|channel|>" not in json.dumps(response["output"])

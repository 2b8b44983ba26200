"""Both SDKs through the gateway to the real SGLang server (0.5.23, scripted scheduler), server
set ``plain`` of the SGLang suite: no reasoning or tool-call parser, so ``<think>`` and a hermes
``<tool_call>`` reach the gateway as raw content, and only the gateway can split and recover
them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.gateway.conftest import NodeSdk
from tests.integration.gateway.harness import BackgroundLoop, gateway_config
from tests.integration.gateway.scenarios import python_chat, seen_from
from tests.integration.rigs.scenarios import ANSWER, HERMES_WEATHER, THOUGHT, WEATHER_TOOLS
from tests.integration.rigs.sglang.server import SglangServer

CALL = ("get_weather", {"city": "Paris", "unit": "celsius"})
QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]
STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["stream", "nonstream"])


@pytest.fixture
def gateway(background: BackgroundLoop, sglang_plain: SglangServer) -> Iterator[str]:
    backend = {"base_url": sglang_plain.base_url, "model_id": sglang_plain.model_id}
    config = gateway_config({"sglang": {**backend, "backend": "sglang"}}, roles={"main": "sglang"})
    with background.gateway(config) as url:
        yield url


@STREAMS
async def test_a_raw_hermes_call_from_sglang_arrives_as_tool_calls(
    gateway: str, sglang_plain: SglangServer, node_sdk: NodeSdk, stream: bool
) -> None:
    sglang_plain.script(HERMES_WEATHER)
    body: dict[str, Any] = {"messages": QUESTION, "tools": list(WEATHER_TOOLS), "stream": stream}
    python = await python_chat(gateway, "main", body)
    node = seen_from(node_sdk.chat(gateway, {"model": "main", **body}))
    for seen in (python, node):
        assert seen.calls == [CALL]
        assert seen.finish_reason == "tool_calls"
        assert "<tool_call" not in seen.content


@STREAMS
async def test_raw_think_tags_from_sglang_arrive_as_reasoning_content(
    gateway: str, sglang_plain: SglangServer, node_sdk: NodeSdk, stream: bool
) -> None:
    sglang_plain.script(f"<think>\n{THOUGHT}\n</think>\n\n{ANSWER}")
    body: dict[str, Any] = {"messages": QUESTION, "stream": stream}
    python = await python_chat(gateway, "main", body)
    node = seen_from(node_sdk.chat(gateway, {"model": "main", **body}))
    for seen in (python, node):
        assert seen.reasoning.strip() == THOUGHT
        assert seen.content.strip() == ANSWER
        assert "<think>" not in seen.content

"""Both SDKs through the gateway to the real ``vllm serve`` (0.33, scripted engine), server set
``qwen3-hermes`` (``--tool-call-parser hermes --reasoning-parser qwen3``) of the vLLM suite.

With ``tool_choice: "none"`` vLLM leaves a hermes ``<tool_call>`` as raw content (the vLLM
suite pins that), so only the gateway can make a call of it; vLLM's own reasoning split writes
``reasoning``, which the gateway hands on as ``reasoning_content`` (and ``reasoning``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.gateway.conftest import NodeSdk
from tests.integration.gateway.harness import BackgroundLoop, gateway_config
from tests.integration.gateway.scenarios import python_chat, seen_from
from tests.integration.rigs.scenarios import ANSWER, HERMES_WEATHER, THOUGHT, WEATHER_TOOLS
from tests.integration.rigs.vllm.server import VllmServer

CALL = ("get_weather", {"city": "Paris", "unit": "celsius"})
TOOL_CHOICE_NONE: dict[str, Any] = {
    "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
    "tools": list(WEATHER_TOOLS),
    "tool_choice": "none",
    "chat_template_kwargs": {"enable_thinking": False},
}
REASONING: dict[str, Any] = {
    "messages": [{"role": "user", "content": "What is the weather in Paris?"}],
}


@pytest.fixture
def gateway(background: BackgroundLoop, vllm_qwen3_hermes: VllmServer) -> Iterator[str]:
    config = gateway_config(
        {
            "gpu": {
                "base_url": vllm_qwen3_hermes.base_url,
                "model_id": vllm_qwen3_hermes.model_id,
                "backend": "vllm",
            }
        }
    )
    with background.gateway(config) as url:
        yield url


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "nonstream"])
async def test_hermes_text_left_by_vllm_arrives_as_tool_calls(
    gateway: str, vllm_qwen3_hermes: VllmServer, node_sdk: NodeSdk, stream: bool
) -> None:
    """The served id names the backend; openai-python and the Node SDK get the same call."""
    vllm_qwen3_hermes.script(HERMES_WEATHER)
    before = len(vllm_qwen3_hermes.prompts())
    body = TOOL_CHOICE_NONE | {"stream": stream}
    python = await python_chat(gateway, vllm_qwen3_hermes.model_id, body)
    node = seen_from(node_sdk.chat(gateway, {"model": vllm_qwen3_hermes.model_id, **body}))
    for seen in (python, node):
        assert seen.calls == [CALL]
        assert seen.finish_reason == "tool_calls"
        assert "<tool_call" not in seen.content
    assert len(vllm_qwen3_hermes.prompts()) == before + 2  # one request each, no retry


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "nonstream"])
async def test_vllm_reasoning_arrives_as_reasoning_content(
    gateway: str, vllm_qwen3_hermes: VllmServer, node_sdk: NodeSdk, stream: bool
) -> None:
    vllm_qwen3_hermes.script(f"<think>\n{THOUGHT}\n</think>\n\n{ANSWER}")
    body = REASONING | {"stream": stream}
    python = await python_chat(gateway, "gpu", body)
    node = seen_from(node_sdk.chat(gateway, {"model": "gpu", **body}))
    for seen in (python, node):
        assert seen.reasoning.strip() == THOUGHT
        assert seen.content.strip() == ANSWER
        assert seen.finish_reason == "stop"

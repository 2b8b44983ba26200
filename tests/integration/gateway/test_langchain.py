"""LangChain's ``ChatOpenAI``, unmodified, pointed at the gateway: a hermes ``<tool_call>`` the
backend left in content reaches the LangChain agent as ``AIMessage.tool_calls``.

Once from the real ``llama-server`` (grammar-forced, not streamed), once from a loopback fake
(streamed: LangChain sums the ``tool_call_chunks`` of the SSE the gateway writes).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessageChunk
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from tests.integration.gateway.harness import BackgroundLoop, gateway_config, text_backend
from tests.integration.gateway.scenarios import HERMES, PROMPT, WEATHER_TOOL, forced_fields


@pytest.fixture(scope="module")
def gateway(background: BackgroundLoop, plain_server: Any) -> Iterator[str]:
    with background.entered(text_backend(lambda _: f"Let me check.\n{HERMES}")) as fake:
        fake_backend = {"base_url": fake.base_url, "model_id": "fake", "backend": "vllm"}
        llama = {"base_url": plain_server.base_url, "backend": "llamacpp"}
        config = gateway_config({"fake": fake_backend, "llama": llama})
        with background.gateway(config) as url:
            yield url


def chat_model(gateway: str, model: str, **kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI(
        model=model, base_url=gateway, api_key=SecretStr("unused"), max_retries=0, **kwargs
    )


def test_hermes_text_from_llama_server_arrives_as_tool_calls(
    gateway: str, plain_server: Any
) -> None:
    forced = forced_fields(plain_server.base_url, HERMES)
    tool_choice = forced.pop("tool_choice")
    model = chat_model(gateway, "llama", extra_body=forced).bind_tools(
        [WEATHER_TOOL], tool_choice=tool_choice
    )
    message = model.invoke(PROMPT)
    assert [(call["name"], call["args"]) for call in message.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert all(call["id"] for call in message.tool_calls)
    assert message.invalid_tool_calls == []
    assert "<tool_call" not in str(message.content)


async def test_a_streamed_hermes_call_arrives_as_tool_call_chunks(gateway: str) -> None:
    model = chat_model(gateway, "fake").bind_tools([WEATHER_TOOL])
    total: AIMessageChunk | None = None
    async for chunk in model.astream(PROMPT):
        assert isinstance(chunk, AIMessageChunk)
        assert "<tool_call" not in str(chunk.content)
        total = chunk if total is None else total + chunk
    assert total is not None
    assert [(call["name"], call["args"]) for call in total.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert total.content == "Let me check."
    assert total.response_metadata.get("finish_reason") == "tool_calls"

"""The client's capability features: get_capabilities, validate_model, clamp_max_tokens and the
model-not-found mapping, against the captured vLLM discovery answers (respx)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import respx

from providers import ChatOptions, ModelNotFoundError, OpenAiCompatibleChatClient

ROOT = Path(__file__).resolve().parents[4] / "transcripts" / "vllm"
MODELS = (ROOT / "discovery" / "plain--get-v1-models.raw").read_bytes()
UNKNOWN_MODEL = (ROOT / "captured--plain--error-unknown-model.raw").read_bytes()
BASE = "http://vllm.test/v1"
COMPLETION = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "model": "Qwen/Qwen3-0.6B",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
}


def vllm_routes(mock: respx.MockRouter) -> respx.Route:
    mock.get("/v1/models").mock(return_value=httpx.Response(200, content=MODELS))
    mock.get(url__regex=r".*/(props|version|health|api/.*|)$").mock(
        return_value=httpx.Response(404, json={"detail": "Not Found"})
    )
    return mock.post("/v1/chat/completions").mock(return_value=httpx.Response(200, json=COMPLETION))


async def test_get_capabilities_reports_vllm_context_from_models() -> None:
    with respx.mock(base_url="http://vllm.test", assert_all_called=False) as mock:
        vllm_routes(mock)
        async with OpenAiCompatibleChatClient(BASE, "Qwen/Qwen3-0.6B") as client:
            caps = await client.get_capabilities()
    assert caps.backend.value == "vllm"
    assert (caps.context_window.value, caps.context_window.source) == (4096, "models")


async def test_validate_model_fails_fast_with_served_ids_and_a_suggestion() -> None:
    with respx.mock(base_url="http://vllm.test", assert_all_called=False) as mock:
        chat = vllm_routes(mock)
        async with OpenAiCompatibleChatClient(BASE, "qwen/qwen3-0.6b", validate_model=True) as c:
            with pytest.raises(ModelNotFoundError) as caught:
                await c.get_response("hi")
    message = str(caught.value)
    assert "qwen/qwen3-0.6b" in message
    assert "Qwen/Qwen3-0.6B" in message
    assert "did you mean" in message
    assert not chat.called, "no chat request before the model id is known to be served"


async def test_validate_model_passes_and_keeps_the_served_id() -> None:
    with respx.mock(base_url="http://vllm.test", assert_all_called=False) as mock:
        chat = vllm_routes(mock)
        async with OpenAiCompatibleChatClient(BASE, "Qwen/Qwen3-0.6B", validate_model=True) as c:
            response = await c.get_response("hi")
    assert response.text == "ok"
    assert json.loads(chat.calls.last.request.content)["model"] == "Qwen/Qwen3-0.6B"


async def test_request_time_404_becomes_model_not_found_naming_the_configured_id() -> None:
    with respx.mock(base_url="http://vllm.test", assert_all_called=False) as mock:
        vllm_routes(mock)
        mock.post("/v1/chat/completions").mock(
            return_value=httpx.Response(404, content=UNKNOWN_MODEL)
        )
        async with OpenAiCompatibleChatClient(BASE, "no-such-model") as client:
            await client.get_capabilities()  # served ids now cached
            with pytest.raises(ModelNotFoundError) as caught:
                await client.get_response("hi")
    assert "no-such-model" in str(caught.value)
    assert "Qwen/Qwen3-0.6B" in str(caught.value)
    assert caught.value.status == 404


async def test_clamp_max_tokens_fits_the_request_into_the_context() -> None:
    with respx.mock(base_url="http://vllm.test", assert_all_called=False) as mock:
        chat = vllm_routes(mock)
        async with OpenAiCompatibleChatClient(
            BASE, "Qwen/Qwen3-0.6B", clamp_max_tokens=True
        ) as client:
            await client.get_response("word " * 1000, ChatOptions(max_output_tokens=100_000))
            await client.get_response("short", ChatOptions(max_output_tokens=50))
    first, second = (json.loads(call.request.content) for call in chat.calls)
    assert 0 < first["max_tokens"] < 4096
    assert second["max_tokens"] == 50

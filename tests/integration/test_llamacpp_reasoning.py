"""Reasoning control against a real llama-server (issue 33 item 1): ``ChatOptions.reasoning``
reaches the chat template.

The tiny model's words are noise, so what is checked is the prompt the template renders:
llama-server's ``/apply-template`` renders a chat body exactly as ``/v1/chat/completions``
would (the same ``chat_template_kwargs`` and ``reasoning_effort`` handling), and Qwen3's
template pre-fills an empty think block only when ``enable_thinking`` arrived false. The body
sent there is the client's own (``build_request_body``), and the same options then go through a
real request, which llama-server accepts.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from providers import ChatOptions, OpenAiCompatibleChatClient
from providers.abstractions.errors import UnsupportedOptionError
from providers.abstractions.reasoning_options import ReasoningEffort, ReasoningOptions

NO_THINK_SUFFIX = "<|im_start|>assistant\n<think>\n\n</think>\n\n"


def _options(effort: ReasoningEffort) -> ChatOptions:
    return ChatOptions(reasoning=ReasoningOptions(effort=effort), max_output_tokens=4, seed=1)


async def _rendered(server: Any, client: OpenAiCompatibleChatClient, options: ChatOptions) -> str:
    body = client.build_request_body("What is the weather?", options, stream=False)
    async with httpx.AsyncClient() as http:
        reply = await http.post(f"{server.base_url}/apply-template", json=body, timeout=30)
    reply.raise_for_status()
    prompt: str = reply.json()["prompt"]
    return prompt


@pytest.mark.parametrize(
    ("model_id", "family"),
    [("Qwen3-0.6B-Q8_0.gguf", None), ("tiny.gguf", "qwen3"), ("tiny.gguf", None)],
    ids=["family-from-id", "model_family", "unknown-family-portable"],
)
async def test_thinking_off_reaches_the_template(
    reasoning_server: Any, model_id: str, family: str | None
) -> None:
    async with OpenAiCompatibleChatClient(
        reasoning_server.base_url, model_id, backend="llamacpp", model_family=family
    ) as client:
        off = _options(ReasoningEffort.NONE)
        assert "chat_template_kwargs" in client.build_request_body("x", off, stream=False)
        prompt = await _rendered(reasoning_server, client, off)
        assert prompt.endswith(NO_THINK_SUFFIX), prompt[-80:]
        on = await _rendered(reasoning_server, client, _options(ReasoningEffort.HIGH))
        assert on.endswith("<|im_start|>assistant\n") and "</think>" not in on
        response = await client.get_response("What is the weather?", off)  # (accepted: 200)
    assert response.finish_reason is not None


async def test_without_the_option_the_template_thinks(reasoning_server: Any) -> None:
    """The control: the same body without reasoning leaves Qwen3's default (thinking on)."""
    async with OpenAiCompatibleChatClient(
        reasoning_server.base_url, "Qwen3-0.6B.gguf", backend="llamacpp"
    ) as client:
        prompt = await _rendered(reasoning_server, client, ChatOptions(max_output_tokens=4))
    assert "</think>" not in prompt


async def test_thinking_off_for_an_always_thinking_model_is_refused_before_sending(
    reasoning_server: Any,
) -> None:
    async with OpenAiCompatibleChatClient(
        reasoning_server.base_url, "DeepSeek-R1-Distill-Qwen-7B-Q4_K_M.gguf", backend="llamacpp"
    ) as client:
        with pytest.raises(UnsupportedOptionError) as caught:
            await client.get_response("hi", _options(ReasoningEffort.NONE))
    assert (caught.value.backend, caught.value.family) == ("llamacpp", "deepseek-r1")


@pytest.fixture(scope="module")
def gpt_oss_server(rig: dict[str, Any]) -> Iterator[Any]:
    """The tiny model behind gpt-oss's harmony template (llama.cpp's copy)."""
    from tests.integration.llama_server import LlamaServer
    from tests.integration.tiny_model import llama_cpp_sdist_file

    template = llama_cpp_sdist_file("llama.cpp/models/templates/openai-gpt-oss-120b.jinja")
    with LlamaServer(rig["model"], chat_template_file=template) as server:
        yield server


@pytest.mark.parametrize(
    ("effort", "word"),
    [
        (ReasoningEffort.LOW, "low"),
        (ReasoningEffort.HIGH, "high"),
        (ReasoningEffort.EXTRA_HIGH, "high"),  # gpt-oss's highest
    ],
)
async def test_gpt_oss_effort_reaches_the_harmony_template(
    gpt_oss_server: Any, effort: ReasoningEffort, word: str
) -> None:
    async with OpenAiCompatibleChatClient(
        gpt_oss_server.base_url, "gpt-oss-20b-mxfp4.gguf", backend="llamacpp"
    ) as client:
        prompt = await _rendered(gpt_oss_server, client, _options(effort))
    assert f"Reasoning: {word}" in prompt
    assert prompt.count("Reasoning: ") == 1


async def test_gpt_oss_cannot_be_switched_off(gpt_oss_server: Any) -> None:
    """llama.cpp would take ``reasoning_effort: "none"`` and reason at medium: refused here."""
    async with OpenAiCompatibleChatClient(
        gpt_oss_server.base_url, "gpt-oss-20b-mxfp4.gguf", backend="llamacpp"
    ) as client:
        with pytest.raises(UnsupportedOptionError, match="cannot stop thinking"):
            client.build_request_body("hi", _options(ReasoningEffort.NONE), stream=False)
        default = await _rendered(gpt_oss_server, client, ChatOptions())
    assert "Reasoning: medium" in default  # the template's own default, for the record

"""Reasoning control against the real ``vllm serve`` (issue 33 item 1): each mapped key arrives.

The scripted engine logs the prompt it was given, so the template's reading of
``chat_template_kwargs`` shows: Qwen3's template pre-fills an empty think block only for
``enable_thinking: false``. ``ReasoningOutput.NONE`` sends ``include_reasoning: false``, which
vLLM honours (``message.reasoning`` is null in the raw answer), and the client drops what a
stream still carries. R1 cannot stop thinking: refused before anything reaches the engine.
"""

from __future__ import annotations

from contextlib import aclosing

import pytest

from providers import (
    ChatClient,
    ChatOptions,
    ChatResponse,
    OpenAiCompatibleChatClient,
    create_chat_client,
)
from providers.abstractions.errors import UnsupportedOptionError
from providers.abstractions.reasoning_options import (
    ReasoningEffort,
    ReasoningOptions,
    ReasoningOutput,
)
from tests.integration.rigs.scenarios import SCENARIOS
from tests.integration.rigs.vllm.server import VllmServer

NO_THINK_SUFFIX = "<|im_start|>assistant\n<think>\n\n</think>\n\n"
ANSWER = SCENARIOS["text"].model_text
streaming_cases = pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])


def _options(effort: ReasoningEffort | None, output: ReasoningOutput | None = None) -> ChatOptions:
    return ChatOptions(
        reasoning=ReasoningOptions(effort=effort, output=output), max_output_tokens=32
    )


async def _ask(client: ChatClient, options: ChatOptions, *, streaming: bool) -> ChatResponse:
    if streaming:
        updates = [u async for u in client.get_streaming_response("Weather in Paris?", options)]
        return ChatResponse.from_updates(updates)
    return await client.get_response("Weather in Paris?", options)


@streaming_cases
async def test_thinking_off_reaches_the_qwen3_template(
    vllm_plain: VllmServer, streaming: bool
) -> None:
    vllm_plain.script(ANSWER)
    client = create_chat_client(
        vllm_plain.base_url, vllm_plain.model_id, backend="vllm", retry=None
    )
    async with aclosing(client):
        response = await _ask(client, _options(ReasoningEffort.NONE), streaming=streaming)
        assert vllm_plain.prompts()[-1].prompt.endswith(NO_THINK_SUFFIX)
        assert response.text == ANSWER
        await _ask(client, _options(ReasoningEffort.MEDIUM), streaming=streaming)
    on = vllm_plain.prompts()[-1].prompt
    assert on.endswith("<|im_start|>assistant\n") and "</think>" not in on


async def test_the_portable_form_reaches_the_template_for_an_unknown_family(
    vllm_plain: VllmServer,
) -> None:
    """An id that names no family (here the model id is given as the client's, but the family
    is unknown): both switches go, and Qwen3's template reads its own."""
    vllm_plain.script(ANSWER)
    async with OpenAiCompatibleChatClient(
        vllm_plain.base_url, vllm_plain.model_id, backend="vllm", model_family="not-a-family"
    ) as client:
        body = client.build_request_body("x", _options(ReasoningEffort.NONE), stream=False)
        assert body["chat_template_kwargs"] == {"enable_thinking": False, "thinking": False}
        await client.get_response("Weather in Paris?", _options(ReasoningEffort.NONE))
    assert vllm_plain.prompts()[-1].prompt.endswith(NO_THINK_SUFFIX)


@streaming_cases
async def test_output_none_is_honoured_and_enforced(
    vllm_qwen3_hermes: VllmServer, streaming: bool
) -> None:
    """Model text with a think block, reasoning parser on: the answer holds the text only;
    vLLM itself left the reasoning out of the whole answer (``include_reasoning: false``)."""
    server = vllm_qwen3_hermes
    options = _options(None, ReasoningOutput.NONE)
    wire = OpenAiCompatibleChatClient(server.base_url, server.model_id, backend="vllm")
    assert wire.build_request_body("x", options, stream=streaming)["include_reasoning"] is False
    server.script(SCENARIOS["reasoning"].model_text)
    client = create_chat_client(server.base_url, server.model_id, backend="vllm", retry=None)
    async with aclosing(client):
        response = await _ask(client, options, streaming=streaming)
        assert response.reasoning == ""
        assert response.text == SCENARIOS["reasoning"].expected_text
        if not streaming:  # (vLLM's own doing: the wire client drops only what arrives)
            message = response.raw["choices"][0]["message"]
            assert not message.get("reasoning") and not message.get("reasoning_content")
        server.script(SCENARIOS["reasoning"].model_text)
        control = await _ask(client, _options(None), streaming=streaming)
    assert control.reasoning == SCENARIOS["reasoning"].expected_reasoning  # the control


async def test_thinking_off_on_r1_is_refused_before_the_engine(
    vllm_r1_deepseek: VllmServer,
) -> None:
    before = len(vllm_r1_deepseek.prompts())
    async with OpenAiCompatibleChatClient(
        vllm_r1_deepseek.base_url, vllm_r1_deepseek.model_id, backend="vllm"
    ) as client:
        with pytest.raises(UnsupportedOptionError) as caught:
            await client.get_response("hi", _options(ReasoningEffort.NONE))
    assert caught.value.family == "deepseek-r1"
    assert len(vllm_r1_deepseek.prompts()) == before


async def test_thinking_off_reaches_the_template_through_the_responses_api(
    vllm_plain: VllmServer,
) -> None:
    """vLLM's Responses request takes ``chat_template_kwargs`` too: the same switch arrives."""
    vllm_plain.script(ANSWER)
    client = create_chat_client(
        vllm_plain.base_url, vllm_plain.model_id, backend="vllm", api="responses", retry=None
    )
    async with aclosing(client):
        response = await client.get_response("Weather in Paris?", _options(ReasoningEffort.NONE))
    assert vllm_plain.prompts()[-1].prompt.endswith(NO_THINK_SUFFIX)
    assert response.text == ANSWER

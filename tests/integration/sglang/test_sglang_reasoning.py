"""Reasoning control against SGLang's real server (issue 33 item 1): each mapped key arrives.

The scripted scheduler logs the prompt it was given: Qwen3's template pre-fills an empty think
block only when ``enable_thinking`` arrived false, on chat completions and on the Responses API
(whose request takes ``chat_template_kwargs`` too). R1 cannot stop thinking: refused before
anything reaches the scheduler. No rig serves a harmony (gpt-oss) model, so its
``reasoning_effort`` is checked in the body tests only.
"""

from __future__ import annotations

import pytest

from providers import ChatOptions, ChatResponse
from providers.abstractions.errors import UnsupportedOptionError
from providers.abstractions.reasoning_options import ReasoningEffort, ReasoningOptions
from tests.integration.rigs.scenarios import SCENARIOS
from tests.integration.rigs.sglang.server import SglangServer
from tests.integration.sglang.helpers import STREAMING, STREAMING_IDS, pipeline

NO_THINK_SUFFIX = "<|im_start|>assistant\n<think>\n\n</think>\n\n"
ANSWER = SCENARIOS["text"].model_text
streaming_cases = pytest.mark.parametrize("streaming", STREAMING, ids=STREAMING_IDS)


def _options(effort: ReasoningEffort) -> ChatOptions:
    return ChatOptions(reasoning=ReasoningOptions(effort=effort), max_output_tokens=32)


@streaming_cases
@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_thinking_off_reaches_the_qwen3_template(
    sglang_qwen3_qwen25: SglangServer, streaming: bool, api: str
) -> None:
    sglang_qwen3_qwen25.script(ANSWER)
    async with pipeline(sglang_qwen3_qwen25, api=api) as client:
        options = _options(ReasoningEffort.NONE)
        if streaming:
            updates = [u async for u in client.get_streaming_response("Weather?", options)]
            response = ChatResponse.from_updates(updates)
        else:
            response = await client.get_response("Weather?", options)
    assert sglang_qwen3_qwen25.prompts()[-1].prompt.endswith(NO_THINK_SUFFIX)
    # Thinking off, the qwen3 parser reads the text as text (on, it would call it reasoning).
    assert (response.text, response.reasoning) == (ANSWER, "")


async def test_thinking_on_leaves_the_prompt_open(sglang_qwen3_qwen25: SglangServer) -> None:
    sglang_qwen3_qwen25.script(SCENARIOS["reasoning"].model_text)
    async with pipeline(sglang_qwen3_qwen25) as client:
        response = await client.get_response("Weather?", _options(ReasoningEffort.HIGH))
    prompt = sglang_qwen3_qwen25.prompts()[-1].prompt
    assert prompt.endswith("<|im_start|>assistant\n") and "</think>" not in prompt
    assert response.reasoning == SCENARIOS["reasoning"].expected_reasoning


async def test_thinking_off_on_r1_is_refused_before_the_scheduler(
    sglang_r1_deepseek: SglangServer,
) -> None:
    before = len(sglang_r1_deepseek.prompts())
    async with pipeline(sglang_r1_deepseek) as client:
        with pytest.raises(UnsupportedOptionError) as caught:
            await client.get_response("hi", _options(ReasoningEffort.NONE))
    assert (caught.value.backend, caught.value.family) == ("sglang", "deepseek-r1")
    assert len(sglang_r1_deepseek.prompts()) == before

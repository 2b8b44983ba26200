"""SGLang with ``--reasoning-parser qwen3 --tool-call-parser qwen25`` (server set ``qwen3-qwen25``).

Each case scripts a scenario's model text (``tests/integration/rigs/scenarios.py``, shown in the
test's docstring) and checks the normalised result through our standard pipeline, streamed and
not: the same ``ChatResponse`` llama.cpp and vLLM give for the same text.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from providers import ChatResponse
from tests.integration.rigs.scenarios import SCENARIOS, assert_matches, run
from tests.integration.rigs.sglang.server import SglangServer
from tests.integration.sglang.helpers import (
    STREAMING,
    STREAMING_IDS,
    assert_usage,
    pipeline,
    run_scenario,
)

streaming_cases = pytest.mark.parametrize("streaming", STREAMING, ids=STREAMING_IDS)


def _call_arguments(response: ChatResponse) -> list[dict[str, object]]:
    return [dict(call.arguments or {}) for call in response.tool_calls]


@streaming_cases
async def test_text_with_thinking_off(sglang_qwen3_qwen25: SglangServer, streaming: bool) -> None:
    """ "It is sunny in Paris." with ``enable_thinking: false`` -> plain text, no reasoning
    (with thinking on, SGLang's qwen3 parser would call untagged text reasoning)."""
    scenario = SCENARIOS["text"]
    response = await run_scenario(sglang_qwen3_qwen25, scenario, streaming=streaming)
    assert_matches(response, scenario)
    assert_usage(response, sglang_qwen3_qwen25)
    prompt = sglang_qwen3_qwen25.prompts()[-1].prompt
    assert prompt.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")  # thinking off


@streaming_cases
async def test_reasoning(sglang_qwen3_qwen25: SglangServer, streaming: bool) -> None:
    """ "<think>\\nThe user asks for the weather in Paris.\\n</think>\\n\\nIt is sunny in Paris."
    -> reasoning and text split, the tags and the newlines around them gone."""
    scenario = SCENARIOS["reasoning"]
    response = await run_scenario(sglang_qwen3_qwen25, scenario, streaming=streaming)
    assert_matches(response, scenario)
    assert_usage(response, sglang_qwen3_qwen25)
    assert "<think>" not in response.text and "</think>" not in response.reasoning


@streaming_cases
async def test_tool_call(sglang_qwen3_qwen25: SglangServer, streaming: bool) -> None:
    """'<tool_call>\\n{"name": "get_weather", "arguments": {"city": "Paris", "unit":
    "celsius"}}\\n</tool_call>' -> one get_weather call with parsed arguments, finish
    tool_calls, SGLang's ``call_<24 hex>`` id kept."""
    scenario = SCENARIOS["tool-call"]
    response = await run_scenario(sglang_qwen3_qwen25, scenario, streaming=streaming)
    assert_matches(response, scenario)
    assert_usage(response, sglang_qwen3_qwen25)
    (call,) = response.tool_calls
    assert call.call_id.startswith("call_")
    assert json.loads(call.raw_arguments or "") == {"city": "Paris", "unit": "celsius"}
    prompt = sglang_qwen3_qwen25.prompts()[-1].prompt
    assert '"name": "get_weather"' in prompt  # the tools went into the template


@streaming_cases
async def test_parallel_tool_calls(sglang_qwen3_qwen25: SglangServer, streaming: bool) -> None:
    """Two ``<tool_call>`` blocks (get_weather Paris, get_time Europe/Paris) -> two calls in
    order with distinct ids."""
    scenario = SCENARIOS["parallel-tool-calls"]
    response = await run_scenario(sglang_qwen3_qwen25, scenario, streaming=streaming)
    assert_matches(response, scenario)
    assert_usage(response, sglang_qwen3_qwen25)
    assert _call_arguments(response) == [
        {"city": "Paris", "unit": "celsius"},
        {"tz": "Europe/Paris"},
    ]


@streaming_cases
async def test_text_then_tool_call(sglang_qwen3_qwen25: SglangServer, streaming: bool) -> None:
    """ "Let me check.\\n<tool_call>…</tool_call>" -> text "Let me check." and the call."""
    scenario = SCENARIOS["text-then-tool-call"]
    response = await run_scenario(sglang_qwen3_qwen25, scenario, streaming=streaming)
    assert_matches(response, scenario)
    assert_usage(response, sglang_qwen3_qwen25)


@streaming_cases
async def test_reasoning_then_tool_call(sglang_qwen3_qwen25: SglangServer, streaming: bool) -> None:
    """ "<think>\\nI should call the weather tool.\\n</think>\\n\\n<tool_call>…</tool_call>"
    -> the reasoning, no text, and the call."""
    scenario = SCENARIOS["reasoning-then-tool-call"]
    response = await run_scenario(sglang_qwen3_qwen25, scenario, streaming=streaming)
    assert_matches(response, scenario)
    assert_usage(response, sglang_qwen3_qwen25)


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_tool_call_cut_by_max_tokens(
    sglang_qwen3_qwen25: SglangServer, streaming: bool
) -> None:
    """The get_weather ``<tool_call>`` cut after 12 tokens -> finish length and no call made up
    from half a call (SGLang streams the name before the arguments arrive)."""
    scenario = SCENARIOS["tool-call-length-cut"]
    response = await run_scenario(sglang_qwen3_qwen25, scenario, streaming=streaming)
    assert_matches(response, scenario)
    assert_usage(response, sglang_qwen3_qwen25)


@streaming_cases
async def test_tool_choice_none_leaves_raw_tags_that_we_recover(
    sglang_qwen3_qwen25: SglangServer, streaming: bool
) -> None:
    """The get_weather ``<tool_call>`` with ``tool_choice: "none"``: SGLang's parser stands down
    and the tags reach content; our text recovery makes the same structured call of it."""
    scenario = SCENARIOS["tool-call-tool-choice-none"]
    response = await run_scenario(sglang_qwen3_qwen25, scenario, streaming=streaming)
    assert_matches(response, scenario)
    assert_usage(response, sglang_qwen3_qwen25)
    assert "<tool_call>" not in response.text


async def test_tool_choice_none_raw_server_answer(sglang_qwen3_qwen25: SglangServer) -> None:
    """The evidence behind the recovery above: with recovery off, SGLang itself sends the
    ``<tool_call>`` text as content and finish ``stop``."""
    scenario = SCENARIOS["tool-call-tool-choice-none"]
    sglang_qwen3_qwen25.script(scenario.model_text)
    async with pipeline(sglang_qwen3_qwen25, reasoning_tags=None, text_tool_calls=None) as client:
        response = await run(client, scenario, streaming=True)
    assert response.text == scenario.model_text
    assert response.tool_calls == []
    assert response.finish_reason == "stop"


@streaming_cases
async def test_untagged_text_with_thinking_on_is_reasoning(
    sglang_qwen3_qwen25: SglangServer, streaming: bool
) -> None:
    """SGLang's quirk (captured: qwen3-qwen25--stream-no-think-tags): "It is sunny in Paris."
    with no think tags while the template leaves thinking on -> the qwen3 parser calls all of
    it reasoning. The split is the server's; our client reports it as sent, text empty."""
    scenario = replace(SCENARIOS["text"], template_kwargs=None)
    response = await run_scenario(sglang_qwen3_qwen25, scenario, streaming=streaming)
    assert response.reasoning == scenario.model_text
    assert response.text == ""
    assert response.finish_reason == "stop"

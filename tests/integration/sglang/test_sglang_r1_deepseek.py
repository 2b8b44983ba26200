"""SGLang with ``--reasoning-parser deepseek-r1`` on the R1-Distill template (``r1-deepseek``).

R1 models usually start their answer inside a think block the prompt opened, so the model text
has no opening tag. Each case scripts a scenario's model text (``tests/integration/rigs/
scenarios.py``) and checks the normalised result through our standard pipeline.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.integration.rigs.scenarios import SCENARIOS, assert_matches
from tests.integration.rigs.sglang.server import SglangServer
from tests.integration.sglang.helpers import STREAMING, STREAMING_IDS, assert_usage, run_scenario

streaming_cases = pytest.mark.parametrize("streaming", STREAMING, ids=STREAMING_IDS)

# SGLang-only: no enable_thinking, so llama.cpp's R1 template closes the think block in the
# prompt; SGLang's deepseek-r1 parser starts in reasoning mode anyway and still splits the text
# (captured: r1-deepseek--stream-reasoning-no-open-tag-template-default; vLLM does not).
NO_OPEN_TAG_TEMPLATE_DEFAULT = replace(
    SCENARIOS["reasoning-no-open-tag"],
    name="reasoning-no-open-tag-template-default",
    template_kwargs=None,
)


@streaming_cases
async def test_reasoning_without_open_tag(
    sglang_r1_deepseek: SglangServer, streaming: bool
) -> None:
    """ "The user asks for the weather in Paris.\\n</think>\\n\\nIt is sunny in Paris." with
    thinking on (the prompt ends with ``<think>\\n``) -> reasoning and text split."""
    scenario = SCENARIOS["reasoning-no-open-tag"]
    response = await run_scenario(sglang_r1_deepseek, scenario, streaming=streaming)
    assert_matches(response, scenario)
    assert_usage(response, sglang_r1_deepseek)
    assert sglang_r1_deepseek.prompts()[-1].prompt.endswith("<think>\n")


@streaming_cases
async def test_reasoning_with_open_tag(sglang_r1_deepseek: SglangServer, streaming: bool) -> None:
    """ "<think>\\nThe user asks…\\n</think>\\n\\nIt is sunny in Paris." -> the same split: an
    opening tag the model writes itself is not part of the reasoning."""
    scenario = replace(
        SCENARIOS["reasoning"], template_kwargs=SCENARIOS["reasoning-no-open-tag"].template_kwargs
    )
    response = await run_scenario(sglang_r1_deepseek, scenario, streaming=streaming)
    assert_matches(response, scenario)
    assert_usage(response, sglang_r1_deepseek)


@streaming_cases
async def test_reasoning_when_the_prompt_closed_the_think_block(
    sglang_r1_deepseek: SglangServer, streaming: bool
) -> None:
    """The no-open-tag text without ``enable_thinking``: the prompt already closed the think
    block, yet SGLang's parser still reads up to ``</think>`` as reasoning, streamed and not."""
    scenario = NO_OPEN_TAG_TEMPLATE_DEFAULT
    response = await run_scenario(sglang_r1_deepseek, scenario, streaming=streaming)
    assert_matches(response, scenario)
    assert sglang_r1_deepseek.prompts()[-1].prompt.endswith("<think>\n</think>")


@streaming_cases
async def test_reasoning_cut_by_max_tokens(
    sglang_r1_deepseek: SglangServer, streaming: bool
) -> None:
    """The no-open-tag text cut after 6 tokens -> the partial reasoning, no text, finish
    length."""
    scenario = SCENARIOS["reasoning-length-cut"]
    response = await run_scenario(sglang_r1_deepseek, scenario, streaming=streaming)
    assert_matches(response, scenario)
    assert_usage(response, sglang_r1_deepseek)

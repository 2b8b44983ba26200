"""The standard pipeline against ``vllm serve --enable-auto-tool-choice --tool-call-parser hermes
--reasoning-parser qwen3`` (server set ``qwen3-hermes``).

vLLM splits reasoning into ``reasoning`` (not ``reasoning_content``) and hermes calls into
``tool_calls`` deltas; with ``tool_choice: "none"`` it leaves the raw ``<tool_call>`` text in
content, which our recovery layer must turn into the same structured call. Whichever path the
text takes, the caller gets the scenario's expected response.
"""

from __future__ import annotations

from contextlib import aclosing

import pytest

from providers import ChatClient, create_chat_client
from tests.integration.rigs.scenarios import SCENARIOS, Scenario, assert_matches, run
from tests.integration.rigs.vllm.server import VllmServer

STREAMING = pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])


def pipeline(server: VllmServer) -> ChatClient:
    return create_chat_client(server.base_url, server.model_id, backend="vllm", retry=None)


async def scripted(server: VllmServer, scenario: Scenario, streaming: bool) -> Scenario:
    """Script the scenario's model text, run it, and assert the expected response."""
    server.script(scenario.model_text)
    async with aclosing(pipeline(server)) as client:
        response = await run(client, scenario, streaming=streaming)
    assert_matches(response, scenario)
    return scenario


@STREAMING
async def test_reasoning_is_split_from_the_answer(
    vllm_qwen3_hermes: VllmServer, streaming: bool
) -> None:
    """``<think>\\nThe user asks…\\n</think>\\n\\nIt is sunny in Paris.``: reasoning and text
    without the template's newlines; vLLM counts reasoning tokens, and we report them."""
    scenario = SCENARIOS["reasoning"]
    vllm_qwen3_hermes.script(scenario.model_text)
    async with aclosing(pipeline(vllm_qwen3_hermes)) as client:
        response = await run(client, scenario, streaming=streaming)
    assert_matches(response, scenario)
    engine = vllm_qwen3_hermes.prompts()[-1]
    assert response.usage is not None
    assert response.usage.output_token_count == engine.output_tokens
    reasoning_tokens = response.usage.reasoning_token_count
    assert reasoning_tokens is not None and 0 < reasoning_tokens < engine.output_tokens


@STREAMING
@pytest.mark.parametrize(
    "name",
    [
        "tool-call",
        "parallel-tool-calls",
        "text-then-tool-call",
        "reasoning-then-tool-call",
        "tool-call-tool-choice-none",
    ],
)
async def test_hermes_tool_calls(vllm_qwen3_hermes: VllmServer, name: str, streaming: bool) -> None:
    """Each hermes scenario (see ``rigs/scenarios.py`` for its model text) gives its calls with
    parsed arguments, finish ``tool_calls``, and no markup in the text."""
    await scripted(vllm_qwen3_hermes, SCENARIOS[name], streaming)


async def test_tool_choice_none_leaves_the_raw_call_in_content(
    vllm_qwen3_hermes: VllmServer,
) -> None:
    """The evidence behind ``tool-call-tool-choice-none``: vLLM itself sends the tags as content
    and finish ``stop``; only our recovery layer makes a call of it."""
    scenario = SCENARIOS["tool-call-tool-choice-none"]
    vllm_qwen3_hermes.script(scenario.model_text)
    raw = create_chat_client(
        vllm_qwen3_hermes.base_url,
        vllm_qwen3_hermes.model_id,
        backend="vllm",
        retry=None,
        reasoning_tags=None,
        text_tool_calls=None,
    )
    async with aclosing(raw) as client:
        response = await run(client, scenario, streaming=True)
    assert response.text == scenario.model_text
    assert response.tool_calls == []
    assert response.finish_reason == "stop"


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_tool_call_cut_by_max_tokens(vllm_qwen3_hermes: VllmServer, streaming: bool) -> None:
    """``max_tokens: 12`` stops inside the arguments (``scenarios.Scenario.cut_inside_call``):
    finish ``length`` and no call that looks complete. vLLM itself disagrees between stream
    (name chunk only, no text: the client marks that call with ``error``) and non-stream (the
    raw partial markup as content)."""
    await scripted(vllm_qwen3_hermes, SCENARIOS["tool-call-length-cut"], streaming)
    assert vllm_qwen3_hermes.prompts()[-1].output_tokens == 12


@STREAMING
async def test_qwen3_parser_takes_untagged_text_for_reasoning(
    vllm_qwen3_hermes: VllmServer, streaming: bool
) -> None:
    """A vLLM quirk, pinned so a change is noticed: with thinking on in the prompt, the qwen3
    parser treats output as reasoning until ``</think>`` even when no ``<think>`` was emitted,
    so an untagged answer reaches the caller as reasoning. Our client cannot tell it apart
    from real reasoning and passes it on; ``enable_thinking: false`` avoids it (scenario
    ``text``)."""
    answer = "It is sunny in Paris."
    vllm_qwen3_hermes.script(answer)
    quirk = Scenario("untagged-with-thinking-on", answer, expected_reasoning=answer)
    async with aclosing(pipeline(vllm_qwen3_hermes)) as client:
        response = await run(client, quirk, streaming=streaming)
    assert_matches(response, quirk)
    await scripted(vllm_qwen3_hermes, SCENARIOS["text"], streaming)

"""The backend-neutral scenarios (``rigs/scenarios.py``) on a live llama-server.

The vLLM and SGLang suites run the same scenarios through their servers' own parsers and assert
the same ``expected_*`` results, so together the three suites prove the promise of this library:
the same model text yields the same ``ChatResponse`` (text, reasoning, tool calls, finish) on
llama.cpp, vLLM and SGLang.

Here the model text is forced with a grammar (random weights write whatever the grammar allows)
plus a logit bias towards the tokenizer's own cut of the text, so ``max_output_tokens`` cuts it
where a real Qwen model's output would be cut. llama-server refuses a grammar together with
``tools``, so the tools reach only our text-recovery layer (it types Qwen3-Coder parameters from
their schema): a small layer under it removes them from the wire request. That is also the
situation the recovery layer exists for, a server whose tool parser is not in play.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest

from providers import ChatInput, ChatOptions, ChatResponse, ChatResponseUpdate
from providers.abstractions.chat_client import ChatClient
from providers.abstractions.delegating import DelegatingChatClient
from providers.builder import ChatClientBuilder
from providers.chat_completions.client import OpenAiCompatibleChatClient
from tests.integration.llama_server import LlamaServer, forcing_grammar
from tests.integration.rigs.scenarios import SCENARIOS, Scenario, assert_matches, run

R1_STYLE = frozenset({"reasoning-no-open-tag", "reasoning-length-cut"})
"""Texts that only close the think block: they need a template that opens it in the prompt
(R1-Distill's, with ``enable_thinking``), exactly as the vLLM and SGLang ``r1-deepseek`` sets."""

NON_STREAMED = frozenset(
    {"text", "text-length", "reasoning", "reasoning-no-open-tag", "tool-call", "coder-tool-call"}
)
"""Each forced token costs llama-server a pass over the whole vocabulary, so the non-streamed
path runs on a representative subset; every scenario runs streamed."""


class _ToolsOnlyForRecovery(DelegatingChatClient):
    """Drops ``tools``/``tool_mode`` on the way to the wire; the layers above still see them."""

    @staticmethod
    def _wire(options: ChatOptions | None) -> ChatOptions | None:
        if options is None or not options.tools:
            return options
        return replace(options, tools=None, tool_mode=None)

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        return await self.inner.get_response(messages, self._wire(options))

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        return self.inner.get_streaming_response(messages, self._wire(options))


async def _forcing(base_url: str, scenario: Scenario) -> dict[str, Any]:
    async with httpx.AsyncClient() as http:
        answer = await http.post(f"{base_url}/tokenize", json={"content": scenario.model_text})
    tokens: list[int] = answer.json()["tokens"]
    return {
        "grammar": forcing_grammar(scenario.model_text),
        "logit_bias": {str(token): 50 for token in set(tokens)},
    }


def _client(base_url: str) -> ChatClient:
    core = OpenAiCompatibleChatClient(base_url, backend="llamacpp")
    return (
        ChatClientBuilder(core)
        .use_text_tool_calls("auto", reasoning_tags="auto")
        .use(_ToolsOnlyForRecovery)
        .build()
    )


@pytest.fixture(scope="module")
def r1_server(rig: dict[str, Any]) -> Iterator[LlamaServer]:
    """R1-Distill's template (llama.cpp's copy) with ``--reasoning-format deepseek``."""
    from tests.integration.tiny_model import llama_cpp_sdist_file

    template = llama_cpp_sdist_file(
        "llama.cpp/models/templates/deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja"
    )
    with LlamaServer(
        rig["model"], chat_template_file=template, extra_args=["--reasoning-format", "deepseek"]
    ) as server:
        yield server


def _params() -> list[Any]:
    params = []
    for name, scenario in SCENARIOS.items():
        for streaming in (True, False):
            if not streaming and name not in NON_STREAMED:
                continue
            mode = "stream" if streaming else "json"
            params.append(pytest.param(scenario, streaming, id=f"{name}-{mode}"))
    return params


@pytest.mark.parametrize(("scenario", "streaming"), _params())
async def test_scenario_on_llama_server(
    request: pytest.FixtureRequest, scenario: Scenario, streaming: bool
) -> None:
    """``--reasoning-format deepseek``: llama.cpp splits the think block itself; tool markup
    stays in content (no tools on the wire) and our recovery finds it."""
    fixture = "r1_server" if scenario.name in R1_STYLE else "reasoning_server"
    server = request.getfixturevalue(fixture)
    client = _client(server.base_url)
    try:
        extra = await _forcing(server.base_url, scenario)
        response = await run(client, scenario, streaming=streaming, **extra)
    finally:
        await client.aclose()
    assert_matches(response, scenario)


@pytest.mark.parametrize(
    "name", ["reasoning", "reasoning-then-tool-call", "text-then-tool-call", "coder-tool-call"]
)
async def test_scenario_with_everything_left_in_content(
    think_in_content_server: Any, name: str
) -> None:
    """``--reasoning-format none``: even the think block arrives as raw text; the caller still
    gets exactly what the server-split run gives."""
    scenario = SCENARIOS[name]
    client = _client(think_in_content_server.base_url)
    try:
        extra = await _forcing(think_in_content_server.base_url, scenario)
        response = await run(client, scenario, streaming=True, **extra)
    finally:
        await client.aclose()
    assert_matches(response, scenario)

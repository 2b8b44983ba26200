"""The standard pipeline against ``vllm serve --enable-auto-tool-choice --tool-call-parser
qwen3_coder`` (server set ``qwen3coder``, Qwen3-Coder's template).

The XML format carries every parameter as text; vLLM types ``days`` from the tool's schema, so
the caller must get the integer 3. vLLM strips the text before the call when not streaming
(``"Let me check."``) but streams it with its newline; the caller sees the same either way.
"""

from __future__ import annotations

from contextlib import aclosing

import pytest

from providers import create_chat_client
from tests.integration.rigs.scenarios import SCENARIOS, assert_matches, run
from tests.integration.rigs.vllm.server import VllmServer


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
@pytest.mark.parametrize(
    "name",
    [
        "coder-tool-call",
        "coder-text-then-tool-call",
        "coder-tool-call-length-cut",
    ],
)
async def test_qwen3_coder_tool_calls(
    vllm_qwen3coder: VllmServer, name: str, streaming: bool
) -> None:
    """Each qwen3_coder scenario (model texts in ``rigs/scenarios.py``): the call with typed
    arguments and finish ``tool_calls``; a ``max_tokens`` cut gives no complete-looking call."""
    scenario = SCENARIOS[name]
    vllm_qwen3coder.script(scenario.model_text)
    client = create_chat_client(
        vllm_qwen3coder.base_url, vllm_qwen3coder.model_id, backend="vllm", retry=None
    )
    async with aclosing(client):
        response = await run(client, scenario, streaming=streaming)
    assert_matches(response, scenario)
    engine = vllm_qwen3coder.prompts()[-1]
    assert response.usage is not None
    assert response.usage.output_token_count == engine.output_tokens
    assert response.usage.input_token_count == engine.prompt_tokens

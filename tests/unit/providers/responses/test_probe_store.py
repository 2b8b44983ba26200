"""``probe_store()`` against a store-on SGLang (found on the real SGLang 0.5.23).

A store-on SGLang answers a read of an unknown id with 404, as vLLM does with or without its
store, so the probe must create a response. SGLang's Responses route keeps 2 tokens of
``max_output_tokens`` back and refuses a limit that leaves less than 0 ("max_new_tokens must be
at least 0, got -1."): a probe asking for 1 token got a 400 instead of an answer.
"""

from __future__ import annotations

import json

import httpx
import respx

from providers.responses import OpenAiCompatibleResponsesClient

BASE = "http://llm.test"
URL = f"{BASE}/v1/responses"


def sglang_create(request: httpx.Request) -> httpx.Response:
    """SGLang's arithmetic: ``max_new_tokens = max_output_tokens - 2``, never below 0."""
    body = json.loads(request.content)
    max_new_tokens = body["max_output_tokens"] - 2
    if max_new_tokens < 0:
        message = f"max_new_tokens must be at least 0, got {max_new_tokens}."
        return httpx.Response(
            400, json={"error": {"message": message, "type": "invalid_request_error", "code": 400}}
        )
    return httpx.Response(
        200, json={"id": "resp_p", "object": "response", "status": "completed", "output": []}
    )


@respx.mock
async def test_probe_finds_a_store_on_sglang() -> None:
    not_found = {"error": {"message": "Response with id 'x' not found.", "code": 404}}
    respx.get(f"{URL}/resp_oaicompat_store_probe").mock(
        return_value=httpx.Response(404, json=not_found)
    )
    create = respx.post(URL).mock(side_effect=sglang_create)
    respx.get(f"{URL}/resp_p").mock(
        return_value=httpx.Response(200, json={"id": "resp_p", "status": "completed", "output": []})
    )
    async with OpenAiCompatibleResponsesClient(BASE, "m", backend="sglang") as client:
        assert await client.probe_store() is True
    assert json.loads(create.calls.last.request.content)["store"] is True

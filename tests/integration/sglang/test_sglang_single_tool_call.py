"""``allow_multiple_tool_calls=False`` against SGLang's real front end (issue 33 item 3).

SGLang enforces ``parallel_tool_calls: false`` only through a grammar (``tool_choice``
``required`` or named, strict tools, or a parser with a native ``auto`` structural tag): with
plain ``auto`` and the ``qwen25`` parser, two ``<tool_call>`` blocks in the model text come back
as two calls (research-33 §2). The scheduler here is scripted to write two, the request carries
``parallel_tool_calls: false``, and the caller gets one, the other recorded as dropped.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import httpx
import pytest
from structlog.testing import capture_logs

from providers import ChatResponse, OpenAiCompatibleChatClient
from providers.abstractions.event_names import REQUEST_OPTION_ENFORCED
from providers.chat_completions.single_tool_call import DROPPED_TOOL_CALLS
from tests.integration.rigs.scenarios import SCENARIOS
from tests.integration.rigs.sglang.server import SglangServer
from tests.integration.sglang.helpers import STREAMING, STREAMING_IDS


@pytest.mark.parametrize("streaming", STREAMING, ids=STREAMING_IDS)
async def test_two_calls_come_back_as_one(
    sglang_qwen3_qwen25: SglangServer, streaming: bool
) -> None:
    scenario = SCENARIOS["parallel-tool-calls"]  # get_weather Paris, then get_time Europe/Paris
    sglang_qwen3_qwen25.script(scenario.model_text)
    bodies: list[dict[str, Any]] = []

    async def record(request: httpx.Request) -> None:
        bodies.append(json.loads(request.content))

    options = replace(scenario.options(), allow_multiple_tool_calls=False)
    async with (
        httpx.AsyncClient(event_hooks={"request": [record]}) as http,
        OpenAiCompatibleChatClient(
            sglang_qwen3_qwen25.base_url,
            sglang_qwen3_qwen25.model_id,
            backend="sglang",
            http_client=http,
        ) as client,
    ):
        with capture_logs() as logs:
            if streaming:
                updates = [u async for u in client.get_streaming_response(scenario.prompt, options)]
                response = ChatResponse.from_updates(updates)
            else:
                response = await client.get_response(scenario.prompt, options)
    assert bodies[-1]["parallel_tool_calls"] is False
    (call,) = response.tool_calls
    assert (call.name, call.arguments) == ("get_weather", {"city": "Paris", "unit": "celsius"})
    assert response.finish_reason == "tool_calls"
    (dropped,) = response.additional_properties[DROPPED_TOOL_CALLS]
    assert dropped["name"] == "get_time"
    assert json.loads(dropped["arguments"]) == {"tz": "Europe/Paris"}
    assert dropped["call_id"].startswith("call_")
    assert [e["dropped"] for e in logs if e["event"] == REQUEST_OPTION_ENFORCED] == [["get_time"]]


async def test_the_server_itself_returns_both(sglang_qwen3_qwen25: SglangServer) -> None:
    """The same request sent raw: SGLang does not trim (why the client must)."""
    scenario = SCENARIOS["parallel-tool-calls"]
    sglang_qwen3_qwen25.script(scenario.model_text)
    async with OpenAiCompatibleChatClient(
        sglang_qwen3_qwen25.base_url, sglang_qwen3_qwen25.model_id, backend="sglang"
    ) as client:
        body = client.build_request_body(
            scenario.prompt,
            replace(scenario.options(), allow_multiple_tool_calls=False),
            stream=False,
        )
    async with httpx.AsyncClient(timeout=60) as http:
        answer = await http.post(f"{sglang_qwen3_qwen25.base_url}/v1/chat/completions", json=body)
    assert answer.status_code == 200, answer.text
    calls = answer.json()["choices"][0]["message"]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["get_weather", "get_time"]

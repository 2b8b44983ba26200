"""vLLM's own 400 for ``tool_choice`` without ``tools``, reproduced and then avoided (issue 33).

An agent framework sends ``tool_choice: "auto"`` on every turn, tools or not; vLLM's request
check answers 400 "When using `tool_choice`, `tools` must be set." The client sends
``tool_choice`` only with tools, so the same options succeed.
"""

from __future__ import annotations

from contextlib import aclosing

import httpx
import pytest

from providers import ChatOptions, ChatToolMode, OpenAiCompatibleChatClient
from tests.integration.rigs.scenarios import SCENARIOS
from tests.integration.rigs.vllm.server import VllmServer


async def test_tool_choice_without_tools_is_vllms_400(vllm_plain: VllmServer) -> None:
    body = {
        "model": vllm_plain.model_id,
        "messages": [{"role": "user", "content": "hi"}],
        "tool_choice": "auto",
        "max_tokens": 8,
    }
    async with httpx.AsyncClient(timeout=60) as http:
        answer = await http.post(f"{vllm_plain.base_url}/v1/chat/completions", json=body)
    assert answer.status_code == 400, answer.text
    assert "When using `tool_choice`, `tools` must be set" in answer.text


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_the_client_with_tool_mode_and_no_tools_succeeds(
    vllm_plain: VllmServer, streaming: bool
) -> None:
    scenario = SCENARIOS["text"]
    vllm_plain.script(scenario.model_text)
    options = ChatOptions(
        tool_mode=ChatToolMode.AUTO,
        max_output_tokens=scenario.max_output_tokens,
        additional_properties={"chat_template_kwargs": dict(scenario.template_kwargs or {})},
    )
    client = OpenAiCompatibleChatClient(vllm_plain.base_url, vllm_plain.model_id, backend="vllm")
    async with aclosing(client):
        assert "tool_choice" not in client.build_request_body("hi", options, stream=streaming)
        if streaming:
            text = "".join([u.text async for u in client.get_streaming_response("hi", options)])
        else:
            text = (await client.get_response("hi", options)).text
    assert text == scenario.expected_text

"""Stop sequences on a live llama-server with a reasoning template (issue 33 item 3).

llama-server matches ``stop`` strings on everything generated, reasoning included
(``find_stopping_strings`` over ``generated_text``; research-33 §3): a stop string the model
writes while it thinks ends the answer inside the thinking, and the caller gets no text. For a
family that thinks (Qwen3 here) the client therefore does not send ``stop`` and cuts the answer's
text itself. The model text is forced with a grammar (random weights write whatever it allows)
and a logit bias towards the tokenizer's own cut of it, as in ``test_llamacpp_scenarios``.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from structlog.testing import capture_logs

from providers import ChatOptions, ChatResponse, OpenAiCompatibleChatClient
from providers.abstractions.event_names import REQUEST_OPTION_ENFORCED
from tests.integration.llama_server import forcing_grammar

THOUGHT = "I could stop here: END"
MODEL_TEXT = f"<think>\n{THOUGHT}\n</think>\n\nThe answer is END and more."


async def _forcing(base_url: str) -> dict[str, Any]:
    async with httpx.AsyncClient() as http:
        answer = await http.post(f"{base_url}/tokenize", json={"content": MODEL_TEXT})
    tokens: list[int] = answer.json()["tokens"]
    return {
        "grammar": forcing_grammar(MODEL_TEXT),
        "logit_bias": {str(token): 50 for token in set(tokens)},
    }


async def test_the_server_applies_stop_inside_the_reasoning(reasoning_server: Any) -> None:
    """The failure the client works around: ``stop`` sent, the answer ends in the thinking."""
    body = {
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 200,
        "stop": ["END"],
        **await _forcing(reasoning_server.base_url),
    }
    async with httpx.AsyncClient(timeout=120) as http:
        answer = await http.post(f"{reasoning_server.base_url}/v1/chat/completions", json=body)
    message = answer.json()["choices"][0]["message"]
    assert not message.get("content")  # no answer at all
    assert "END" not in (message.get("reasoning_content") or "")


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_stop_is_applied_to_the_text_here(reasoning_server: Any, streaming: bool) -> None:
    options = ChatOptions(
        stop_sequences=["END"],
        max_output_tokens=200,
        additional_properties=await _forcing(reasoning_server.base_url),
    )
    async with OpenAiCompatibleChatClient(
        reasoning_server.base_url, backend="llamacpp", model_family="qwen3"
    ) as client:
        assert "stop" not in client.build_request_body("hi", options, stream=streaming)
        with capture_logs() as logs:
            if streaming:
                updates = [u async for u in client.get_streaming_response("hi", options)]
                response = ChatResponse.from_updates(updates)
            else:
                response = await client.get_response("hi", options)
    assert response.reasoning.strip() == THOUGHT  # the stop string inside it did not cut it
    assert response.text == "The answer is "
    assert response.finish_reason == "stop"
    assert response.additional_properties["stop_sequence"] == "END"
    assert [e["stop_sequence"] for e in logs if e["event"] == REQUEST_OPTION_ENFORCED] == ["END"]

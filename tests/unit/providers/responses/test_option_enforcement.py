"""The Responses client holds an answer to the options the same way the chat client does, and
only to what it sent: a constraint its server's Responses API cannot take is not checked after
``unsupported_options="warn"`` left it out, and a stop the client applies itself is not sent."""

from __future__ import annotations

import json

import pytest
import respx

from providers import (
    ChatOptions,
    ChatResponse,
    ChatResponseFormat,
    ConstraintViolationError,
)
from providers.responses import OpenAiCompatibleResponsesClient
from tests.unit.providers.responses.test_client import (
    BASE,
    URL,
    message,
    response_object,
    sent,
    streaming,
    text_stream,
)

YES_NO = ChatOptions(response_format=ChatResponseFormat.choice(["yes", "no"]))


@respx.mock
@pytest.mark.parametrize("streamed", [True, False], ids=["stream", "whole"])
async def test_a_constraint_left_out_under_warn_is_not_checked(streamed: bool) -> None:
    """SGLang's Responses API takes no choice: under warn it is not sent, so "maybe" is fine."""
    route = respx.post(URL).mock(
        return_value=streaming(text_stream("maybe"))
        if streamed
        else respx.MockResponse(200, json=response_object(output=[message("maybe")]))
    )
    async with OpenAiCompatibleResponsesClient(
        BASE, "m", backend="sglang", unsupported_options="warn"
    ) as client:
        if streamed:
            updates = [u async for u in client.get_streaming_response("?", YES_NO)]
            text = ChatResponse.from_updates(updates).text
        else:
            text = (await client.get_response("?", YES_NO)).text
    assert text == "maybe"
    assert "structured_outputs" not in sent(route)


@respx.mock
@pytest.mark.parametrize("streamed", [True, False], ids=["stream", "whole"])
async def test_a_constraint_sent_is_checked(streamed: bool) -> None:
    """vLLM's Responses API takes the choice; an answer outside it is the typed error."""
    respx.post(URL).mock(
        return_value=streaming(text_stream("maybe"))
        if streamed
        else respx.MockResponse(200, json=response_object(output=[message("maybe")]))
    )
    async with OpenAiCompatibleResponsesClient(BASE, "m", backend="vllm") as client:
        with pytest.raises(ConstraintViolationError) as caught:
            if streamed:
                _ = [u async for u in client.get_streaming_response("?", YES_NO)]
            else:
                await client.get_response("?", YES_NO)
    assert caught.value.response.text == "maybe"


@respx.mock
async def test_a_stop_applied_here_is_not_sent() -> None:
    """A qwen3 model on vLLM may think, and vLLM would cut inside the thinking: the client cuts
    the text itself and sends no ``stop``."""
    route = respx.post(URL).mock(return_value=streaming(text_stream("one two ", "END three")))
    options = ChatOptions(stop_sequences=["END"])
    async with OpenAiCompatibleResponsesClient(BASE, "Qwen/Qwen3-8B", backend="vllm") as client:
        updates = [u async for u in client.get_streaming_response("?", options)]
    body = json.loads(route.calls.last.request.content)
    assert "stop" not in body
    response = ChatResponse.from_updates(updates)
    assert response.text == "one two "
    assert response.additional_properties.get("stop_sequence") == "END"

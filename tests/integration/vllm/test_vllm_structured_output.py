"""Structured output against the real ``vllm serve`` 0.33 (issue 22 part 6).

Our vLLM row sends OpenAI's ``response_format``; vLLM's front end turns it into the request's
``structured_outputs.json`` and validates the schema with its grammar backend before the engine
sees the request. The scripted engine records that constraint (it does not enforce it: it has no
model to constrain), so these tests check the schema arrives where vLLM honours it, whole, and
that the answer comes back as a validated instance, streamed or not.
"""

from __future__ import annotations

import json
from contextlib import aclosing
from typing import Any

import pytest
from pydantic import BaseModel, Field

from providers import ChatOptions, ChatResponse, ChatResponseFormat, StructuredOutputError
from providers.abstractions.structured_output import read_structured
from tests.integration.rigs.vllm.server import VllmServer
from tests.integration.vllm.test_vllm_plain import pipeline


class Forecast(BaseModel):
    """Tomorrow's weather in one city."""

    city: str = Field(max_length=20)
    celsius: int = Field(ge=-60, le=60)
    rain: bool
    note: str | None = None


ANSWER = {"city": "Paris", "celsius": 21, "rain": False, "note": None}


def constraint_schema(server: VllmServer) -> Any:
    """The JSON Schema of the last request's ``structured_outputs`` as the engine got it."""
    constraint = server.prompts()[-1].structured_outputs
    assert constraint is not None, "the request reached the engine without a constraint"
    schema = constraint["json"]
    return json.loads(schema) if isinstance(schema, str) else schema


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_the_schema_reaches_structured_outputs(
    vllm_plain: VllmServer, streaming: bool
) -> None:
    vllm_plain.script(json.dumps(ANSWER))
    fmt = ChatResponseFormat.for_type(Forecast)
    async with aclosing(pipeline(vllm_plain)) as client:
        if streaming:
            options = ChatOptions(response_format=fmt)
            updates = [u async for u in client.get_streaming_response("Weather?", options)]
            value = read_structured(Forecast, ChatResponse.from_updates(updates))
        else:
            result = await client.get_response_as(Forecast, "Weather?")  # type: ignore[attr-defined]
            value = result.value
            assert result.response.usage is not None
    assert value == Forecast.model_validate(ANSWER)
    assert constraint_schema(vllm_plain) == fmt.schema
    # vLLM validated the schema with a grammar backend before admitting the request
    assert vllm_plain.prompts()[-1].structured_outputs["backend"]  # type: ignore[index]


async def test_a_plain_request_carries_no_constraint(vllm_plain: VllmServer) -> None:
    vllm_plain.script("It is sunny.")
    async with aclosing(pipeline(vllm_plain)) as client:
        await client.get_response("Weather?")
    assert vllm_plain.prompts()[-1].structured_outputs is None


async def test_a_mismatching_answer_is_a_typed_error(vllm_plain: VllmServer) -> None:
    """The scripted engine ignores the constraint, as a server with a broken grammar backend
    would: the mismatch then reaches the caller as ``StructuredOutputError``, text kept."""
    vllm_plain.script('{"city": "Paris", "celsius": "warm"}')
    async with aclosing(pipeline(vllm_plain)) as client:
        with pytest.raises(StructuredOutputError) as caught:
            await client.get_response_as(Forecast, "Weather?")  # type: ignore[attr-defined]
    assert caught.value.reason == "schema_mismatch"
    assert caught.value.text == '{"city": "Paris", "celsius": "warm"}'

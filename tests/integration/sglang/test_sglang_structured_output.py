"""Structured output against the real SGLang 0.5 server (issue 22 part 6).

Our SGLang row sends OpenAI's ``response_format``; SGLang's OpenAI layer turns it into the
sampling parameters' ``json_schema``, which its scheduler compiles into a grammar. The scripted
scheduler records it (it compiles nothing), so these tests check the schema arrives there,
whole, and that the answer comes back as a validated instance, streamed or not.
"""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field

from providers import ChatOptions, ChatResponse, ChatResponseFormat
from providers.abstractions.structured_output import read_structured
from tests.integration.rigs.sglang.server import SglangServer
from tests.integration.sglang.helpers import STREAMING, STREAMING_IDS, pipeline


class Forecast(BaseModel):
    """Tomorrow's weather in one city."""

    city: str = Field(max_length=20)
    celsius: int = Field(ge=-60, le=60)
    rain: bool
    note: str | None = None


ANSWER = {"city": "Paris", "celsius": 21, "rain": False, "note": None}


@pytest.mark.parametrize("streaming", STREAMING, ids=STREAMING_IDS)
async def test_the_schema_reaches_the_sampling_json_schema(
    sglang_plain: SglangServer, streaming: bool
) -> None:
    sglang_plain.script(json.dumps(ANSWER))
    fmt = ChatResponseFormat.for_type(Forecast)
    async with pipeline(sglang_plain) as client:
        if streaming:
            options = ChatOptions(response_format=fmt)
            updates = [u async for u in client.get_streaming_response("Weather?", options)]
            value = read_structured(Forecast, ChatResponse.from_updates(updates))
        else:
            result = await client.get_response_as(Forecast, "Weather?")  # type: ignore[attr-defined]
            value = result.value
    assert value == Forecast.model_validate(ANSWER)
    received = sglang_plain.prompts()[-1].json_schema
    assert received is not None, "the request reached the scheduler without a schema"
    assert json.loads(received) == fmt.schema


async def test_a_plain_request_carries_no_schema(sglang_plain: SglangServer) -> None:
    sglang_plain.script("It is sunny.")
    async with pipeline(sglang_plain) as client:
        await client.get_response("Weather?")
    assert sglang_plain.prompts()[-1].json_schema is None

"""Structured output streamed against a real llama-server (issue 34, item 8).

As in ``test_llamacpp_structured_output.py``, the tiny random model writes JSON only because
llama-server compiles the schema into a grammar, streamed too, so ``get_streaming_response_as``
shows the object growing token by token and ends with a validated value. A token limit that
cuts the object short is the failure: the partials were shown, and the error keeps the text.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from providers import (
    ChatOptions,
    OpenAiCompatibleChatClient,
    StructuredOutputError,
    get_streaming_response_as,
)

Word = Annotated[str, Field(max_length=12)]


class District(BaseModel):
    name: Word
    population: int = Field(ge=0, le=99_999)


class City(BaseModel):
    """A city the model describes."""

    name: Word
    coastal: bool
    districts: list[District] = Field(max_length=2)


async def test_the_partials_grow_and_the_value_is_validated(plain_server: Any) -> None:
    options = ChatOptions(max_output_tokens=400, seed=7)
    async with OpenAiCompatibleChatClient(plain_server.base_url, backend="llamacpp") as client:
        stream = get_streaming_response_as(client, City, "Describe a city.", options)
        partials = [item.partial async for item in stream]

    result = stream.result
    assert isinstance(result.value, City)
    assert City.model_validate_json(result.text) == result.value
    shown = [p for p in partials if p is not None]
    distinct = [p for i, p in enumerate(shown) if i == 0 or p != shown[i - 1]]
    assert len(distinct) > 3, "the object was shown as it grew, not only at the end"
    assert shown[-1] == json.loads(result.text)
    assert all(isinstance(p, dict) for p in shown)


async def test_an_answer_cut_short_raises_with_its_partials_shown(plain_server: Any) -> None:
    options = ChatOptions(max_output_tokens=6, seed=7)
    async with OpenAiCompatibleChatClient(plain_server.base_url, backend="llamacpp") as client:
        stream = get_streaming_response_as(client, City, "Describe a city.", options)
        partials: list[Any] = []
        with pytest.raises(StructuredOutputError) as caught:
            async for item in stream:
                partials.append(item.partial)

    error = caught.value
    assert error.reason == "invalid_json"
    assert error.response.finish_reason == "length"
    assert error.text.startswith("{")
    assert any(p is not None for p in partials)
    assert "cut short" in str(error)


async def test_leaving_early_ends_the_request_and_the_client_serves_the_next(
    plain_server: Any,
) -> None:
    options = ChatOptions(max_output_tokens=400, seed=9)
    async with OpenAiCompatibleChatClient(plain_server.base_url, backend="llamacpp") as client:
        async with get_streaming_response_as(client, City, "Describe a city.", options) as stream:
            async for item in stream:
                if item.partial:
                    break
        again = get_streaming_response_as(client, City, "Describe a city.", options)
        assert isinstance((await again.final()).value, City)

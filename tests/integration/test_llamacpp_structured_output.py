"""Structured output against a real llama-server (issue 22 part 6).

The tiny model has random weights, so whatever it writes is noise, unless the server constrains
sampling. llama-server compiles ``response_format``'s JSON Schema into a grammar, streamed or
not, so the noise must fit the schema: ``get_response_as`` then returns a validated instance. The
control without the format shows the model does not write JSON on its own, so the tests can
fail. The schema bounds every string, number and list, as a schema for a weak model should:
an unbounded string lets a random model write until the token limit.
"""

from __future__ import annotations

import enum
import json
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, Field

from providers import (
    ChatOptions,
    ChatResponse,
    ChatResponseFormat,
    OpenAiCompatibleChatClient,
    StructuredOutputError,
    StructuredResponse,
    create_chat_client,
)
from providers.abstractions.structured_output import read_structured

Word = Annotated[str, Field(max_length=12)]


class Kind(enum.Enum):
    TOWN = "town"
    CITY = "city"


class District(BaseModel):
    name: Word
    population: int = Field(ge=0, le=99_999)


class City(BaseModel):
    """A city the model describes."""

    name: Word
    kind: Kind
    coastal: bool
    mayor: Word | None = None
    districts: list[District] = Field(max_length=2)


OPTIONS = ChatOptions(max_output_tokens=400, seed=7)


async def test_get_response_as_returns_a_validated_instance(plain_server: Any) -> None:
    client = create_chat_client(plain_server.base_url, backend="llamacpp", retry=None)
    try:
        result = await client.get_response_as(City, "Describe a city.", OPTIONS)  # type: ignore[attr-defined]
    finally:
        await client.aclose()
    assert isinstance(result.value, City)
    assert result.response.finish_reason == "stop"
    assert City.model_validate_json(result.text) == result.value
    assert len(result.value.districts) <= 2


async def test_a_streamed_answer_is_constrained_too(plain_server: Any) -> None:
    options = ChatOptions(
        max_output_tokens=OPTIONS.max_output_tokens,
        seed=8,
        response_format=ChatResponseFormat.for_type(City),
    )
    async with OpenAiCompatibleChatClient(plain_server.base_url, backend="llamacpp") as client:
        updates = [u async for u in client.get_streaming_response("Describe a city.", options)]
    response = ChatResponse.from_updates(updates)
    assert len([u for u in updates if u.text]) > 1  # it did arrive in pieces
    assert isinstance(read_structured(City, response), City)


async def test_a_non_object_type_is_wrapped_and_unwrapped(plain_server: Any) -> None:
    async with OpenAiCompatibleChatClient(plain_server.base_url, backend="llamacpp") as client:
        result: StructuredResponse[list[Kind]] = await client.get_response_as(
            Annotated[list[Kind], Field(max_length=4)],  # type: ignore[arg-type]
            "List some kinds.",
            OPTIONS,
        )
    assert isinstance(result.value, list)
    assert all(isinstance(kind, Kind) for kind in result.value)
    assert set(json.loads(result.text)) == {"data"}


async def test_without_the_format_the_model_writes_no_json(plain_server: Any) -> None:
    """The control: the same request without a schema is the random model's noise, which
    ``read_structured`` rejects with the raw text kept."""
    async with OpenAiCompatibleChatClient(plain_server.base_url, backend="llamacpp") as client:
        response = await client.get_response(
            "Describe a city.", ChatOptions(max_output_tokens=40, seed=7)
        )
    with pytest.raises(StructuredOutputError) as caught:
        read_structured(City, response)
    assert caught.value.reason == "invalid_json"
    assert caught.value.text == response.text.strip()

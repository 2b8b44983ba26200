"""Structured output (issue 22 part 6): ``ChatResponseFormat.for_type`` and ``get_response_as``.

The schema of each kind of type (model, dataclass, TypedDict, non-object types wrapped), strict
where OpenAI's strict mode allows it; the answer read back through every client, a fence or a
think block stripped; invalid JSON and a schema mismatch as ``StructuredOutputError`` with the
raw text and the whole response. The per-backend request fields are in
``test_structured_output_requests.py``.
"""

from __future__ import annotations

import enum
import json
import pickle
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import respx
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from providers import (
    ChatClientBuilder,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseFormat,
    ConfigurationError,
    FallbackChatClient,
    OpenAiCompatibleChatClient,
    OpenAiCompatibleResponsesClient,
    ProviderError,
    StructuredOutputError,
    StructuredResponse,
    create_chat_client,
    get_response_as,
)
from providers.abstractions.structured_output import read_structured

BASE = "http://llm.test"
CHAT = f"{BASE}/v1/chat/completions"


class Address(BaseModel):
    city: str


class Person(BaseModel):
    """Someone the model read about."""

    name: str = Field(max_length=20)
    age: int = Field(ge=0, le=150)
    nickname: str | None = None
    home: Address = Field(description="Where they live.")
    tags: list[str] = []


@dataclass
class Point:
    x: int
    y: int


class Movie(TypedDict):
    title: str
    year: int


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Tally(BaseModel):
    counts: dict[str, int]


def schema_of(output_type: Any, **kwargs: Any) -> dict[str, Any]:
    return dict(ChatResponseFormat.for_type(output_type, **kwargs).schema or {})


# --- for_type ----------------------------------------------------------------------------------


def test_a_pydantic_model_is_named_described_and_strict() -> None:
    fmt = ChatResponseFormat.for_type(Person)
    assert (fmt.kind, fmt.schema_name, fmt.strict) == ("json_schema", "Person", True)
    assert fmt.schema_description == "Someone the model read about."
    schema = dict(fmt.schema or {})
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    # strict mode: every property required, the optional one as nullable, no defaults
    assert schema["required"] == ["name", "age", "nickname", "home", "tags"]
    assert {"type": "null"} in schema["properties"]["nickname"]["anyOf"]
    assert "default" not in json.dumps(schema["properties"])
    # a $ref with a sibling (the description) is inlined, and the nested object closed too
    home = schema["properties"]["home"]
    assert "$ref" not in home and home["description"] == "Where they live."
    assert home["additionalProperties"] is False and home["required"] == ["city"]
    assert schema["$defs"]["Address"]["additionalProperties"] is False
    assert schema["properties"]["age"]["maximum"] == 150  # constraints kept for grammars


def test_to_openai_writes_strict_and_description_only_when_set() -> None:
    fmt = ChatResponseFormat.for_type(Point)
    assert fmt.to_openai() == {
        "type": "json_schema",
        "json_schema": {"name": "Point", "schema": fmt.schema, "strict": True},
    }
    plain = ChatResponseFormat.json_schema({"type": "object"}, "out")
    assert plain.to_openai() == {
        "type": "json_schema",
        "json_schema": {"name": "out", "schema": {"type": "object"}},
    }


@pytest.mark.parametrize(
    ("output_type", "name", "properties"),
    [(Point, "Point", ["x", "y"]), (Movie, "Movie", ["title", "year"])],
    ids=["dataclass", "typeddict"],
)
def test_object_types_are_sent_as_they_are(
    output_type: Any, name: str, properties: list[str]
) -> None:
    fmt = ChatResponseFormat.for_type(output_type)
    schema = dict(fmt.schema or {})
    assert fmt.schema_name == name and fmt.strict is True
    assert list(schema["properties"]) == properties == schema["required"]
    assert schema["additionalProperties"] is False


@pytest.mark.parametrize(
    ("output_type", "name", "inner"),
    [
        (list[int], "list_int", {"type": "array", "items": {"type": "integer"}}),
        (str, "str", {"type": "string"}),
        (int | None, "int_or_None", {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
    ],
    ids=["list", "str", "optional-int"],
)
def test_non_object_types_are_wrapped_in_data(output_type: Any, name: str, inner: Any) -> None:
    fmt = ChatResponseFormat.for_type(output_type)
    schema = dict(fmt.schema or {})
    assert fmt.schema_name == name and fmt.strict is True
    assert schema["type"] == "object" and schema["required"] == ["data"]
    assert schema["additionalProperties"] is False
    data = {k: v for k, v in schema["properties"]["data"].items() if k != "title"}
    assert data == inner


def test_an_enum_is_wrapped_and_its_values_kept() -> None:
    schema = schema_of(Color)
    assert schema["required"] == ["data"]
    assert schema["$defs"]["Color"]["enum"] == ["red", "blue"]


def test_a_schema_that_must_stay_open_is_sent_without_strict() -> None:
    fmt = ChatResponseFormat.for_type(Tally)
    assert fmt.strict is None and "strict" not in fmt.to_openai()["json_schema"]
    assert fmt.schema == Tally.model_json_schema()  # pydantic's, untouched
    with pytest.raises(ConfigurationError, match="cannot be strict"):
        ChatResponseFormat.for_type(Tally, strict=True)


def test_strict_false_sends_pydantics_schema_as_is() -> None:
    fmt = ChatResponseFormat.for_type(Person, strict=False)
    assert fmt.strict is False and fmt.schema == Person.model_json_schema()
    assert fmt.to_openai()["json_schema"]["strict"] is False


def test_name_and_description_can_be_given() -> None:
    fmt = ChatResponseFormat.for_type(Point, name="where", description="A point.")
    assert (fmt.schema_name, fmt.schema_description) == ("where", "A point.")


def test_a_type_without_a_schema_is_a_configuration_error() -> None:
    class Opaque:
        pass

    with pytest.raises(ConfigurationError, match="no JSON Schema for Opaque"):
        ChatResponseFormat.for_type(Opaque)


def test_the_format_round_trips_through_an_openai_request_dict() -> None:
    fmt = ChatResponseFormat.for_type(Person, description="x")
    request = {"messages": [], "response_format": fmt.to_openai()}
    options = ChatOptions.from_openai(request)
    assert options.response_format == fmt
    assert options.additional_properties == {}
    assert options.to_openai() == {"response_format": fmt.to_openai()}


# --- get_response_as ---------------------------------------------------------------------------

ALICE = {
    "name": "Alice",
    "age": 30,
    "nickname": None,
    "home": {"city": "Oslo"},
    "tags": ["pilot"],
}


def completion(content: str | None, finish: str = "stop") -> httpx.Response:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    body = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12},
    }
    return httpx.Response(200, json=body)


def sent(route: respx.Route) -> dict[str, Any]:
    return json.loads(route.calls.last.request.content)  # type: ignore[no-any-return]


@respx.mock
async def test_a_validated_instance_and_the_whole_response() -> None:
    route = respx.post(CHAT).mock(return_value=completion(json.dumps(ALICE)))
    async with OpenAiCompatibleChatClient(BASE, "m") as client:
        result = await client.get_response_as(Person, "Who is Alice?", ChatOptions(temperature=0.1))
    assert isinstance(result, StructuredResponse)
    assert result.value == Person.model_validate(ALICE)
    assert isinstance(result.value.home, Address)
    assert result.response.usage is not None and result.response.usage.total_token_count == 12
    assert result.text == json.dumps(ALICE)
    body = sent(route)
    assert body["stream"] is False  # one request, no stream
    assert body["temperature"] == 0.1  # the caller's options are kept
    assert body["response_format"] == ChatResponseFormat.for_type(Person).to_openai()


@respx.mock
async def test_the_callers_response_format_is_replaced_by_the_types() -> None:
    route = respx.post(CHAT).mock(return_value=completion('{"x": 1, "y": 2}'))
    options = ChatOptions(response_format=ChatResponseFormat.JSON)
    async with OpenAiCompatibleChatClient(BASE, "m") as client:
        result = await client.get_response_as(Point, "where?", options)
    assert result.value == Point(1, 2)
    assert sent(route)["response_format"]["json_schema"]["name"] == "Point"
    assert options.response_format is ChatResponseFormat.JSON  # the caller's object untouched


@pytest.mark.parametrize(
    ("output_type", "answer", "value"),
    [
        (list[int], '{"data": [1, 2, 3]}', [1, 2, 3]),
        (str, '{"data": "hello"}', "hello"),
        (Color, '{"data": "blue"}', Color.BLUE),
        (Movie, '{"title": "Heat", "year": 1995}', {"title": "Heat", "year": 1995}),
    ],
    ids=["list", "str", "enum", "typeddict"],
)
@respx.mock
async def test_wrapped_values_are_unwrapped(output_type: Any, answer: str, value: Any) -> None:
    respx.post(CHAT).mock(return_value=completion(answer))
    async with OpenAiCompatibleChatClient(BASE, "m") as client:
        result = await client.get_response_as(output_type, "go")
    assert result.value == value


@pytest.mark.parametrize(
    "answer",
    [
        "```json\n" + json.dumps(ALICE, indent=2) + "\n```",
        "Here it is:\n\n```\n" + json.dumps(ALICE) + "\n```\nAnything else?",
        "<think>\nThe user wants JSON.\n</think>\n\n" + json.dumps(ALICE),
        "\n  " + json.dumps(ALICE) + "\n",
    ],
    ids=["json-fence", "bare-fence-in-prose", "think-block", "whitespace"],
)
@respx.mock
async def test_a_fence_or_a_think_block_is_stripped(answer: str) -> None:
    respx.post(CHAT).mock(return_value=completion(answer))
    async with OpenAiCompatibleChatClient(BASE, "m") as client:
        result = await client.get_response_as(Person, "go")
    assert result.value.name == "Alice"


@respx.mock
async def test_a_fence_inside_a_json_string_is_data() -> None:
    answer = json.dumps({"data": "```json\n{}\n```"})
    respx.post(CHAT).mock(return_value=completion(answer))
    async with OpenAiCompatibleChatClient(BASE, "m") as client:
        result = await client.get_response_as(str, "go")
    assert result.value == "```json\n{}\n```"


@respx.mock
async def test_invalid_json_is_a_typed_error_with_the_raw_text() -> None:
    answer = '{"name": "Alice", "age": 30, "home": {"ci'
    respx.post(CHAT).mock(return_value=completion(answer, finish="length"))
    async with OpenAiCompatibleChatClient(BASE, "m") as client:
        with pytest.raises(StructuredOutputError) as caught:
            await client.get_response_as(Person, "go")
    error = caught.value
    assert isinstance(error, ProviderError)
    assert error.reason == "invalid_json"
    assert error.text == answer
    assert error.response.text == answer and error.partial_response is error.response
    assert error.response.usage is not None  # nothing lost
    assert "Person" in str(error) and "length" in str(error)
    assert "Alice" not in str(error)  # the message never quotes the answer


@respx.mock
async def test_a_schema_mismatch_names_each_problem_without_the_values() -> None:
    answer = json.dumps({**ALICE, "age": "very old", "home": {}})
    respx.post(CHAT).mock(return_value=completion(answer))
    async with OpenAiCompatibleChatClient(BASE, "m") as client:
        with pytest.raises(StructuredOutputError) as caught:
            await client.get_response_as(Person, "go")
    error = caught.value
    assert error.reason == "schema_mismatch"
    assert error.text == answer
    assert [p.split(":")[0] for p in error.problems] == ["age", "home.city"]
    assert "very old" not in str(error)
    restored = pickle.loads(pickle.dumps(error))
    assert (restored.text, restored.reason, restored.problems) == (
        error.text,
        error.reason,
        error.problems,
    )


@respx.mock
async def test_a_wrapped_mismatch_is_located_inside_the_value() -> None:
    respx.post(CHAT).mock(return_value=completion('{"data": [1, "two"]}'))
    async with OpenAiCompatibleChatClient(BASE, "m") as client:
        with pytest.raises(StructuredOutputError) as caught:
            await client.get_response_as(list[int], "go")
    assert caught.value.problems[0].startswith("1: ")


@respx.mock
async def test_an_answer_without_text_is_invalid_json() -> None:
    respx.post(CHAT).mock(return_value=completion(None))
    async with OpenAiCompatibleChatClient(BASE, "m") as client:
        with pytest.raises(StructuredOutputError) as caught:
            await client.get_response_as(Person, "go")
    assert caught.value.reason == "invalid_json" and caught.value.text == ""


@respx.mock
async def test_the_standard_pipeline_and_the_builder_offer_it() -> None:
    respx.post(CHAT).mock(return_value=completion('{"x": 3, "y": 4}'))
    pipeline = create_chat_client(BASE, "m", backend="llamacpp", retry=None)
    try:
        result = await pipeline.get_response_as(Point, "go")  # type: ignore[attr-defined]
    finally:
        await pipeline.aclose()
    assert result.value == Point(3, 4)
    built = ChatClientBuilder(OpenAiCompatibleChatClient(BASE, "m")).use_retry().build()
    try:
        result = await built.get_response_as(Point, "go")  # type: ignore[attr-defined]
        assert result.value == Point(3, 4)
        # typed for any ChatClient, the caller's own included: the function
        assert (await get_response_as(built, Point, "go")).value == Point(3, 4)
    finally:
        await built.aclose()


@respx.mock
async def test_the_fallback_client_validates_the_fallbacks_answer() -> None:
    respx.post(CHAT).mock(return_value=httpx.Response(503, json={"error": "down"}))
    other = "http://other.test/v1/chat/completions"
    route = respx.post(other).mock(return_value=completion('{"x": 5, "y": 6}'))
    client = FallbackChatClient(
        OpenAiCompatibleChatClient(BASE, "m"),
        OpenAiCompatibleChatClient("http://other.test", "m"),
    )
    async with client:
        result = await client.get_response_as(Point, "go")
    assert result.value == Point(5, 6)
    assert sent(route)["response_format"]["json_schema"]["name"] == "Point"


@respx.mock
async def test_the_responses_client_asks_with_text_format() -> None:
    output = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": '{"x": 7, "y": 8}'}],
    }
    body = {
        "id": "resp_1",
        "object": "response",
        "model": "m",
        "created_at": 1,
        "status": "completed",
        "output": [output],
    }
    route = respx.post(f"{BASE}/v1/responses").mock(return_value=httpx.Response(200, json=body))
    async with OpenAiCompatibleResponsesClient(BASE, "m") as client:
        result = await client.get_response_as(Point, "go")
    assert result.value == Point(7, 8)
    text_format = sent(route)["text"]["format"]
    assert text_format["type"] == "json_schema" and text_format["name"] == "Point"
    assert text_format["strict"] is True
    assert text_format["schema"] == ChatResponseFormat.for_type(Point).schema


def test_read_structured_reads_a_response_the_caller_made() -> None:
    response = ChatResponse.from_updates([])
    with pytest.raises(StructuredOutputError):
        read_structured(Point, response)
    answered = ChatResponse(messages=[ChatMessage.assistant('{"data": [4]}')])
    assert read_structured(list[int], answered) == [4]

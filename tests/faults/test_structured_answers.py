"""Issue 32 items 5 and 6: structured output never returns a value the final answer did not say.

Item 5: through the tool loop a response holds every turn. When an earlier turn wrote JSON
beside its call and the final turn has no text (it reasoned until ``length``), the earlier JSON
was returned as the answer; now the final turn is the only answer, and without text it is a
``StructuredOutputError`` that keeps the whole response.

Item 6: under a strict schema pydantic's lax mode turned ``{"celsius": true}`` into
``celsius=1`` and ``[1, true, 3]`` into ``[1, 1, 3]``; now the answer's JSON types must be the
schema's, and only a format sent with ``strict=False`` is read leniently.

Through the real wire client over a real socket, and the real tool loop.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

from providers import (
    AIFunction,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseFormat,
    ChatRole,
    ConstraintViolationError,
    FunctionInvokingChatClient,
    OpenAiCompatibleChatClient,
    StructuredOutputError,
)
from providers.abstractions.structured_output import get_response_as, read_structured
from tests.faults.helpers import DONE, FAST, PROMPT, ROLE, consume, stream_reply, whole
from tests.faults.server import FaultServer, Reply, chunk, sse


class Weather(BaseModel):
    celsius: int


class Tally(BaseModel):
    """A schema that cannot be strict (an open dict): sent without the flag."""

    counts: dict[str, int]
    total: int


async def get_weather(city: str) -> str:
    """Current weather in a city."""
    return "sunny, 21 degrees"


TOOLS = ChatOptions(tools=[AIFunction.from_callable(get_weather)])


def _completion(message: dict[str, Any], finish: str) -> Reply:
    choice = {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
    body = {"id": "c", "object": "chat.completion", "model": "m", "choices": [choice]}
    return whole(json.dumps(body).encode())


def _calling_with_json_beside() -> Reply:
    """A first turn that writes a plausible answer *and* calls the tool."""
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    return _completion({"content": '{"celsius": 5}', "tool_calls": [call]}, "tool_calls")


def _answer(content: str | None, finish: str = "stop", reasoning: str | None = None) -> Reply:
    message: dict[str, Any] = {"content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return _completion(message, finish)


async def _ask(script: list[Reply], output_type: Any, options: ChatOptions | None) -> Any:
    async with (
        FaultServer(script) as server,
        OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST) as wire,
    ):
        loop = FunctionInvokingChatClient(wire)
        return await get_response_as(loop, output_type, PROMPT, options)


# --- item 5: the final turn is the answer -------------------------------------------------------


@pytest.mark.parametrize(
    "final",
    [
        pytest.param(_answer(None, "length", reasoning="Let me think about Paris"), id="reasoned"),
        pytest.param(_answer("", "length"), id="empty-text"),
        pytest.param(_answer("  \n", "stop"), id="whitespace"),
    ],
)
async def test_a_final_turn_without_text_is_an_error_not_an_earlier_turns_json(
    final: Reply,
) -> None:
    with pytest.raises(StructuredOutputError) as info:
        await _ask([_calling_with_json_beside(), final], Weather, TOOLS)
    error = info.value
    assert error.reason == "invalid_json" and error.text == ""
    # nothing is lost: the whole exchange is on the error, the earlier JSON included
    roles = [message.role for message in error.response.messages]
    assert roles == [ChatRole.ASSISTANT, ChatRole.TOOL, ChatRole.ASSISTANT]
    assert error.response.messages[0].text == '{"celsius": 5}'
    assert error.partial_response is error.response


async def test_the_final_turns_json_is_the_answer_when_it_has_one() -> None:
    result = await _ask([_calling_with_json_beside(), _answer('{"celsius": 21}')], Weather, TOOLS)
    assert result.value == Weather(celsius=21)
    assert result.text == '{"celsius": 21}'


def _streamed_turns(final_text: str | None) -> list[Reply]:
    """The same two turns streamed: JSON and a call, then the final turn."""
    call = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    first = stream_reply(
        ROLE,
        sse(chunk({"content": '{"celsius": 5}'})),
        sse(chunk({"tool_calls": [call]})),
        sse(chunk({}, "tool_calls")),
        DONE,
    )
    final = [sse(chunk({"reasoning_content": "Let me think"}))]
    if final_text is not None:
        final.append(sse(chunk({"content": final_text})))
    finish = "length" if final_text is None else "stop"
    return [first, stream_reply(ROLE, *final, sse(chunk({}, finish)), DONE)]


@pytest.mark.parametrize(("final_text", "expected"), [(None, None), ('{"celsius": 21}', 21)])
async def test_a_streamed_loop_coalesced_by_from_updates_reads_its_final_turn_only(
    final_text: str | None, expected: int | None
) -> None:
    """Coalesced, a streamed loop is one message with the results inline: the boundary is
    found among its contents. A final turn without JSON also ends the stream with the wire
    client's ``ConstraintViolationError`` (issue 33), once every update has reached the caller."""
    async with (
        FaultServer(_streamed_turns(final_text)) as server,
        OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST) as wire,
    ):
        loop = FunctionInvokingChatClient(wire)
        asked = ChatOptions(tools=TOOLS.tools, response_format=ChatResponseFormat.for_type(Weather))
        updates, error = await consume(loop.get_streaming_response(PROMPT, asked))
    response = ChatResponse.from_updates(updates)
    if expected is None:
        assert isinstance(error, ConstraintViolationError)
        assert error.constraint == "json_schema" and "cut short" in error.problem
        assert error.response.finish_reason == "length"
        with pytest.raises(StructuredOutputError) as info:
            read_structured(Weather, response)
        assert info.value.text == "" and '{"celsius": 5}' in info.value.response.text
    else:
        assert error is None
        assert read_structured(Weather, response) == Weather(celsius=expected)


async def test_a_loop_that_ends_on_tool_results_has_no_answer() -> None:
    """Stopped by ``max_consecutive_errors``, the response ends with a tool message: there is
    no final answer, whatever JSON the turns before wrote."""
    bad_call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "no_such_tool", "arguments": "{}"},
    }
    turn = _completion({"content": '{"celsius": 5}', "tool_calls": [bad_call]}, "tool_calls")
    async with (
        FaultServer([turn]) as server,
        OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST) as wire,
    ):
        loop = FunctionInvokingChatClient(wire, max_consecutive_errors=0)
        with pytest.raises(StructuredOutputError) as info:
            await get_response_as(loop, Weather, PROMPT, TOOLS)
    assert info.value.response.messages[-1].role == ChatRole.TOOL


# --- item 6: strict types under a strict schema ------------------------------------------------


@pytest.mark.parametrize(
    ("output_type", "text"),
    [
        pytest.param(Weather, '{"celsius": true}', id="bool-for-int"),
        pytest.param(Weather, '{"celsius": "20"}', id="string-for-int"),
        pytest.param(Weather, '{"celsius": 20.0}', id="float-for-int"),
        pytest.param(list[int], '{"data": [1, true, 3]}', id="bool-in-a-wrapped-list"),
        pytest.param(Tally, '{"counts": {"a": 1}, "total": true}', id="open-schema-no-flag"),
    ],
)
async def test_a_value_of_another_json_type_is_a_schema_mismatch(
    output_type: Any, text: str
) -> None:
    with pytest.raises(StructuredOutputError) as info:
        await _ask([_answer(text)], output_type, None)
    assert info.value.reason == "schema_mismatch"
    assert info.value.text == text


async def test_a_strict_schema_still_reads_every_value_of_its_types() -> None:
    result = await _ask([_answer('{"data": [1, 2, 3]}')], list[int], None)
    assert result.value == [1, 2, 3]


def test_only_a_format_sent_without_strict_is_read_leniently() -> None:
    response = ChatResponse([ChatMessage.assistant('{"celsius": "20"}')])
    assert ChatResponseFormat.for_type(Weather, strict=False).strict is False
    assert read_structured(Weather, response, strict=False) == Weather(celsius=20)
    with pytest.raises(StructuredOutputError):
        read_structured(Weather, response)

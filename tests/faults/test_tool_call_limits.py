"""Issue #20's bounds on tool calls and held text: past a ``Limits`` field, a typed
``ResponseTooLargeError`` naming it, with the partial response, instead of unbounded memory.

The wire clients run with the default limits here (their ``limits`` keyword is wired by the
clients' constructors); the text-recovery layer takes its own ``limits``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers import (
    ChatOptions,
    ChatResponse,
    FunctionCallContent,
    Limits,
    OpenAiCompatibleChatClient,
    ResponseTooLargeError,
    TextRecoveryChatClient,
    ToolDeclaration,
)
from providers.abstractions.limits import DEFAULT_LIMITS
from providers.responses import OpenAiCompatibleResponsesClient
from tests.faults.helpers import DONE, FAST, PROMPT, ROLE, TOOL_DONE, consume, stream_reply
from tests.faults.server import FaultServer, Reply, chunk, sse

WEATHER = ToolDeclaration("get_weather", parameters={"type": "object", "properties": {}})
OFFERED = ChatOptions(tools=[WEATHER])
MiB = 1024 * 1024


def _calls(response: ChatResponse | None) -> list[FunctionCallContent]:
    assert response is not None
    return [c for m in response.messages for c in m.contents if isinstance(c, FunctionCallContent)]


def _entry(index: int, arguments: str, *, head: bool = True) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if head:
        function["name"] = "get_weather"
    entry: dict[str, Any] = {"index": index, "function": function}
    if head:
        entry.update(id=f"call_{index}", type="function")
    return entry


async def _chat_stream(reply: Reply) -> tuple[list[Any], Any]:
    async with (
        FaultServer([reply]) as server,
        OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST) as client,
    ):
        return await consume(client.get_streaming_response(PROMPT, OFFERED))


async def test_more_streamed_tool_calls_than_the_limit_raise_with_the_partial_response() -> None:
    count = DEFAULT_LIMITS.max_tool_calls + 1
    calls = sse(chunk({"tool_calls": [_entry(i, "{}") for i in range(count)]}))
    _, error = await _chat_stream(stream_reply(ROLE, calls, TOOL_DONE, DONE))
    assert isinstance(error, ResponseTooLargeError)
    assert error.limit == "max_tool_calls"
    assert error.partial_response is not None
    assert len(_calls(error.partial_response)) <= DEFAULT_LIMITS.max_tool_calls


async def test_tool_argument_text_over_the_limit_raises_with_the_partial_response() -> None:
    piece = '"' + "x" * (MiB - 2) + '"'
    pieces = [sse(chunk({"tool_calls": [_entry(0, '{"a": [')]}))]
    steps = DEFAULT_LIMITS.max_tool_argument_bytes // MiB + 1
    pieces += [sse(chunk({"tool_calls": [_entry(0, piece + ",", head=False)]}))] * steps
    _, error = await _chat_stream(stream_reply(ROLE, *pieces, TOOL_DONE, DONE))
    assert isinstance(error, ResponseTooLargeError)
    assert error.limit == "max_tool_argument_bytes"
    [call] = _calls(error.partial_response)
    assert call.error is not None  # cut short: never to be executed
    assert len(call.raw_arguments) <= DEFAULT_LIMITS.max_tool_argument_bytes


def _event(payload: dict[str, Any]) -> bytes:
    return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode()


def _added(index: int) -> bytes:
    item = {"type": "function_call", "id": f"fc_{index}", "call_id": f"c{index}", "name": "f"}
    return _event({"type": "response.output_item.added", "output_index": index, "item": item})


async def _responses_stream(pieces: list[bytes]) -> tuple[list[Any], Any]:
    created = {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}
    reply = stream_reply(_event({"type": "response.created", "response": created}), *pieces)
    async with (
        FaultServer([reply]) as server,
        OpenAiCompatibleResponsesClient(server.base_url, "m", timeouts=FAST) as client,
    ):
        return await consume(client.get_streaming_response(PROMPT, OFFERED))


async def test_more_responses_calls_than_the_limit_raise() -> None:
    pieces = [_added(i) for i in range(DEFAULT_LIMITS.max_tool_calls + 1)]
    _, error = await _responses_stream(pieces)
    assert isinstance(error, ResponseTooLargeError)
    assert error.limit == "max_tool_calls"
    assert error.partial_response is not None


async def test_responses_argument_text_over_the_limit_raises() -> None:
    delta = {
        "type": "response.function_call_arguments.delta",
        "output_index": 0,
        "item_id": "fc_0",
        "delta": "x" * MiB,
    }
    steps = DEFAULT_LIMITS.max_tool_argument_bytes // MiB + 1
    _, error = await _responses_stream([_added(0), *[_event(delta)] * steps])
    assert isinstance(error, ResponseTooLargeError)
    assert error.limit == "max_tool_argument_bytes"
    [call] = _calls(error.partial_response)
    assert call.error is not None


# --- the text-recovery layer ------------------------------------------------------------------


def _content_stream(*texts: str) -> Reply:
    pieces = [sse(chunk({"content": text})) for text in texts]
    return stream_reply(ROLE, *pieces, sse(chunk({}, "stop")), DONE)


async def _recover(reply: Reply, limits: Limits) -> tuple[list[Any], Any]:
    async with (
        FaultServer([reply]) as server,
        TextRecoveryChatClient(
            OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST), limits=limits
        ) as client,
    ):
        return await consume(client.get_streaming_response(PROMPT, OFFERED))


@pytest.mark.parametrize(
    "opening", ["<tool_call>", "<think>Let me see. <tool_call>"], ids=["call", "in-think"]
)
async def test_an_unclosed_block_held_past_the_limit_raises(opening: str) -> None:
    before = [f"w{i} " for i in range(300)]  # (more than one run of gathered texts)
    call = '{"name": "get_weather", "arguments": "'
    texts = [*before, opening, call, *["y" * 100] * 30]
    updates, error = await _recover(_content_stream(*texts), Limits(max_held_text_bytes=1000))
    assert isinstance(error, ResponseTooLargeError)
    assert error.limit == "max_held_text_bytes"
    sent = "".join(before).rstrip()
    assert "".join(u.text for u in updates).startswith(sent)  # what came before went out
    partial = error.partial_response
    assert partial is not None
    assert partial.text.startswith(sent)  # and is in the partial response, with
    assert "yyyy" in partial.text + partial.reasoning  # the held text, not lost either
    assert _calls(partial) == []


async def test_recovered_calls_past_the_limit_raise() -> None:
    call = '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>'
    reply = _content_stream(*[call] * 4)
    _, error = await _recover(reply, Limits(max_tool_calls=3))
    assert isinstance(error, ResponseTooLargeError)
    assert error.limit == "max_tool_calls"
    calls = _calls(error.partial_response)
    assert [c.error is None for c in calls] == [True, True, True, False]  # kept, not executable

"""Issue #20: a tool call reaches the caller without ``error`` only if it is safe to execute.

Through the real wire clients over a real socket: a call the server structured itself naming a
tool the request did not offer carries ``error`` (chat and Responses, streamed and whole); a
call the text-recovery layer reads out of ``<think>`` or out of a Markdown code fence is no
call at all; and a call that looks complete in the partial response of a broken stream carries
``error``, since nothing said it was finished.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers import (
    ChatFinishReason,
    ChatOptions,
    ChatResponse,
    FunctionCallContent,
    OpenAiCompatibleChatClient,
    StreamInterruptedError,
    TextRecoveryChatClient,
    ToolDeclaration,
)
from providers.responses import OpenAiCompatibleResponsesClient
from tests.faults.helpers import DONE, FAST, PROMPT, ROLE, TOOL_DONE, consume, stream_reply, whole
from tests.faults.server import GATE, FaultServer, Reply, chunk, sse

WEATHER = ToolDeclaration("get_weather", parameters={"type": "object", "properties": {}})
OFFERED = ChatOptions(tools=[WEATHER])


def _call_chunk(name: str, arguments: str = '{"path": "/"}') -> bytes:
    entry = {
        "index": 0,
        "id": "call_1",
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }
    return sse(chunk({"tool_calls": [entry]}))


def _completion(name: str) -> bytes:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": name, "arguments": '{"path": "/"}'},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
    return json.dumps({"id": "c", "object": "chat.completion", "choices": [choice]}).encode()


def _calls(response: ChatResponse | None) -> list[FunctionCallContent]:
    assert response is not None
    return [c for m in response.messages for c in m.contents if isinstance(c, FunctionCallContent)]


async def _chat(reply: Reply, options: ChatOptions | None, *, stream: bool) -> ChatResponse:
    async with (
        FaultServer([reply]) as server,
        OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST) as client,
    ):
        if not stream:
            return await client.get_response(PROMPT, options)
        updates, error = await consume(client.get_streaming_response(PROMPT, options))
        assert error is None
        return ChatResponse.from_updates(updates)


NOT_OFFERED = [
    pytest.param(OFFERED, id="other-tool-offered"),
    pytest.param(None, id="no-options"),
    pytest.param(ChatOptions(tools=[]), id="empty-tools"),
]


@pytest.mark.parametrize("options", NOT_OFFERED)
async def test_a_streamed_server_call_to_a_tool_not_offered_carries_an_error(
    options: ChatOptions | None,
) -> None:
    reply = stream_reply(ROLE, _call_chunk("delete_everything"), TOOL_DONE, DONE)
    response = await _chat(reply, options, stream=True)
    [call] = _calls(response)
    assert (call.name, call.arguments) == ("delete_everything", {"path": "/"})  # surfaced, kept
    assert call.error is not None
    assert "delete_everything" in call.error


@pytest.mark.parametrize("options", NOT_OFFERED)
async def test_a_whole_server_call_to_a_tool_not_offered_carries_an_error(
    options: ChatOptions | None,
) -> None:
    response = await _chat(whole(_completion("delete_everything")), options, stream=False)
    [call] = _calls(response)
    assert call.name == "delete_everything"
    assert call.error is not None


@pytest.mark.parametrize("stream", [True, False])
async def test_a_server_call_to_an_offered_tool_is_executable(stream: bool) -> None:
    reply = (
        stream_reply(ROLE, _call_chunk("get_weather"), TOOL_DONE, DONE)
        if stream
        else whole(_completion("get_weather"))
    )
    response = await _chat(reply, OFFERED, stream=stream)
    [call] = _calls(response)
    assert (call.name, call.error) == ("get_weather", None)
    assert response.finish_reason == ChatFinishReason.TOOL_CALLS


# --- the Responses API ----------------------------------------------------------------------


def _event(payload: dict[str, Any]) -> bytes:
    return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode()


def _responses_call_events(name: str) -> list[bytes]:
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": name}
    done = {**item, "arguments": '{"path": "/"}', "status": "completed"}
    response = {"id": "resp_1", "object": "response", "status": "completed", "output": [done]}
    return [
        _event({"type": "response.created", "response": {**response, "output": []}}),
        _event({"type": "response.output_item.added", "output_index": 0, "item": item}),
        _event(
            {
                "type": "response.function_call_arguments.delta",
                "output_index": 0,
                "item_id": "fc_1",
                "delta": '{"path": "/"}',
            }
        ),
        _event({"type": "response.output_item.done", "output_index": 0, "item": done}),
        _event({"type": "response.completed", "response": response}),
    ]


def _responses_body(name: str) -> bytes:
    done = {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": name,
        "arguments": '{"path": "/"}',
        "status": "completed",
    }
    response = {"id": "resp_1", "object": "response", "status": "completed", "output": [done]}
    return json.dumps(response).encode()


@pytest.mark.parametrize("options", NOT_OFFERED)
@pytest.mark.parametrize("stream", [True, False])
async def test_a_responses_call_to_a_tool_not_offered_carries_an_error(
    options: ChatOptions | None, stream: bool
) -> None:
    reply = (
        stream_reply(*_responses_call_events("delete_everything"))
        if stream
        else whole(_responses_body("delete_everything"))
    )
    async with (
        FaultServer([reply]) as server,
        OpenAiCompatibleResponsesClient(server.base_url, "m", timeouts=FAST) as client,
    ):
        if stream:
            updates, error = await consume(client.get_streaming_response(PROMPT, options))
            assert error is None
            response = ChatResponse.from_updates(updates)
        else:
            response = await client.get_response(PROMPT, options)
    [call] = _calls(response)
    assert (call.name, call.arguments) == ("delete_everything", {"path": "/"})
    assert call.error is not None


@pytest.mark.parametrize("stream", [True, False])
async def test_a_responses_call_to_an_offered_tool_is_executable(stream: bool) -> None:
    reply = (
        stream_reply(*_responses_call_events("get_weather"))
        if stream
        else whole(_responses_body("get_weather"))
    )
    async with (
        FaultServer([reply]) as server,
        OpenAiCompatibleResponsesClient(server.base_url, "m", timeouts=FAST) as client,
    ):
        if stream:
            updates, error = await consume(client.get_streaming_response(PROMPT, OFFERED))
            assert error is None
            response = ChatResponse.from_updates(updates)
        else:
            response = await client.get_response(PROMPT, OFFERED)
    [call] = _calls(response)
    assert (call.name, call.error) == ("get_weather", None)


# --- calls the text-recovery layer must not make ----------------------------------------------

HERMES = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'


def _content_stream(*texts: str) -> Reply:
    pieces = [sse(chunk({"content": text})) for text in texts]
    return stream_reply(ROLE, *pieces, sse(chunk({}, "stop")), DONE)


def _content_whole(text: str) -> Reply:
    message = {"role": "assistant", "content": text}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    body = {"id": "c", "object": "chat.completion", "choices": [choice]}
    return whole(json.dumps(body).encode())


async def _recovered(texts: list[str], options: ChatOptions | None, *, stream: bool) -> Any:
    reply = _content_stream(*texts) if stream else _content_whole("".join(texts))
    async with (
        FaultServer([reply]) as server,
        TextRecoveryChatClient(
            OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST)
        ) as client,
    ):
        if not stream:
            return await client.get_response(PROMPT, options)
        updates, error = await consume(client.get_streaming_response(PROMPT, options))
        assert error is None
        return ChatResponse.from_updates(updates)


@pytest.mark.parametrize("options", [None, ChatOptions(tools=[])], ids=["none", "empty"])
@pytest.mark.parametrize("stream", [True, False])
async def test_markup_with_no_tools_offered_stays_text(
    options: ChatOptions | None, stream: bool
) -> None:
    response = await _recovered(["Sure. ", HERMES[:20], HERMES[20:]], options, stream=stream)
    assert _calls(response) == []
    assert response.text == "Sure. " + HERMES
    assert response.finish_reason == ChatFinishReason.STOP


@pytest.mark.parametrize("stream", [True, False])
async def test_a_recovered_call_to_a_tool_not_offered_claims_no_tool_calls_finish(
    stream: bool,
) -> None:
    other = HERMES.replace("get_weather", "delete_everything")
    response = await _recovered(["Sure. ", other], OFFERED, stream=stream)
    [call] = _calls(response)
    assert call.name == "delete_everything"
    assert call.error is not None and "not offered" in call.error
    assert response.finish_reason == ChatFinishReason.STOP  # nothing to execute


@pytest.mark.parametrize("stream", [True, False])
async def test_a_call_inside_think_is_reasoning_and_so_is_what_follows(stream: bool) -> None:
    texts = ["<think>Maybe ", HERMES[:15], HERMES[15:], " No, just answer.", "</think>", "Hi."]
    response = await _recovered(texts, OFFERED, stream=stream)
    assert _calls(response) == []
    assert response.reasoning == f"Maybe {HERMES} No, just answer."
    assert response.text == "Hi."
    assert response.finish_reason == ChatFinishReason.STOP


@pytest.mark.parametrize("stream", [True, False])
async def test_a_call_without_closing_think_is_still_recovered_at_the_end(stream: bool) -> None:
    # Qwen3 and Kimi-K2 call tools without closing </think>: what follows the marker is the
    # answer once the stream ends without </think>.
    response = await _recovered(["<think>Weather. ", HERMES], OFFERED, stream=stream)
    [call] = _calls(response)
    assert (call.name, call.arguments, call.error) == ("get_weather", {"city": "Paris"}, None)
    assert response.reasoning == "Weather."
    assert response.finish_reason == ChatFinishReason.TOOL_CALLS


@pytest.mark.parametrize("stream", [True, False])
async def test_a_call_in_a_code_fence_is_quoted_text(stream: bool) -> None:
    texts = ["Call it like this:\n`", "``json\n", HERMES, "\n``", "`\nDone."]
    response = await _recovered(texts, OFFERED, stream=stream)
    assert _calls(response) == []
    assert response.text == "".join(texts)
    assert response.finish_reason == ChatFinishReason.STOP


# --- a broken stream ------------------------------------------------------------------------


async def test_a_complete_looking_call_cut_by_a_closed_stream_carries_an_error() -> None:
    reply = stream_reply(ROLE, _call_chunk("get_weather", '{"city": "Paris"}'), end="close")
    async with (
        FaultServer([reply]) as server,
        OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST) as client,
    ):
        updates, error = await consume(client.get_streaming_response(PROMPT, OFFERED))
    assert isinstance(error, StreamInterruptedError)
    [call] = _calls(error.partial_response)
    assert (call.name, call.arguments) == ("get_weather", {"city": "Paris"})
    assert call.error is not None
    assert _calls(ChatResponse.from_updates(updates)) == []  # only in the partial response


async def test_a_complete_looking_call_cut_by_a_reset_carries_an_error() -> None:
    reply = stream_reply(ROLE, _call_chunk("get_weather", '{"city": "Paris"}'), GATE, end="reset")
    async with (
        FaultServer([reply]) as server,
        OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST) as client,
    ):

        def step(update: Any) -> None:
            if update.raw and "tool_calls" in json.dumps(update.raw):
                server.release()  # the call's chunk arrived: now reset

        _, error = await consume(client.get_streaming_response(PROMPT, OFFERED), step)
    assert isinstance(error, StreamInterruptedError)
    [call] = _calls(error.partial_response)
    assert (call.name, call.arguments) == ("get_weather", {"city": "Paris"})
    assert call.error is not None


async def test_earlier_calls_of_a_cut_stream_were_finished() -> None:
    first = _call_chunk("get_weather", '{"city": "Paris"}')
    second = {"index": 1, "id": "call_2", "type": "function"}
    second["function"] = {"name": "get_weather", "arguments": '{"city": "Rome"}'}
    reply = stream_reply(ROLE, first, sse(chunk({"tool_calls": [second]})), end="close")
    async with (
        FaultServer([reply]) as server,
        OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST) as client,
    ):
        _, error = await consume(client.get_streaming_response(PROMPT, OFFERED))
    assert isinstance(error, StreamInterruptedError)
    done, cut = _calls(error.partial_response)
    assert (done.arguments, done.error) == ({"city": "Paris"}, None)  # the model moved on
    assert cut.arguments == {"city": "Rome"}
    assert cut.error is not None

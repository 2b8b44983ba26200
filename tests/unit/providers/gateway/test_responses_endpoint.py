"""``ResponsesEndpoint``: answers openai-python parses with its own models and helpers.

The pipeline is a scripted double; openai-python's real client talks to the endpoint through
an ``httpx2.MockTransport`` (openai-python 3 is built on httpx2) whose handler hands the
request to it, so what is checked is what an SDK caller gets: the typed ``Response``, the
typed stream events, ``responses.stream()``'s final response, and the status-typed exceptions.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx2
import openai
import pytest
from openai.types.responses import FunctionToolParam, Response, ResponseStreamEvent
from pydantic import TypeAdapter

from providers import (
    BackendUnavailableError,
    ChatFinishReason,
    ChatInput,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    FunctionCallContent,
    RateLimitError,
    TextContent,
    TextReasoningContent,
    UsageContent,
    UsageDetails,
)
from providers.gateway.responses_endpoint import ResponsesEndpoint
from providers.integrations._chat_endpoint import EndpointAnswer
from tests.unit.telemetry.helpers import FakeChatClient, streaming

EVENTS: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)


def usage() -> ChatResponseUpdate:
    details = UsageDetails(
        input_token_count=11,
        output_token_count=7,
        total_token_count=18,
        cached_input_token_count=4,
        reasoning_token_count=3,
    )
    return ChatResponseUpdate([UsageContent(details)])


def script() -> list[ChatResponseUpdate]:
    """Reasoning, text, a call, usage: what a thinking model's tool turn streams."""
    call = FunctionCallContent.from_json("call_1", "get_weather", '{"city": "Oslo"}')
    return [
        ChatResponseUpdate([TextReasoningContent("think ")]),
        ChatResponseUpdate([TextReasoningContent("hard")]),
        ChatResponseUpdate([TextContent("Hel")]),
        ChatResponseUpdate([TextContent("lo")]),
        ChatResponseUpdate([call]),
        usage(),
        ChatResponseUpdate(finish_reason=ChatFinishReason.TOOL_CALLS),
    ]


class Recorder:
    """The double's calls: messages and options of each."""

    def __init__(self) -> None:
        self.options: list[ChatOptions | None] = []
        self.closed: list[bool] = []


def endpoint_for(
    updates: Sequence[ChatResponseUpdate],
    *,
    error: BaseException | None = None,
    recorder: Recorder | None = None,
) -> ResponsesEndpoint:
    seen = recorder or Recorder()
    stream = streaming(updates, error=error, closed=seen.closed)

    def respond(messages: ChatInput, options: ChatOptions | None) -> ChatResponse:
        seen.options.append(options)
        if error is not None:
            raise error
        return ChatResponse.from_updates(updates)

    def streamer(messages: ChatInput, options: ChatOptions | None) -> AsyncIterator[Any]:
        seen.options.append(options)
        return stream(messages, options)

    return ResponsesEndpoint(FakeChatClient(stream=streamer, respond=respond), model="gw-model")


class _Body(httpx2.AsyncByteStream):
    def __init__(self, events: AsyncIterator[bytes]) -> None:
        self._events = events

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._events:
            yield chunk

    async def aclose(self) -> None:
        await self._events.aclose()  # type: ignore[attr-defined]


def sdk(endpoint: ResponsesEndpoint) -> openai.AsyncOpenAI:
    async def handler(request: httpx2.Request) -> httpx2.Response:
        answer = await endpoint.answer(await request.aread(), request.headers.items())
        if isinstance(answer.body, bytes):
            return httpx2.Response(answer.status, headers=answer.headers, content=answer.body)
        return httpx2.Response(answer.status, headers=answer.headers, stream=_Body(answer.body))

    transport = httpx2.MockTransport(handler)
    return openai.AsyncOpenAI(
        api_key="sk-test",
        base_url="http://gateway.test/v1",
        http_client=httpx2.AsyncClient(transport=transport),
        max_retries=0,
    )


async def call(endpoint: ResponsesEndpoint, **body: Any) -> EndpointAnswer:
    return await endpoint.answer(json.dumps({"model": "m", **body}).encode())


async def events_of(answer: EndpointAnswer) -> list[dict[str, Any]]:
    """Each event's data, checked against its ``event:`` line."""
    assert not isinstance(answer.body, bytes)
    raw = b"".join([chunk async for chunk in answer.body])
    events = []
    for block in raw.decode().split("\n\n")[:-1]:
        name_line, data_line = block.split("\n")
        data = json.loads(data_line.removeprefix("data: "))
        assert name_line == f"event: {data['type']}"
        events.append(data)
    return events


# --- non-streamed ------------------------------------------------------------------------------


async def test_the_answer_is_an_sdk_response_with_items_in_order() -> None:
    answer = await call(endpoint_for(script()), input="weather in Oslo?")
    assert answer.status == 200
    body = json.loads(answer.body)  # type: ignore[arg-type]
    response = Response.model_validate(body)
    assert response.id.startswith("resp_")
    assert (response.model, response.status, response.object) == (
        "gw-model",
        "completed",
        "response",
    )
    reasoning, message, function_call = response.output
    assert reasoning.type == "reasoning"
    assert [c.text for c in reasoning.content or ()] == ["think hard"]
    assert message.type == "message"
    assert response.output_text == "Hello"
    assert function_call.type == "function_call"
    assert (function_call.call_id, function_call.name) == ("call_1", "get_weather")
    assert json.loads(function_call.arguments) == {"city": "Oslo"}
    assert function_call.status == "completed"
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (11, 7)
    assert response.usage.input_tokens_details.cached_tokens == 4
    assert response.usage.output_tokens_details.reasoning_tokens == 3
    assert response.usage.total_tokens == 18


async def test_the_sdk_reads_the_answer_and_echoes_the_request() -> None:
    client = sdk(endpoint_for(script()))
    tool: FunctionToolParam = {
        "type": "function",
        "name": "get_weather",
        "parameters": {"type": "object"},
        "strict": False,
    }
    response = await client.responses.create(
        model="m", input="weather?", tools=[tool], temperature=0.5, metadata={"k": "v"}
    )
    assert response.output_text == "Hello"
    assert [item.type for item in response.output] == ["reasoning", "message", "function_call"]
    assert response.temperature == 0.5
    assert response.metadata == {"k": "v"}
    assert [t.name for t in response.tools] == ["get_weather"]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("finish", "reason"),
    [
        (ChatFinishReason.LENGTH, "max_output_tokens"),
        (ChatFinishReason.CONTENT_FILTER, "content_filter"),
    ],
)
async def test_a_cut_answer_is_incomplete_with_the_reason(
    finish: ChatFinishReason, reason: str
) -> None:
    updates = [ChatResponseUpdate([TextContent("par")]), ChatResponseUpdate(finish_reason=finish)]
    answer = await call(endpoint_for(updates), input="x")
    response = Response.model_validate_json(answer.body)  # type: ignore[arg-type]
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == reason
    assert response.output[0].status == "incomplete"  # type: ignore[union-attr]
    events = await events_of(await call(endpoint_for(updates), input="x", stream=True))
    assert events[-1]["type"] == "response.incomplete"
    assert events[-1]["response"]["incomplete_details"] == {"reason": reason}


async def test_an_error_is_its_status_in_openais_envelope() -> None:
    error = RateLimitError("slow down", status=429, retry_after=3)
    answer = await call(endpoint_for([], error=error), input="x")
    assert answer.status == 429
    assert ("retry-after", "3") in answer.headers
    assert json.loads(answer.body)["error"]["message"] == "slow down"  # type: ignore[arg-type]
    with pytest.raises(openai.RateLimitError):
        await sdk(endpoint_for([], error=error)).responses.create(model="m", input="x")


async def test_bad_input_is_a_400_the_sdk_raises_with_the_param() -> None:
    client = sdk(endpoint_for(script()))
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="m", input="x", previous_response_id="resp_9")
    assert caught.value.param == "previous_response_id"
    assert caught.value.type == "invalid_request_error"
    answer = await ResponsesEndpoint(FakeChatClient(), model="g").answer(b"{oops")
    assert answer.status == 400
    assert json.loads(answer.body)["error"]["type"] == "invalid_request_error"  # type: ignore[arg-type]


async def test_the_callers_headers_go_on_but_not_its_credentials() -> None:
    recorder = Recorder()
    endpoint = endpoint_for(script(), recorder=recorder)
    headers = [("Authorization", "Bearer gateway-key"), ("X-Tenant", "acme")]
    await endpoint.answer(json.dumps({"model": "m", "input": "x"}).encode(), headers)
    (options,) = recorder.options
    assert options is not None
    assert options.headers == {"X-Tenant": "acme"}


# --- streamed ----------------------------------------------------------------------------------


async def test_every_event_is_an_sdk_stream_event_in_openais_order() -> None:
    answer = await call(endpoint_for(script()), input="x", stream=True)
    assert answer.status == 200
    assert ("content-type", "text/event-stream") in answer.headers
    events = await events_of(answer)
    for data in events:
        assert EVENTS.validate_python(data).type == data["type"]
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert [e["type"] for e in events] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.reasoning_text.delta",
        "response.reasoning_text.delta",
        "response.reasoning_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    text_events = [e for e in events if e.get("output_index") == 1 and "item_id" in e]
    message_id = events[9]["item"]["id"]
    assert {e["item_id"] for e in text_events} == {message_id}
    final = Response.model_validate(events[-1]["response"])
    assert [item.id for item in final.output] == [
        events[2]["item"]["id"],
        message_id,
        events[16]["item"]["id"],
    ]
    assert final.usage is not None
    assert final.usage.total_tokens == 18


async def test_the_sdk_stream_and_its_helper_give_text_reasoning_and_calls() -> None:
    client = sdk(endpoint_for(script()))
    stream = await client.responses.create(model="m", input="x", stream=True)
    deltas = [event.delta async for event in stream if event.type == "response.output_text.delta"]
    assert deltas == ["Hel", "lo"]
    async with sdk(endpoint_for(script())).responses.stream(model="m", input="x") as helper:
        final = await helper.get_final_response()
    assert final.output_text == "Hello"
    reasoning = final.output[0]
    assert reasoning.type == "reasoning"
    assert [c.text for c in reasoning.content or ()] == ["think hard"]
    function_call = final.output[2]
    assert function_call.type == "function_call"
    assert (function_call.name, function_call.arguments) == ("get_weather", '{"city": "Oslo"}')


async def test_an_error_after_the_first_update_is_response_failed() -> None:
    error = BackendUnavailableError("backend went away", status=503)
    updates = [ChatResponseUpdate([TextContent("part")])]
    answer = await call(endpoint_for(updates, error=error), input="x", stream=True)
    assert answer.status == 200
    events = await events_of(answer)
    for data in events:
        EVENTS.validate_python(data)
    last = events[-1]
    assert last["type"] == "response.failed"
    assert last["response"]["error"] == {"code": "server_error", "message": "backend went away"}
    assert last["response"]["output"][0]["content"][0]["text"] == "part"


async def test_an_error_before_the_first_update_is_an_error_status() -> None:
    error = BackendUnavailableError("loading", status=503)
    answer = await call(endpoint_for([], error=error), input="x", stream=True)
    assert answer.status == 503
    assert isinstance(answer.body, bytes)
    with pytest.raises(openai.InternalServerError):
        await sdk(endpoint_for([], error=error)).responses.create(model="m", input="x", stream=True)


async def test_an_empty_stream_still_opens_and_completes() -> None:
    events = await events_of(await call(endpoint_for([]), input="x", stream=True))
    assert [e["type"] for e in events] == [
        "response.created",
        "response.in_progress",
        "response.completed",
    ]


# --- flagged calls -------------------------------------------------------------------------------


def unoffered() -> FunctionCallContent:
    call = FunctionCallContent.from_json("call_x", "rm_rf", '{"path": "/"}')
    call.error = "the request did not offer a tool named 'rm_rf'"
    return call


async def test_an_unoffered_call_is_text_never_a_function_call() -> None:
    updates = [
        ChatResponseUpdate([TextContent("I will ")]),
        ChatResponseUpdate([unoffered()]),
        ChatResponseUpdate(finish_reason=ChatFinishReason.TOOL_CALLS),
    ]
    expected = 'I will <tool_call>\n{"name": "rm_rf", "arguments": {"path": "/"}}\n</tool_call>'
    response = Response.model_validate_json((await call(endpoint_for(updates), input="x")).body)  # type: ignore[arg-type]
    assert [item.type for item in response.output] == ["message"]
    assert response.output_text == expected
    events = await events_of(await call(endpoint_for(updates), input="x", stream=True))
    assert "response.function_call_arguments.delta" not in {e["type"] for e in events}
    assert events[-1]["response"]["output"][0]["content"][0]["text"] == expected


async def test_calls_recovered_from_one_block_share_its_text_once() -> None:
    block = '<tool_call>{"name": "a"}</tool_call><tool_call>{"name": "b"}</tool_call>'
    first, second = unoffered(), unoffered()
    first.raw = second.raw = block
    answer = await call(endpoint_for([ChatResponseUpdate([first, second])]), input="x")
    assert Response.model_validate_json(answer.body).output_text == block  # type: ignore[arg-type]


# --- closing -------------------------------------------------------------------------------------


async def test_closing_the_event_stream_closes_the_update_stream() -> None:
    recorder = Recorder()
    answer = await call(endpoint_for(script(), recorder=recorder), input="x", stream=True)
    assert not isinstance(answer.body, bytes)
    first = await anext(answer.body)
    assert b"response.created" in first
    assert recorder.closed == []
    await answer.body.aclose()  # type: ignore[attr-defined]
    assert recorder.closed == [True]


async def test_an_sdk_caller_leaving_early_closes_the_update_stream() -> None:
    recorder = Recorder()
    client = sdk(endpoint_for(script(), recorder=recorder))
    stream = await client.responses.create(model="m", input="x", stream=True)
    async for event in stream:
        if event.type == "response.output_text.delta":
            break
    await stream.close()
    assert recorder.closed == [True]


async def test_closing_before_the_first_event_still_closes_the_update_stream() -> None:
    recorder = Recorder()
    answer = await call(endpoint_for(script(), recorder=recorder), input="x", stream=True)
    assert not isinstance(answer.body, bytes)
    await answer.body.aclose()  # type: ignore[attr-defined]
    assert recorder.closed == [True]

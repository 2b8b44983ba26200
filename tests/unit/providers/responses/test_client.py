"""``OpenAiCompatibleResponsesClient`` end to end over respx (issue 11 items 1-4)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import respx
from structlog.testing import capture_logs

from providers import (
    ChatClient,
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ContextLengthExceededError,
    FunctionCallContent,
    InvalidRequestError,
    ModelNotFoundError,
    ProviderTimeoutError,
    ServerError,
    StreamInterruptedError,
    TextRecoveryChatClient,
    Timeouts,
    ToolDeclaration,
)
from providers.chat_completions.client import TRANSPORT_TIMESTAMPS
from providers.responses import (
    STORE_UNAVAILABLE_EVENT,
    ConversationMode,
    OpenAiCompatibleResponsesClient,
)

BASE = "http://llm.test"
URL = f"{BASE}/v1/responses"
SECRET = "sk-very-secret-key-123"


def sse(*events: dict[str, Any]) -> bytes:
    return "".join(
        f"event: {e.get('type', 'x')}\ndata: {json.dumps(e)}\n\n" for e in events
    ).encode()


def response_object(
    rid: str = "resp_1", status: str = "completed", output: list[Any] | None = None, **more: Any
) -> dict[str, Any]:
    return {
        "id": rid,
        "object": "response",
        "model": "m",
        "created_at": 1,
        "status": status,
        "output": output if output is not None else [],
        **more,
    }


def message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }


def call(call_id: str = "call_1") -> dict[str, Any]:
    return {
        "type": "function_call",
        "call_id": call_id,
        "name": "get_weather",
        "arguments": '{"city": "Paris"}',
        "id": "fc_1",
        "status": "completed",
    }


def text_stream(*deltas: str, terminal: bool = True) -> bytes:
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": response_object(status="in_progress")}
    ]
    events += [
        {"type": "response.output_text.delta", "delta": d, "output_index": 0, "content_index": 0}
        for d in deltas
    ]
    if terminal:
        events.append(
            {
                "type": "response.completed",
                "response": response_object(output=[message("".join(deltas))]),
            }
        )
    return sse(*events)


def streaming(body: bytes) -> httpx.Response:
    return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})


def sent(route: respx.Route, index: int = -1) -> dict[str, Any]:
    return json.loads(route.calls[index].request.content)  # type: ignore[no-any-return]


async def collect(client: ChatClient, messages: Any = "hello") -> list[ChatResponseUpdate]:
    return [u async for u in client.get_streaming_response(messages)]


@pytest.fixture
async def client() -> AsyncIterator[OpenAiCompatibleResponsesClient]:
    async with OpenAiCompatibleResponsesClient(BASE, "m", api_key=SECRET) as c:
        yield c


def test_repr_hides_the_key() -> None:
    client = OpenAiCompatibleResponsesClient(BASE, "m", api_key=SECRET, backend="vllm")
    assert SECRET not in repr(client)
    assert "backend='vllm'" in repr(client)
    assert "conversation_mode='stateless'" in repr(client)


def test_it_is_a_chat_client() -> None:
    assert isinstance(OpenAiCompatibleResponsesClient(BASE), ChatClient)


@respx.mock
async def test_stream_sends_the_key_and_store_false(
    client: OpenAiCompatibleResponsesClient,
) -> None:
    route = respx.post(URL).mock(return_value=streaming(text_stream("It is", " sunny.")))
    updates = await collect(client)
    response = ChatResponse.from_updates(updates)
    assert response.text == "It is sunny."
    assert response.finish_reason == ChatFinishReason.STOP
    request = route.calls.last.request
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    body = sent(route)
    assert body["stream"] is True
    assert body["store"] is False  # vLLM's store, when on, would keep it in memory for good
    assert "previous_response_id" not in body
    stamps = updates[0].additional_properties[TRANSPORT_TIMESTAMPS]  # type: ignore[index]
    assert {"request_sent", "response_headers", "first_byte"} <= set(stamps)


@respx.mock
async def test_failed_event_mid_stream_raises_with_the_partial(
    client: OpenAiCompatibleResponsesClient,
) -> None:
    failed = {
        "type": "response.failed",
        "response": response_object(
            status="failed", error={"code": "server_error", "message": "engine died"}
        ),
    }
    body = text_stream("It is", terminal=False) + sse(failed)
    respx.post(URL).mock(return_value=streaming(body))
    received: list[ChatResponseUpdate] = []
    with pytest.raises(ServerError) as caught:
        async for update in client.get_streaming_response("hello"):
            received.append(update)
    assert "".join(u.text for u in received) == "It is"  # delivered before the error
    partial = caught.value.partial_response
    assert partial is not None
    assert partial.text == "It is"
    assert partial.response_id == "resp_1"


@respx.mock
async def test_stream_cut_before_a_terminal_event(client: OpenAiCompatibleResponsesClient) -> None:
    added = {
        "type": "response.output_item.added",
        "output_index": 1,
        "item": {**call(), "arguments": "", "status": "in_progress"},
    }
    fragment = {
        "type": "response.function_call_arguments.delta",
        "output_index": 1,
        "delta": '{"city": "Par',
    }
    respx.post(URL).mock(
        return_value=streaming(text_stream("Hi", terminal=False) + sse(added, fragment))
    )
    with pytest.raises(StreamInterruptedError) as caught:
        await collect(client)
    partial = caught.value.partial_response
    assert partial is not None
    assert partial.text == "Hi"
    (pending,) = partial.tool_calls
    assert pending.raw_arguments == '{"city": "Par'
    assert pending.error is not None


@respx.mock
async def test_status_errors_are_typed(client: OpenAiCompatibleResponsesClient) -> None:
    body = {
        "error": {
            "message": "The model `m` does not exist. Valid aliases: Qwen/Qwen3-0.6B.",
            "type": "NotFoundError",
            "param": "model",
            "code": 404,
        }
    }
    respx.post(URL).mock(return_value=httpx.Response(404, json=body))
    with pytest.raises(ModelNotFoundError) as caught:
        await client.get_response("hello")
    assert "Qwen/Qwen3-0.6B" in str(caught.value)
    assert SECRET not in str(caught.value)


@respx.mock
async def test_non_streamed_context_overflow(client: OpenAiCompatibleResponsesClient) -> None:
    body = {
        "error": {
            "message": "This model's maximum context length is 4096 tokens. However, "
            "your prompt contains at least 4097 input tokens.",
            "code": 400,
        }
    }
    respx.post(URL).mock(return_value=httpx.Response(400, json=body))
    with pytest.raises(ContextLengthExceededError) as caught:
        await client.get_response("hello")
    assert (caught.value.prompt_tokens, caught.value.context_window) == (4097, 4096)


@respx.mock
async def test_first_token_budget_applies_to_streams() -> None:
    class Stall(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield sse({"type": "response.created", "response": response_object()})
            import asyncio

            await asyncio.sleep(5)
            yield b""

    respx.post(URL).mock(
        return_value=httpx.Response(
            200, stream=Stall(), headers={"content-type": "text/event-stream"}
        )
    )
    timeouts = Timeouts(first_token=0.2, idle=0.2, total=5)
    async with OpenAiCompatibleResponsesClient(BASE, timeouts=timeouts) as client:
        with pytest.raises(ProviderTimeoutError) as caught:
            await collect(client)
    assert caught.value.phase == "first_token"
    assert caught.value.partial_response is not None


def user_turns() -> list[ChatMessage]:
    return [ChatMessage.user("Weather in Paris?")]


def tool_turn(first: ChatResponse) -> list[ChatMessage]:
    (fc,) = first.tool_calls
    return [*user_turns(), *first.messages, ChatMessage.tool(fc.call_id, "sunny")]


@respx.mock
@pytest.mark.parametrize("streamed", [False, True], ids=["get_response", "streaming"])
async def test_store_disabled_falls_back_to_stateless_with_one_warning(streamed: bool) -> None:
    not_found = {
        "error": {
            "message": "Response with id 'resp_1' not found.",
            "type": "invalid_request_error",
            "param": "response_id",
            "code": 404,
        }
    }
    first = response_object("resp_1", output=[call()])
    final = response_object("resp_2", output=[message("Sunny.")])
    answers = [
        httpx.Response(200, json=first),
        httpx.Response(404, json=not_found),
        streaming(sse({"type": "response.completed", "response": final}))
        if streamed
        else httpx.Response(200, json=final),
        streaming(sse({"type": "response.completed", "response": final}))
        if streamed
        else httpx.Response(200, json=final),
    ]
    route = respx.post(URL).mock(side_effect=answers)
    async with OpenAiCompatibleResponsesClient(
        BASE, conversation_mode=ConversationMode.PREVIOUS_RESPONSE_ID
    ) as client:

        async def ask(messages: list[ChatMessage]) -> ChatResponse:
            if streamed:
                return ChatResponse.from_updates(await collect(client, messages))
            return await client.get_response(messages)

        with capture_logs() as logs:
            turn1 = await client.get_response(user_turns())
            second = tool_turn(turn1)
            turn2 = await ask(second)
            turn3 = await ask([*second, *turn2.messages, ChatMessage.user("Tomorrow?")])
    assert turn2.text == turn3.text == "Sunny."
    assert sent(route, 0)["store"] is True
    assert sent(route, 1)["previous_response_id"] == "resp_1"
    assert len(sent(route, 1)["input"]) == 1  # only the function_call_output
    fallback = sent(route, 2)
    assert "previous_response_id" not in fallback
    assert [i["type"] for i in fallback["input"]] == [
        "message",
        "function_call",
        "function_call_output",
    ]
    assert "previous_response_id" not in sent(route, 3)  # stays stateless
    warnings = [log for log in logs if log["event"] == STORE_UNAVAILABLE_EVENT]
    assert len(warnings) == 1
    assert warnings[0]["status"] == 404
    assert SECRET not in json.dumps(logs)


@respx.mock
async def test_unrelated_errors_do_not_fall_back() -> None:
    bad = {"error": {"message": "temperature must be <= 2", "param": "temperature", "code": 400}}
    route = respx.post(URL).mock(
        side_effect=[
            httpx.Response(200, json=response_object("resp_1", output=[call()])),
            httpx.Response(400, json=bad),
        ]
    )
    async with OpenAiCompatibleResponsesClient(
        BASE, conversation_mode="previous_response_id"
    ) as client:
        turn1 = await client.get_response(user_turns())
        with pytest.raises(InvalidRequestError):
            await client.get_response(tool_turn(turn1))
    assert route.call_count == 2


@respx.mock
async def test_vllm_continuation_resends_the_call_the_store_drops() -> None:
    route = respx.post(URL).mock(
        side_effect=[
            httpx.Response(200, json=response_object("resp_1", output=[call()])),
            httpx.Response(200, json=response_object("resp_2", output=[message("Sunny.")])),
        ]
    )
    async with OpenAiCompatibleResponsesClient(
        BASE, backend="vllm", conversation_mode="previous_response_id"
    ) as client:
        turn1 = await client.get_response(user_turns())
        await client.get_response(tool_turn(turn1))
    body = sent(route, 1)
    assert body["previous_response_id"] == "resp_1"
    assert [i["type"] for i in body["input"]] == ["function_call", "function_call_output"]


@respx.mock
async def test_background_polls_until_done() -> None:
    create = respx.post(URL).mock(
        return_value=httpx.Response(200, json=response_object("resp_9", status="queued"))
    )
    poll = respx.get(f"{URL}/resp_9").mock(
        side_effect=[
            httpx.Response(200, json=response_object("resp_9", status="in_progress")),
            httpx.Response(200, json=response_object("resp_9", output=[message("Done.")])),
        ]
    )
    async with OpenAiCompatibleResponsesClient(BASE, background=True, poll_interval=0) as client:
        response = await client.get_response("hello")
        assert response.text == "Done."
        assert response.finish_reason == ChatFinishReason.STOP
        body = sent(create)
        assert (body["background"], body["store"], body["stream"]) == (True, True, False)
        assert poll.call_count == 2
        poll.side_effect = [
            httpx.Response(200, json=response_object("resp_9", output=[message("Done.")]))
        ]
        updates = await collect(client)  # streamed: the finished response's updates
        assert ChatResponse.from_updates(updates).text == "Done."


@respx.mock
async def test_background_without_a_store_is_a_clear_typed_error() -> None:
    refusal = {
        "error": {
            "message": "This vLLM engine does not support `store=True` and "
            "therefore does not support the background mode.",
            "type": "invalid_request_error",
            "param": "background",
            "code": 400,
        }
    }
    respx.post(URL).mock(return_value=httpx.Response(400, json=refusal))
    async with OpenAiCompatibleResponsesClient(BASE) as client:
        with pytest.raises(InvalidRequestError) as caught:
            await client.get_response("hi", ChatOptions(additional_properties={"background": True}))
    assert caught.value.param == "background"
    assert "background mode" in str(caught.value)


@respx.mock
async def test_retrieve_cancel_and_replay_urls(client: OpenAiCompatibleResponsesClient) -> None:
    # Registered first: the plain GET route below would match the query too.
    replay = respx.get(f"{URL}/resp_7", params={"stream": "true", "starting_after": "3"}).mock(
        return_value=streaming(b"")
    )
    respx.get(f"{URL}/resp_7").mock(
        return_value=httpx.Response(
            200, json=response_object("resp_7", output=[message("Stored.")])
        )
    )
    respx.post(f"{URL}/resp_7/cancel").mock(
        return_value=httpx.Response(200, json=response_object("resp_7", status="cancelled"))
    )
    assert (await client.retrieve("resp_7")).text == "Stored."
    cancelled = await client.cancel("resp_7")
    assert cancelled.finish_reason == "cancelled"
    with pytest.raises(StreamInterruptedError):  # vLLM's empty replay of a finished response
        [u async for u in client.retrieve_streaming("resp_7", starting_after=3)]
    assert replay.called


@respx.mock
@pytest.mark.parametrize(
    ("probe_answer", "stored_read", "expected"),
    [
        (
            httpx.Response(
                400,
                json={
                    "error": {
                        "message": "Response store is disabled.",
                        "param": "response_id",
                        "code": 400,
                    }
                },
            ),
            None,
            False,
        ),
        (
            httpx.Response(404, json={"error": {"message": "not found", "code": 404}}),
            httpx.Response(404, json={"error": {"message": "not found", "code": 404}}),
            False,
        ),
        (
            httpx.Response(404, json={"error": {"message": "not found", "code": 404}}),
            httpx.Response(200, json=response_object("resp_p")),
            True,
        ),
    ],
    ids=["sglang-store-off", "vllm-store-off", "store-on"],
)
async def test_probe_store(
    probe_answer: httpx.Response, stored_read: httpx.Response | None, expected: bool
) -> None:
    respx.get(f"{URL}/resp_oaicompat_store_probe").mock(return_value=probe_answer)
    create = respx.post(URL).mock(return_value=httpx.Response(200, json=response_object("resp_p")))
    if stored_read is not None:
        respx.get(f"{URL}/resp_p").mock(return_value=stored_read)
    async with OpenAiCompatibleResponsesClient(BASE, "m") as client:
        assert await client.probe_store() is expected
    assert create.called is (stored_read is not None)
    if create.called:
        assert sent(create)["store"] is True


@respx.mock  # asserts that every request is mocked
async def test_a_tool_loop_never_uses_tool_outputs() -> None:
    # Only POST /v1/responses is mocked: any /tool_outputs request would fail the test.
    route = respx.post(URL).mock(
        side_effect=[
            httpx.Response(200, json=response_object("resp_1", output=[call()])),
            httpx.Response(200, json=response_object("resp_2", output=[message("Sunny.")])),
        ]
    )
    async with OpenAiCompatibleResponsesClient(BASE) as client:
        turn1 = await client.get_response(user_turns())
        assert turn1.finish_reason == ChatFinishReason.TOOL_CALLS
        turn2 = await client.get_response(tool_turn(turn1))
    assert turn2.text == "Sunny."
    assert [i["type"] for i in sent(route, 1)["input"]] == [
        "message",
        "function_call",
        "function_call_output",
    ]


@respx.mock
async def test_text_recovery_applies_to_output_text() -> None:
    markup = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    respx.post(URL).mock(return_value=streaming(text_stream(markup[:20], markup[20:])))
    offered = ChatOptions(tools=[ToolDeclaration("get_weather")])  # (none: markup stays text)
    async with TextRecoveryChatClient(OpenAiCompatibleResponsesClient(BASE)) as client:
        response = ChatResponse.from_updates(
            [u async for u in client.get_streaming_response("hello", offered)]
        )
    assert response.text == ""
    (recovered,) = response.tool_calls
    assert isinstance(recovered, FunctionCallContent)
    assert (recovered.name, recovered.arguments) == ("get_weather", {"city": "Paris"})
    assert response.finish_reason == ChatFinishReason.TOOL_CALLS


@respx.mock
async def test_a_slowly_written_call_is_output_for_the_first_token_budget() -> None:
    """Argument deltas count as the first token, as on the chat path, though the call becomes
    a FunctionCallContent only once it is done."""
    item = {**call(), "arguments": "", "status": "in_progress"}

    class SlowCall(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            import asyncio

            yield sse({"type": "response.created", "response": response_object()})
            yield sse({"type": "response.output_item.added", "output_index": 0, "item": item})
            for piece in ['{"city":', *[" "] * 10, ' "Paris"}']:
                await asyncio.sleep(0.05)  # 0.6 s in all; never 0.2 s apart
                delta = {"item_id": "fc_1", "output_index": 0, "delta": piece}
                yield sse({"type": "response.function_call_arguments.delta", **delta})
            done = {"type": "response.output_item.done", "output_index": 0, "item": call()}
            final = response_object(output=[call()])
            yield sse(done, {"type": "response.completed", "response": final})

    respx.post(URL).mock(
        return_value=httpx.Response(
            200, stream=SlowCall(), headers={"content-type": "text/event-stream"}
        )
    )
    timeouts = Timeouts(first_token=0.2, idle=0.5, total=5)
    async with OpenAiCompatibleResponsesClient(BASE, timeouts=timeouts) as client:
        response = ChatResponse.from_updates(await collect(client))
    assert [(c.name, c.arguments) for c in response.tool_calls] == [
        ("get_weather", {"city": "Paris"})
    ]

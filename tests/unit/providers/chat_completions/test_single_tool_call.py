"""``allow_multiple_tool_calls=False`` enforced on the answer (issue 33 item 3): the first call
of each choice kept, the others dropped and recorded, streamed and whole."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, MutableMapping
from typing import Any

import httpx
import pytest
import respx
from structlog.testing import capture_logs

from providers import (
    ChatFinishReason,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    FunctionCallContent,
    OpenAiCompatibleChatClient,
    TextContent,
    ToolDeclaration,
)
from providers.abstractions.event_names import REQUEST_OPTION_ENFORCED
from providers.backends import profile_for
from providers.chat_completions.option_enforcement import (
    Enforcement,
    enforce_runs,
    enforcement_for,
)
from providers.chat_completions.single_tool_call import (
    DROPPED_TOOL_CALLS,
    single_tool_call_response,
    single_tool_call_runs,
)

BASE = "http://llm.test"
CHAT = f"{BASE}/v1/chat/completions"
TOOLS = [ToolDeclaration("get_weather"), ToolDeclaration("get_time")]
ONE_CALL = ChatOptions(tools=TOOLS, allow_multiple_tool_calls=False)


def frame(delta: dict[str, Any], finish: str | None = None, index: int = 0) -> bytes:
    chunk = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": index, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()


def call(index: int, call_id: str | None, name: str | None, arguments: str) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    entry: dict[str, Any] = {"index": index, "type": "function", "function": function}
    if call_id is not None:
        entry["id"] = call_id
    return {"tool_calls": [entry]}


# Two calls in fragments, as SGLang sends them under plain `auto` (it does not trim).
TWO_CALLS = b"".join(
    [
        frame({"role": "assistant", "content": ""}),
        frame(call(0, "call_a", "get_weather", '{"city": ')),
        frame(call(0, None, None, '"Oslo"}')),
        frame(call(1, "call_b", "get_time", '{"tz": ')),
        frame(call(1, None, None, '"UTC"}')),
        frame({}, "tool_calls"),
        b"data: [DONE]\n\n",
    ]
)
DROPPED_B = {
    "choice_index": 0,
    "name": "get_time",
    "call_id": "call_b",
    "arguments": '{"tz": "UTC"}',
}


@pytest.fixture
async def client() -> AsyncIterator[OpenAiCompatibleChatClient]:
    async with OpenAiCompatibleChatClient(BASE, "m", backend="sglang") as c:
        yield c


def enforced(logs: list[MutableMapping[str, Any]]) -> list[MutableMapping[str, Any]]:
    return [entry for entry in logs if entry["event"] == REQUEST_OPTION_ENFORCED]


@respx.mock
async def test_a_streamed_second_call_is_dropped_and_recorded(
    client: OpenAiCompatibleChatClient,
) -> None:
    route = respx.post(CHAT).mock(
        return_value=httpx.Response(
            200, content=TWO_CALLS, headers={"content-type": "text/event-stream"}
        )
    )
    with capture_logs() as logs:
        updates = [u async for u in client.get_streaming_response("weather?", ONE_CALL)]
    calls = [c for u in updates for c in u.contents if isinstance(c, FunctionCallContent)]
    assert [(c.call_id, c.name, c.arguments) for c in calls] == [
        ("call_a", "get_weather", {"city": "Oslo"})
    ]
    response = ChatResponse.from_updates(updates)
    assert len(response.tool_calls) == 1
    assert response.finish_reason == ChatFinishReason.TOOL_CALLS
    assert response.additional_properties[DROPPED_TOOL_CALLS] == [DROPPED_B]
    assert json.loads(route.calls.last.request.content)["parallel_tool_calls"] is False
    (event,) = enforced(logs)
    assert event["option"] == "allow_multiple_tool_calls"
    assert event["dropped"] == ["get_time"]
    assert "UTC" not in json.dumps(event)  # names only, never argument values


@respx.mock
async def test_a_whole_answer_keeps_its_first_call(client: OpenAiCompatibleChatClient) -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_a",
                "type": "function",
                "function": {"name": "get_weather", "arguments": "{}"},
            },
            {
                "id": "call_b",
                "type": "function",
                "function": {"name": "get_time", "arguments": "not json"},
            },
            {
                "id": "call_c",
                "type": "function",
                "function": {"name": "get_time", "arguments": "{}"},
            },
        ],
    }
    body = {
        "id": "c2",
        "object": "chat.completion",
        "created": 2,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
    }
    respx.post(CHAT).mock(return_value=httpx.Response(200, json=body))
    with capture_logs() as logs:
        response = await client.get_response("weather?", ONE_CALL)
    assert [c.call_id for c in response.tool_calls] == ["call_a"]
    assert response.finish_reason == ChatFinishReason.TOOL_CALLS
    dropped = response.additional_properties[DROPPED_TOOL_CALLS]
    # The argument text as received, even where it is not JSON.
    assert [(d["call_id"], d["arguments"]) for d in dropped] == [
        ("call_b", "not json"),
        ("call_c", "{}"),
    ]
    assert len(enforced(logs)) == 1


@pytest.mark.parametrize("allow", [None, True])
@respx.mock
async def test_every_call_stays_unless_one_was_asked_for(
    client: OpenAiCompatibleChatClient, allow: bool | None
) -> None:
    respx.post(CHAT).mock(
        return_value=httpx.Response(
            200, content=TWO_CALLS, headers={"content-type": "text/event-stream"}
        )
    )
    options = ChatOptions(tools=TOOLS, allow_multiple_tool_calls=allow)
    response = ChatResponse.from_updates(
        [u async for u in client.get_streaming_response("weather?", options)]
    )
    assert [c.call_id for c in response.tool_calls] == ["call_a", "call_b"]
    assert DROPPED_TOOL_CALLS not in response.additional_properties
    assert enforcement_for(options, client.profile) is None


def test_the_plan_asks_for_it_on_every_backend_whatever_the_row_says() -> None:
    for backend in ("vllm", "sglang", "llamacpp", "openai"):
        plan = enforcement_for(ONE_CALL, profile_for(backend))
        assert plan is not None and plan.single_tool_call


def fc(call_id: str, name: str = "f") -> FunctionCallContent:
    return FunctionCallContent.from_json(call_id, name, "{}")


async def runs_of(*runs: list[ChatResponseUpdate]) -> AsyncIterator[list[ChatResponseUpdate]]:
    for run in runs:
        yield run


async def test_calls_of_one_choice_over_several_updates_and_choices_apart() -> None:
    """Each choice keeps its own first call, however the calls are spread over updates."""
    plan = Enforcement("sglang", single_tool_call=True)
    runs = single_tool_call_runs(
        runs_of(
            [ChatResponseUpdate([TextContent("ok")]), ChatResponseUpdate([fc("a0")])],
            [ChatResponseUpdate([fc("b0"), fc("b1")], choice_index=1)],
            [ChatResponseUpdate([fc("a1")], finish_reason=ChatFinishReason.TOOL_CALLS)],
            [ChatResponseUpdate([fc("b2")], choice_index=1)],
        ),
        plan,
    )
    with capture_logs() as logs:
        updates = [u async for run in runs for u in run]
    kept = [
        (u.choice_index, c.call_id)
        for u in updates
        for c in u.contents
        if isinstance(c, FunctionCallContent)
    ]
    assert kept == [(0, "a0"), (1, "b0")]
    response = ChatResponse.from_updates(updates)
    assert [
        (d["choice_index"], d["call_id"])
        for d in response.additional_properties[DROPPED_TOOL_CALLS]
    ] == [
        (1, "b1"),
        (0, "a1"),
        (1, "b2"),
    ]
    assert response.finish_reason == ChatFinishReason.TOOL_CALLS
    assert len(enforced(logs)) == 1  # once per request


async def test_closing_the_stage_closes_the_server_stream() -> None:
    closed = []

    async def upstream() -> AsyncIterator[list[ChatResponseUpdate]]:
        try:
            for _ in range(10):
                yield [ChatResponseUpdate([TextContent("x")])]
        finally:
            closed.append(True)

    runs = enforce_runs(upstream(), Enforcement("sglang", single_tool_call=True))
    await runs.__anext__()
    await runs.aclose()  # type: ignore[attr-defined]
    assert closed == [True]


def test_a_whole_response_of_two_choices() -> None:
    from providers import ChatMessage, ChatRole

    response = ChatResponse(
        [
            ChatMessage(ChatRole.ASSISTANT, [fc("a0"), fc("a1")]),
            ChatMessage(ChatRole.ASSISTANT, [TextContent("t"), fc("b0"), fc("b1")]),
        ]
    )
    with capture_logs():
        result = single_tool_call_response(response, Enforcement("vllm", single_tool_call=True))
    assert [[c.call_id for c in m.tool_calls] for m in result.messages] == [["a0"], ["b0"]]
    assert result.messages[1].text == "t"
    assert [d["call_id"] for d in result.additional_properties[DROPPED_TOOL_CALLS]] == ["a1", "b1"]

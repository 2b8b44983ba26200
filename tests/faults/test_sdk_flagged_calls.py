"""Issue 32 item 1: a call the pipeline flagged never reaches an OpenAI SDK as ``tool_calls``.

The unmodified ``AsyncOpenAI`` client reads the pipeline through ``OaicompatTransport`` (httpx)
and ``OaicompatHttpx2Transport`` (httpx2). The server offers ``get_weather`` and the model
calls ``delete_all`` (as a structured call, or as ``<tool_call>`` text the pipeline recovers),
or calls ``get_weather`` with arguments that do not parse. A loop that dispatches by name runs
whatever it finds in ``tool_calls``, so each of these must come out as the text the model wrote
(a structured call has none: it is written in the hermes ``<tool_call>`` form), with finish
``stop`` when no executable call is left, streamed and whole.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from providers import (
    ChatFinishReason,
    ChatResponseUpdate,
    ChatRole,
    FunctionCallContent,
    create_chat_client,
)
from providers.integrations._chat_endpoint import ChatCompletionsEndpoint
from tests.integrations.frameworks import require
from tests.integrations.test_openai_transport import openai_client
from tests.unit.scripted_client import ScriptedClient

openai = require("openai")

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
MESSAGES = [{"role": "user", "content": "Weather in Paris?"}]
RECOVERED = '<tool_call>\n{"name": "delete_all", "arguments": {"path": "/"}}\n</tool_call>'


def _structured(name: str, arguments: str) -> dict[str, Any]:
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": arguments}}


VARIANTS: dict[str, tuple[str | None, dict[str, Any] | None, str]] = {
    # name: (content, structured call, the text the SDK must see)
    "structured-unoffered": (
        None,
        _structured("delete_all", '{"path": "/"}'),
        '<tool_call>\n{"name": "delete_all", "arguments": {"path": "/"}}\n</tool_call>',
    ),
    "structured-bad-arguments": (
        None,
        _structured("get_weather", '{"city": "Par'),
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par}\n</tool_call>',
    ),
    "structured-not-an-object": (
        None,
        _structured("get_weather", "[1, 2]"),
        '<tool_call>\n{"name": "get_weather", "arguments": [1, 2]}\n</tool_call>',
    ),
    "recovered-unoffered": (RECOVERED, None, RECOVERED),
}


def stream_of(deltas: list[dict[str, Any]], finish: str) -> bytes:
    def event(delta: dict[str, Any], finish: str | None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return f"data: {json.dumps({'id': 'c', 'model': 'm', 'choices': [choice]})}\n\n"

    events = [event(delta, None) for delta in deltas] + [event({}, finish), "data: [DONE]\n\n"]
    return "".join(events).encode()


def completion_of(content: str | None, calls: list[dict[str, Any]], finish: str) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    choice = {"index": 0, "message": message, "finish_reason": finish}
    return json.dumps({"id": "c", "model": "m", "choices": [choice]}).encode()


def body_of(variant: str, stream: bool) -> bytes:
    content, call, _ = VARIANTS[variant]
    finish = "tool_calls" if call is not None else "stop"
    if not stream:
        return completion_of(content, [] if call is None else [call], finish)
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if content is not None:
        deltas += [{"content": content[:20]}, {"content": content[20:]}]
    if call is not None:
        deltas.append({"tool_calls": [{"index": 0, **call}]})
    return stream_of(deltas, finish)


def pipeline(body: bytes, stream: bool) -> Any:
    kind = "text/event-stream" if stream else "application/json"

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": kind}, content=body)

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    return create_chat_client("http://llm.test/v1", "m", http_client=http, telemetry=False)


async def ask(body: bytes, flavour: str, stream: bool) -> tuple[str, list[Any], str | None]:
    """``(content, tool_calls, finish_reason)`` as the SDK's objects hold them."""
    client = openai_client(pipeline(body, stream), flavour)
    try:
        if not stream:
            answer = await client.chat.completions.create(model="x", messages=MESSAGES, tools=TOOLS)
            (choice,) = answer.choices
            message = choice.message
            return message.content or "", list(message.tool_calls or ()), choice.finish_reason
        chunks = await client.chat.completions.create(
            model="x", messages=MESSAGES, tools=TOOLS, stream=True
        )
        text: list[str] = []
        calls: list[Any] = []  # the SDK's tool-call objects
        finish: str | None = None
        async for chunk in chunks:
            for streamed in chunk.choices:
                text.append(streamed.delta.content or "")
                calls += streamed.delta.tool_calls or ()
                finish = streamed.finish_reason or finish
        return "".join(text), calls, finish
    finally:
        await client.close()


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("flavour", ["httpx", "httpx2"])
@pytest.mark.parametrize("variant", list(VARIANTS))
async def test_a_flagged_call_reaches_the_sdk_as_its_text(
    variant: str, flavour: str, stream: bool
) -> None:
    text, calls, finish = await ask(body_of(variant, stream), flavour, stream)
    assert calls == []
    assert text == VARIANTS[variant][2]
    assert finish == "stop"  # nothing left to execute


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_an_offered_call_beside_a_flagged_one_is_still_a_call(stream: bool) -> None:
    good = _structured("get_weather", '{"city": "Paris"}')
    bad = {**_structured("delete_all", "{}"), "id": "call_2"}
    if stream:
        deltas = [{"tool_calls": [{"index": i, **c}]} for i, c in enumerate([good, bad])]
        body = stream_of(deltas, "tool_calls")
    else:
        body = completion_of(None, [good, bad], "tool_calls")
    text, calls, finish = await ask(body, "httpx", stream)
    assert [c.function.name for c in calls] == ["get_weather"]
    assert text == '<tool_call>\n{"name": "delete_all", "arguments": {}}\n</tool_call>'
    assert finish == "tool_calls"


@pytest.mark.parametrize("first", ["executable", "flagged"])
async def test_a_streams_finish_counts_the_calls_of_earlier_chunks(first: str) -> None:
    """The finish comes with a flagged call; whether it stays ``tool_calls`` depends on the
    call written as one in an earlier chunk (or its absence)."""
    good = FunctionCallContent.from_json("c1", "get_weather", '{"city": "Paris"}')
    bad = FunctionCallContent.from_json("c2", "delete_all", "{}")
    bad.error = "tool delete_all was not offered; offered: get_weather"
    earlier = good if first == "executable" else FunctionCallContent.from_json("c0", "x", "{")
    updates: list[ChatResponseUpdate | BaseException] = [
        ChatResponseUpdate([earlier], ChatRole.ASSISTANT),
        ChatResponseUpdate([bad], finish_reason=ChatFinishReason.TOOL_CALLS),
    ]
    endpoint = ChatCompletionsEndpoint(ScriptedClient(updates))
    request = {"model": "m", "messages": MESSAGES, "tools": TOOLS, "stream": True}
    answer = await endpoint.answer(json.dumps(request).encode())
    assert not isinstance(answer.body, bytes)
    events = [event async for event in answer.body]
    chunks = [json.loads(e[6:]) for e in events if e != b"data: [DONE]\n\n"]
    finishes = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
    calls = [t for c in chunks for t in c["choices"][0]["delta"].get("tool_calls", ())]
    assert [t["function"]["name"] for t in calls] == (
        ["get_weather"] if first == "executable" else []
    )
    assert finishes[-1] == ("tool_calls" if first == "executable" else "stop")

"""Issue 32 item 7: a lone surrogate escape (``"a\\ud800b"``, valid JSON) crashes nothing.

stdlib ``json`` reads ``\\ud800`` alone as the code point U+D800, which no UTF-8 encoder takes:
the OpenAI SDK's stream through the transport died on an untyped ``UnicodeEncodeError``, and a
tool loop ended because the next request could not encode the history. (orjson refuses such a
document, so only the reader's slow path ever sees one.) The rule, at the reader: each lone
surrogate becomes U+FFFD, and the update (or response) says how many strings were changed in
``additional_properties["replaced_surrogates"]``; ``raw`` keeps what the server sent.
"""

from __future__ import annotations

import json
from contextlib import aclosing
from typing import Any

import httpx
import pytest

from providers import (
    AIFunction,
    ChatClient,
    ChatOptions,
    FunctionInvokingChatClient,
    ToolDeclaration,
    create_chat_client,
)
from providers.abstractions.properties import REPLACED_SURROGATES
from tests.integrations.frameworks import require
from tests.integrations.test_openai_transport import openai_client

LONE = "\\ud800"  # the JSON escape, as the server writes it
PAIR = "\\ud83d\\ude00"  # a valid pair: U+1F600, untouched


def event(delta: dict[str, Any], finish: str | None = None, **top: Any) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return "data: " + json.dumps({"id": "c", "model": "m", "choices": [choice], **top}) + "\n\n"


def stream_body() -> bytes:
    text = [event({"role": "assistant", "content": ""}), event({"content": "He"})]
    # json.dumps would escape the backslash: the escape goes into the event by hand.
    text.append(event({"content": "@"}).replace("@", f"a{LONE}b{PAIR}"))
    text += [event({"content": "llo"}), event({}, "stop"), "data: [DONE]\n\n"]
    return "".join(text).encode()


def whole_body(content: str = "@", calls: list[dict[str, Any]] | None = None) -> bytes:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}
    return json.dumps({"id": "c", "choices": [choice]}).replace("@", f"a{LONE}b{PAIR}").encode()


def pipeline(*bodies: bytes, sent: list[bytes] | None = None) -> ChatClient:
    queue = list(bodies)

    def answer(request: httpx.Request) -> httpx.Response:
        if sent is not None:
            sent.append(request.content)
        body = queue.pop(0)
        kind = "text/event-stream" if body.startswith(b"data:") else "application/json"
        return httpx.Response(200, headers={"content-type": kind}, content=body)

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    return create_chat_client("http://llm.test/v1", "m", http_client=http, telemetry=False)


async def test_a_streamed_lone_surrogate_becomes_a_replacement_character() -> None:
    async with aclosing(pipeline(stream_body())) as client:
        updates = [u async for u in client.get_streaming_response("hi")]
    assert "".join(u.text for u in updates) == "Hea\ufffdb\U0001f600llo"
    marked = [u for u in updates if (u.additional_properties or {}).get(REPLACED_SURROGATES)]
    assert [(u.additional_properties or {})[REPLACED_SURROGATES] for u in marked] == [1]
    assert "\ud800" in json.dumps(marked[0].raw, ensure_ascii=False)  # raw: what was sent


async def test_a_whole_bodys_lone_surrogate_becomes_a_replacement_character() -> None:
    async with aclosing(pipeline(whole_body())) as client:
        response = await client.get_response("hi")
    assert response.text == "a\ufffdb\U0001f600"
    assert response.additional_properties[REPLACED_SURROGATES] == 1
    response.text.encode()  # (what failed downstream)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("flavour", ["httpx", "httpx2"])
async def test_the_sdk_reads_it_through_the_transport(flavour: str, stream: bool) -> None:
    require("openai")
    client = openai_client(pipeline(stream_body() if stream else whole_body()), flavour)
    messages = [{"role": "user", "content": "hi"}]
    try:
        if stream:
            chunks = await client.chat.completions.create(model="x", messages=messages, stream=True)
            text = "".join([c.delta.content or "" async for k in chunks for c in k.choices])
        else:
            answer = await client.chat.completions.create(model="x", messages=messages)
            text = answer.choices[0].message.content or ""
    finally:
        await client.close()
    assert "a\ufffdb\U0001f600" in text


async def test_a_calls_arguments_get_the_same_rule() -> None:
    raw = '{"city": "Par' + LONE + 'is"}'
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": raw}}
    tools = ChatOptions(tools=[ToolDeclaration("get_weather")])
    async with aclosing(pipeline(whole_body("", calls=[call]))) as client:
        response = await client.get_response("hi", tools)
    (got,) = response.tool_calls
    assert got.error is None and got.arguments == {"city": "Par\ufffdis"}
    assert got.raw_arguments == raw  # (the server's bytes, replayed as sent)


async def test_a_tool_loop_goes_on_after_one() -> None:
    def get_weather(city: str) -> str:
        return f"sunny in {city}"

    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
    }
    sent: list[bytes] = []
    inner = pipeline(whole_body(calls=[call]), whole_body("done"), sent=sent)
    options = ChatOptions(tools=[AIFunction.from_callable(get_weather)])
    async with FunctionInvokingChatClient(inner) as loop:
        response = await loop.get_response("Weather in Paris?", options)
    assert response.messages[-1].text == "done"
    assert len(sent) == 2
    history = json.loads(sent[1])["messages"]
    assert history[1]["content"] == "a\ufffdb\U0001f600"

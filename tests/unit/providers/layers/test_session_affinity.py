"""``SessionAffinityChatClient``: one stable routing key per conversation (issue #22 part 3).

Over respx; the real routers are in ``tests/integration/routers``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from providers import (
    ChatClient,
    ChatClientBuilder,
    ChatMessage,
    ChatOptions,
    ConfigurationError,
    DelegatingChatClient,
    OpenAiCompatibleChatClient,
    RetryPolicy,
    SessionAffinity,
    SessionAffinityChatClient,
    client_for,
    create_chat_client,
    load_config,
)
from providers.layers.session_affinity import conversation_key

BASE = "http://llm.test"
CHAT = f"{BASE}/v1/chat/completions"
NO_WAIT = RetryPolicy(base_delay=0, max_delay=0)


def completion(text: str = "ok") -> dict[str, Any]:
    return {
        "id": "c1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
    }


def stream_body(text: str = "ok") -> bytes:
    return (
        b'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":'
        b'[{"index":0,"delta":{"content":"' + text.encode() + b'"},"finish_reason":"stop"}]}'
        b"\n\ndata: [DONE]\n\n"
    )


def answer(streamed: bool, headers: dict[str, str] | None = None) -> httpx.Response:
    if streamed:
        events = {"content-type": "text/event-stream", **(headers or {})}
        return httpx.Response(200, content=stream_body(), headers=events)
    return httpx.Response(200, json=completion(), headers=headers)


async def ask(
    client: ChatClient, messages: Any, options: ChatOptions | None = None, *, streamed: bool
) -> str:
    if streamed:
        return "".join([u.text async for u in client.get_streaming_response(messages, options)])
    return (await client.get_response(messages, options)).text


def sent_header(route: respx.Route, name: str, index: int = -1) -> str | None:
    request: httpx.Request = route.calls[index].request
    value: str | None = request.headers.get(name)
    return value


def conversation(opening: str, turns: int) -> list[ChatMessage]:
    """A conversation after ``turns`` exchanges: it grows at its end."""
    messages = [ChatMessage.system("You are terse."), ChatMessage.user(opening)]
    for turn in range(1, turns):
        messages += [ChatMessage.assistant(f"answer {turn}"), ChatMessage.user(f"more {turn}")]
    return messages


def layered(client: ChatClient) -> DelegatingChatClient:
    """A pipeline as the typed layer it is (``ChatClient`` has no ``async with``)."""
    assert isinstance(client, DelegatingChatClient)
    return client


def affinity_client(affinity: SessionAffinity, **kwargs: Any) -> DelegatingChatClient:
    return layered(
        create_chat_client(BASE, "m", session_affinity=affinity, telemetry=False, **kwargs)
    )


# --- the key ---------------------------------------------------------------------------------


def test_the_derived_key_is_stable_across_turns_and_differs_between_conversations() -> None:
    keys = {conversation_key(conversation("Plan a trip", turns), None) for turns in (1, 2, 3)}
    assert len(keys) == 1
    other = conversation_key(conversation("Write a poem", 1), None)
    assert other not in keys
    different_system = [ChatMessage.system("You are verbose."), ChatMessage.user("Plan a trip")]
    assert conversation_key(different_system, None) not in keys | {other}


def test_the_conversation_id_is_the_key_as_given_or_hashed_when_unsendable() -> None:
    messages = conversation("Plan a trip", 1)
    assert conversation_key(messages, ChatOptions(conversation_id="user-7/chat-3")) == (
        "user-7/chat-3"
    )
    for unsendable in ("caf\u00e9", "line\nbreak", "x" * 300, " padded"):
        key = conversation_key(messages, ChatOptions(conversation_id=unsendable))
        assert key.startswith("conv-") and unsendable not in key
        assert key == conversation_key([], ChatOptions(conversation_id=unsendable))


# --- modes -----------------------------------------------------------------------------------


@respx.mock
@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize(
    ("affinity", "header"),
    [
        (SessionAffinity("vllm-router"), "X-Session-ID"),
        (SessionAffinity("smg"), "X-SMG-Routing-Key"),
        (SessionAffinity("header", "x-user-id"), "x-user-id"),
    ],
)
async def test_each_mode_sends_the_key_in_its_header(
    affinity: SessionAffinity, header: str, streamed: bool
) -> None:
    route = respx.post(CHAT).mock(side_effect=lambda request: answer(streamed))
    async with affinity_client(affinity) as client:
        await ask(client, "hi", ChatOptions(conversation_id="conv-42"), streamed=streamed)
        for turns in (1, 2, 3):
            await ask(client, conversation("Plan a trip", turns), streamed=streamed)
        await ask(client, conversation("Write a poem", 1), streamed=streamed)
    keys = [sent_header(route, header, i) for i in range(5)]
    assert keys[0] == "conv-42"
    assert keys[1] == keys[2] == keys[3] and keys[1] is not None and keys[1].startswith("conv-")
    assert keys[4] not in (keys[0], keys[1])


@respx.mock
async def test_the_callers_own_header_wins_and_options_are_not_mutated() -> None:
    route = respx.post(CHAT).mock(return_value=answer(False))
    options = ChatOptions(headers={"x-session-id": "mine"}, conversation_id="conv-1")
    async with affinity_client(SessionAffinity()) as client:
        await client.get_response("hi", options)
        plain = ChatOptions(temperature=0.1)
        await client.get_response("hi", plain)
    assert sent_header(route, "X-Session-ID", 0) == "mine"
    assert plain.headers is None and options.headers == {"x-session-id": "mine"}


@respx.mock
@pytest.mark.parametrize("streamed", [False, True])
async def test_retries_carry_the_same_key(streamed: bool) -> None:
    route = respx.post(CHAT).mock(
        side_effect=[httpx.Response(503), httpx.Response(500), answer(streamed)]
    )
    async with affinity_client(SessionAffinity("smg"), retry=NO_WAIT) as client:
        await ask(client, conversation("Plan a trip", 2), streamed=streamed)
    keys = {sent_header(route, "X-SMG-Routing-Key", i) for i in range(3)}
    assert route.call_count == 3 and len(keys) == 1 and None not in keys


# --- echo ------------------------------------------------------------------------------------


@respx.mock
@pytest.mark.parametrize("streamed", [False, True])
async def test_echo_sends_back_the_token_issued_to_that_conversation_only(streamed: bool) -> None:
    issued = iter(["pod-a-token", "pod-b-token", "pod-a-token-2", "pod-b-token-2"])

    def reply(request: httpx.Request) -> httpx.Response:
        return answer(streamed, {"x-session-token": next(issued)})

    route = respx.post(CHAT).mock(side_effect=reply)
    first, second = conversation("Plan a trip", 1), conversation("Write a poem", 1)
    async with affinity_client(SessionAffinity("echo"), retry=NO_WAIT) as client:
        await ask(client, first, streamed=streamed)  # no token yet
        await ask(client, second, streamed=streamed)  # another conversation: none either
        await ask(client, conversation("Plan a trip", 2), streamed=streamed)
        await ask(client, conversation("Write a poem", 2), streamed=streamed)
    tokens = [sent_header(route, "x-session-token", i) for i in range(4)]
    assert tokens == [None, None, "pod-a-token", "pod-b-token"]


@respx.mock
async def test_echo_ignores_error_answers_and_unusable_tokens_and_keeps_its_map_bounded() -> None:
    responses = iter(
        [
            httpx.Response(503, headers={"x-session-token": "from-a-failing-pod"}),
            answer(False, {"x-session-token": "t" * 2000}),  # too long: not stored
            answer(False, {"x-session-token": "token-one"}),
            answer(False, {"x-session-token": "token-two"}),  # evicts conversation one's
            answer(False),
            answer(False),
        ]
    )
    route = respx.post(CHAT).mock(side_effect=lambda request: next(responses))
    affinity = SessionAffinity("echo", max_conversations=1)
    async with affinity_client(affinity, retry=NO_WAIT) as client:
        await client.get_response(conversation("one", 1))  # 503, then the long token
        await client.get_response(conversation("one", 2))  # → token-one
        await client.get_response(conversation("two", 1))  # → token-two, evicts one
        await client.get_response(conversation("one", 3))
        await client.get_response(conversation("two", 2))
        layer = client.get_service(SessionAffinityChatClient)
        assert layer is not None and len(layer._tokens) == 1
    tokens = [sent_header(route, "x-session-token", i) for i in range(6)]
    assert tokens == [None, None, None, None, None, "token-two"]


@respx.mock
async def test_echo_with_a_configured_header_name() -> None:
    route = respx.post(CHAT).mock(return_value=answer(False, {"x-route-token": "r-1"}))
    async with affinity_client(SessionAffinity("echo", "x-route-token")) as client:
        await client.get_response("hi")
        await client.get_response("hi")
    assert [sent_header(route, "x-route-token", i) for i in range(2)] == [None, "r-1"]


# --- construction and configuration ----------------------------------------------------------


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"mode": "sticky"}, "must be one of"),
        ({"mode": "header"}, "needs a header name"),
        ({"mode": "vllm-router", "header": "x-a"}, "applies to the header and echo modes"),
        ({"mode": "header", "header": "bad name"}, "not a valid header name"),
        ({"mode": "echo", "max_conversations": 0}, ">= 1"),
    ],
)
def test_bad_settings_are_configuration_errors(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        SessionAffinity(**arguments)


@respx.mock
async def test_the_builder_adds_the_layer() -> None:
    route = respx.post(CHAT).mock(return_value=answer(False))
    wire = OpenAiCompatibleChatClient(BASE, "m")
    built = ChatClientBuilder(wire).use_session_affinity("header", header="x-k").build()
    async with layered(built) as c:
        await c.get_response("hi", ChatOptions(conversation_id="abc"))
    assert sent_header(route, "x-k") == "abc"


CONFIG = """
backends:
  router:
    base_url: http://llm.test
    session_affinity: {mode: vllm-router}
  gateway:
    base_url: http://llm.test
    session_affinity: {mode: smg}
  stack:
    base_url: http://llm.test
    session_affinity: {mode: header, header: x-user-id}
  llmd:
    base_url: http://llm.test
    session_affinity: {mode: echo, header: x-session-token, max_conversations: 10}
  plain:
    base_url: http://llm.test
"""


@respx.mock
async def test_yaml_configures_the_layer_per_backend(tmp_path: Path) -> None:
    path = tmp_path / "oaicompat.yaml"
    path.write_text(CONFIG)
    config = load_config(path)
    route = respx.post(CHAT).mock(return_value=answer(False))
    expected = {"router": "X-Session-ID", "gateway": "X-SMG-Routing-Key", "stack": "x-user-id"}
    for name, header in expected.items():
        async with layered(client_for(config, name)) as client:
            await client.get_response("hi", ChatOptions(conversation_id=f"id-{name}"))
        assert sent_header(route, header) == f"id-{name}"
    async with layered(client_for(config, "llmd")) as client:
        layer = client.get_service(SessionAffinityChatClient)
        assert layer is not None and layer.affinity == SessionAffinity(
            "echo", "x-session-token", 10
        )
    async with layered(client_for(config, "plain")) as client:
        assert client.get_service(SessionAffinityChatClient) is None


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{mode: header}", "needs a header name"),
        ("{mode: sticky}", "backends.b.session_affinity.mode"),
        ("{mode: smg, header: x-a}", "applies to the header and echo modes"),
        ("{mode: smg, hedaer: x-a}", "did you mean 'header'"),
    ],
)
def test_yaml_mistakes_name_the_line_and_key(tmp_path: Path, entry: str, message: str) -> None:
    path = tmp_path / "oaicompat.yaml"
    path.write_text(f"backends:\n  b:\n    base_url: http://x\n    session_affinity: {entry}\n")
    with pytest.raises(ConfigurationError, match=message) as caught:
        load_config(path)
    assert str(caught.value).startswith(f"{path}:4:")


@respx.mock
@pytest.mark.parametrize("streamed", [False, True])
async def test_echo_over_the_responses_api(streamed: bool) -> None:
    payload = {
        "id": "resp_1",
        "object": "response",
        "model": "m",
        "created_at": 1,
        "status": "completed",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "ok"}],
            }
        ],
    }
    token = {"x-session-token": "pod-r"}
    if streamed:
        event = json.dumps({"type": "response.completed", "response": payload})
        body = f"event: response.completed\ndata: {event}\n\n".encode()
        reply = httpx.Response(
            200, content=body, headers={"content-type": "text/event-stream", **token}
        )
    else:
        reply = httpx.Response(200, json=payload, headers=token)
    route = respx.post(f"{BASE}/v1/responses").mock(return_value=reply)
    client = affinity_client(SessionAffinity("echo"), api="responses")
    async with client:
        assert await ask(client, "hi", streamed=streamed) == "ok"
        await ask(client, "hi", streamed=streamed)
    assert [sent_header(route, "x-session-token", i) for i in range(2)] == [None, "pod-r"]

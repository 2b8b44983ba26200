"""One streaming contract (issue 31): a layer overrides ``get_streaming_response`` (and
``get_response`` if it changes whole answers), and every path honours it.

The library's layers pass each other runs through a private channel (``update_runs``). These
tests put a caller's layer, which knows nothing of runs, at every place a path could skip it:
under each of the library's layers, as a subclass of each class that offers runs (its runs
would skip the override), inside the standard pipeline, and behind the entry points built on
the two methods (the sync client, ``get_response_as``, a framework adapter). The layer shouts
(upper-cases the text) and counts its calls, so a path that bypasses it shows either way.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from providers import (
    ChatClient,
    ChatClientBuilder,
    ChatInput,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    DelegatingChatClient,
    OpenAiCompatibleChatClient,
    TextContent,
    create_chat_client,
)
from providers.abstractions.update_runs import offers_runs
from providers.layers.extra_body import ExtraBodyChatClient
from providers.layers.fallback import FallbackChatClient
from providers.layers.function_invocation import FunctionInvokingChatClient
from providers.layers.retry import RetryingChatClient
from providers.layers.session_affinity import SessionAffinity, SessionAffinityChatClient
from providers.layers.text_recovery import TextRecoveryChatClient
from telemetry import TelemetryChatClient

BASE = "http://server.test/v1"
TEXTS = ["Par", "is", " is", " sunny"]
SAID = "".join(TEXTS)
SHOUTED = SAID.upper()
WHOLE = json.dumps({"SAID": SAID})  # (the non-streamed answer: JSON, for get_response_as)


def _frames() -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"id": "c1", "model": "m", "created": 1, "choices": [choice]}

    chunks = [chunk({"content": text}) for text in TEXTS] + [chunk({}, "stop")]
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def _answer(request: httpx.Request) -> httpx.Response:
    if json.loads(request.content).get("stream"):
        return httpx.Response(200, content=_frames(), headers={"content-type": "text/event-stream"})
    message = {"role": "assistant", "content": WHOLE}
    choice = {"index": 0, "message": message, "finish_reason": "stop"}
    return httpx.Response(200, json={"id": "c1", "model": "m", "created": 1, "choices": [choice]})


def _http() -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(_answer))


def _wire() -> OpenAiCompatibleChatClient:
    return OpenAiCompatibleChatClient(BASE, "m", backend="vllm", http_client=_http())


def _shout(update: ChatResponseUpdate) -> ChatResponseUpdate:
    if update.text:
        update.contents = [TextContent(update.text.upper())]
    return update


class Shouting(DelegatingChatClient):
    """A caller's layer, written to the contract: ``get_streaming_response`` only."""

    calls = 0

    async def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        Shouting.calls += 1
        async for update in self.inner.get_streaming_response(messages, options):
            yield _shout(update)


class ShoutingWhole(Shouting):
    """The same layer changing whole answers too (``get_response``)."""

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        Shouting.calls += 1
        response = await self.inner.get_response(messages, options)
        return ChatResponse.from_updates([_shout(u) for u in _updates_of(response)])


def _updates_of(response: ChatResponse) -> list[ChatResponseUpdate]:
    return [ChatResponseUpdate(list(m.contents), m.role) for m in response.messages]


def _subclass_shouting(base: type[Any]) -> type[Any]:
    """A subclass of one of the library's classes that edits updates its own way."""

    async def get_streaming_response(
        self: Any, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        Shouting.calls += 1
        async for update in base.get_streaming_response(self, messages, options):
            yield _shout(update)

    return type(
        f"Shouting{base.__name__}", (base,), {"get_streaming_response": get_streaming_response}
    )


@pytest.fixture(autouse=True)
def _count() -> None:
    Shouting.calls = 0


async def _streamed(client: ChatClient) -> str:
    updates = [u async for u in client.get_streaming_response("hi")]
    await client.aclose()
    return ChatResponse.from_updates(updates).text


def _affinity(inner: ChatClient) -> ChatClient:
    return SessionAffinityChatClient(inner, SessionAffinity("echo"))


LAYERS: dict[str, Callable[[ChatClient], ChatClient]] = {
    "bare": lambda inner: inner,
    "telemetry": TelemetryChatClient,
    "retry": RetryingChatClient,
    "text recovery": TextRecoveryChatClient,
    "extra body": lambda inner: ExtraBodyChatClient(inner, {"top_k": 1}),
    "session affinity": _affinity,
    "fallback": lambda inner: FallbackChatClient(inner, _wire()),
    "function invocation": FunctionInvokingChatClient,
    "all of them": lambda inner: TelemetryChatClient(
        FallbackChatClient(_affinity(RetryingChatClient(TextRecoveryChatClient(inner))), _wire())
    ),
}


@pytest.mark.parametrize("outer", list(LAYERS), ids=list(LAYERS))
async def test_a_streaming_layer_is_honoured_under_every_layer(outer: str) -> None:
    assert await _streamed(LAYERS[outer](Shouting(_wire()))) == SHOUTED
    assert Shouting.calls == 1


RUNS_CLASSES: dict[str, Callable[[type[Any]], ChatClient]] = {
    "wire": lambda cls: cls(BASE, "m", backend="vllm", http_client=_http()),
    "telemetry": lambda cls: cls(_wire()),
    "retry": lambda cls: cls(_wire()),
    "text recovery": lambda cls: cls(_wire()),
    "extra body": lambda cls: cls(_wire(), {"top_k": 1}),
    "session affinity": lambda cls: cls(_wire(), SessionAffinity("echo")),
}
BASES: dict[str, type[Any]] = {
    "wire": OpenAiCompatibleChatClient,
    "telemetry": TelemetryChatClient,
    "retry": RetryingChatClient,
    "text recovery": TextRecoveryChatClient,
    "extra body": ExtraBodyChatClient,
    "session affinity": SessionAffinityChatClient,
}


@pytest.mark.parametrize("base", list(BASES), ids=list(BASES))
@pytest.mark.parametrize("outer", ["telemetry", "retry", "all of them"])
async def test_a_subclass_of_a_runs_class_is_honoured(base: str, outer: str) -> None:
    cls = _subclass_shouting(BASES[base])
    assert offers_runs(BASES[base]) and not offers_runs(cls)
    assert await _streamed(LAYERS[outer](RUNS_CLASSES[base](cls))) == SHOUTED
    assert Shouting.calls == 1


async def test_the_standard_pipeline_honours_a_wire_subclass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``create_chat_client`` over a core client that edits its own stream."""
    shouting_wire = _subclass_shouting(OpenAiCompatibleChatClient)
    monkeypatch.setattr("providers.factory.core_client_class", lambda api: shouting_wire)
    client = create_chat_client(BASE, "m", backend="vllm", http_client=_http())
    assert await _streamed(client) == SHOUTED
    assert Shouting.calls == 1


async def test_the_builder_honours_a_layer_between_its_own() -> None:
    client = (
        ChatClientBuilder(_wire())
        .use_telemetry()
        .use_retry()
        .use(Shouting)
        .use_extra_body({"top_k": 1})
        .use_text_recovery()
        .build()
    )
    assert await _streamed(client) == SHOUTED
    assert Shouting.calls == 1


@pytest.mark.parametrize("outer", list(LAYERS), ids=list(LAYERS))
async def test_a_whole_answer_layer_is_honoured_by_get_response(outer: str) -> None:
    client = LAYERS[outer](ShoutingWhole(_wire()))
    assert (await client.get_response("hi")).text == WHOLE.upper()
    assert await _streamed(client) == SHOUTED
    assert Shouting.calls == 2


async def test_get_response_as_goes_through_the_layer() -> None:
    client = TelemetryChatClient(RetryingChatClient(ShoutingWhole(_wire())))
    result = await client.get_response_as(dict[str, str], "hi")
    assert result.value == {"SAID": SHOUTED}
    assert Shouting.calls == 1
    await client.aclose()


def test_the_sync_client_honours_the_layer() -> None:
    sync = TelemetryChatClient(RetryingChatClient(ShoutingWhole(_wire()))).as_sync()
    try:
        updates = list(sync.get_streaming_response("hi"))
        assert ChatResponse.from_updates(updates).text == SHOUTED
        assert sync.get_response("hi").text == WHOLE.upper()
        assert Shouting.calls == 2
    finally:
        sync.close()


async def test_a_framework_adapter_streams_through_the_layer() -> None:
    pytest.importorskip("langchain_core")
    from providers.integrations.langchain import ChatOaicompat

    model = ChatOaicompat(client=TelemetryChatClient(RetryingChatClient(Shouting(_wire()))))
    chunks = [chunk async for chunk in model.astream("hi")]
    assert "".join(str(chunk.content) for chunk in chunks) == SHOUTED
    assert Shouting.calls == 1

"""Runs between layers (``providers.abstractions.update_runs``, issues 21 and 31): the wire client
yields a network read's updates as one run, the library's layers pass runs through a private
channel, and a layer that edits updates its own way (``get_streaming_response``, the one
streaming method of the contract) is never bypassed by the runs around it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx

from providers import (
    ChatInput,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    DelegatingChatClient,
    OpenAiCompatibleChatClient,
    TextContent,
)
from providers.abstractions.update_runs import offers_runs, runs_of
from providers.layers.retry import RetryingChatClient
from providers.layers.text_recovery import TextRecoveryChatClient
from telemetry import TelemetryChatClient

BASE = "http://server.test/v1"
TEXTS = ["Par", "is", " is", " sunny"]


def _body() -> bytes:
    chunks = [
        {
            "id": "c1",
            "model": "m",
            "created": 1,
            "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}],
        }
        for text in TEXTS
    ]
    chunks.append(
        {
            "id": "c1",
            "model": "m",
            "created": 1,
            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
        }
    )
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def _wire() -> OpenAiCompatibleChatClient:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=_body(), headers={"content-type": "text/event-stream"})

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return OpenAiCompatibleChatClient(BASE, "m", backend="vllm", http_client=http)


class Shouting(DelegatingChatClient):
    """A caller's layer: edits each update, and overrides ``get_streaming_response`` only."""

    async def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        async for update in self.inner.get_streaming_response(messages, options):
            if update.text:
                update.contents = [TextContent(update.text.upper())]
            yield update


class ShoutingTelemetry(TelemetryChatClient):
    """The same edit on a subclass of a layer that offers runs."""

    async def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        async for update in super().get_streaming_response(messages, options):
            if update.text:
                update.contents = [TextContent(update.text.upper())]
            yield update


class OwnRuns(DelegatingChatClient):
    """A class outside the library that defines a method of the private channel's name."""

    async def _streaming_runs(self, messages: ChatInput, options: ChatOptions | None = None) -> Any:
        yield [ChatResponseUpdate([TextContent("bypassed")])]


def test_which_classes_offer_runs() -> None:
    assert offers_runs(OpenAiCompatibleChatClient)
    assert offers_runs(TelemetryChatClient) and offers_runs(RetryingChatClient)
    assert offers_runs(TextRecoveryChatClient) and offers_runs(DelegatingChatClient)
    assert not offers_runs(Shouting)  # (its runs would skip its edit)
    assert not offers_runs(ShoutingTelemetry)
    assert not offers_runs(object)
    assert not offers_runs(OwnRuns)  # (only the library's classes are trusted with runs)


def test_delegating_chat_client_has_one_public_streaming_method() -> None:
    public = {name for name in dir(DelegatingChatClient) if not name.startswith("_")}
    assert {name for name in public if "stream" in name} == {"get_streaming_response"}


async def test_a_class_outside_the_library_is_read_through_its_updates() -> None:
    assert await _text(RetryingChatClient(OwnRuns(_wire()))) == "".join(TEXTS)


async def test_the_wire_client_yields_a_read_as_one_run() -> None:
    client = _wire()
    runs = [run async for run in runs_of(client, "hi", None)]
    # The mock transport hands the body over in one piece: one read, one run.
    assert len(runs) == 1
    assert "".join(u.text for u in runs[0]) == "".join(TEXTS)
    await client.aclose()


async def _text(client: Any) -> str:
    updates = [u async for u in client.get_streaming_response("hi")]
    return ChatResponse.from_updates(updates).text


async def test_a_layer_editing_updates_is_not_bypassed_by_the_runs_around_it() -> None:
    inner = Shouting(TextRecoveryChatClient(_wire()))
    client = TelemetryChatClient(RetryingChatClient(inner))
    assert await _text(client) == "".join(TEXTS).upper()
    runs = [run async for run in runs_of(RetryingChatClient(Shouting(_wire())), "hi", None)]
    assert [len(run) for run in runs] == [1] * len(runs)  # (read one update per run)
    assert "".join(u.text for run in runs for u in run) == "".join(TEXTS).upper()


async def test_a_subclass_overriding_the_updates_of_a_runs_layer_is_not_bypassed() -> None:
    client = RetryingChatClient(ShoutingTelemetry(_wire()))
    assert await _text(client) == "".join(TEXTS).upper()

"""Fakes shared by the telemetry tests: an inner client driven by callbacks, a stepping clock,
and a transcript server for the real client (httpx.MockTransport)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import httpx

from providers import (
    ChatInput,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    OpenAiCompatibleChatClient,
    TextContent,
    UsageContent,
    UsageDetails,
)
from providers.replay.transcripts import Transcript, default_root

BASE_URL = "http://replay.test"


class StepClock:
    """A monotonic clock that advances ``step`` seconds per reading: derived values are exact."""

    def __init__(self, start: float = 100.0, step: float = 0.5) -> None:
        self.now = start
        self.step = step

    def __call__(self) -> float:
        value = self.now
        self.now += self.step
        return value


Streamer = Callable[[ChatInput, ChatOptions | None], AsyncIterator[ChatResponseUpdate]]
Responder = Callable[[ChatInput, ChatOptions | None], ChatResponse]


class FakeChatClient:
    """A ``ChatClient`` whose behaviour is the callbacks it is given (MEAI's TestChatClient)."""

    def __init__(
        self,
        *,
        stream: Streamer | None = None,
        respond: Responder | None = None,
        model_id: str | None = None,
    ) -> None:
        self.stream = stream
        self.respond = respond
        self.model_id = model_id
        self.closed = False

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        assert self.respond is not None
        await asyncio.sleep(0)
        return self.respond(messages, options)

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        assert self.stream is not None
        return self.stream(messages, options)

    async def aclose(self) -> None:
        self.closed = True


def streaming(
    updates: Sequence[ChatResponseUpdate],
    *,
    error: BaseException | None = None,
    closed: list[bool] | None = None,
) -> Streamer:
    """A streamer yielding ``updates`` then raising ``error``; records in ``closed`` whether its
    ``finally`` ran (the stream was closed)."""

    def stream(
        messages: ChatInput, options: ChatOptions | None
    ) -> AsyncIterator[ChatResponseUpdate]:
        async def generate() -> AsyncIterator[ChatResponseUpdate]:
            try:
                for update in updates:
                    await asyncio.sleep(0)
                    yield update
                if error is not None:
                    raise error
            finally:
                if closed is not None:
                    closed.append(True)

        return generate()

    return stream


def text(value: str, **props: Any) -> ChatResponseUpdate:
    return ChatResponseUpdate([TextContent(value)], additional_properties=props or None)


def usage_update(
    input_tokens: int, output_tokens: int, cached: int | None = None, **props: Any
) -> ChatResponseUpdate:
    details = UsageDetails(
        input_token_count=input_tokens,
        output_token_count=output_tokens,
        total_token_count=input_tokens + output_tokens,
        cached_input_token_count=cached,
    )
    return ChatResponseUpdate([UsageContent(details)], additional_properties=props or None)


# Transcripts through the real client ---------------------------------------------------------


def transcript(backend: str, scenario: str) -> Transcript:
    return Transcript.load(default_root() / backend / f"{scenario}.json")


class _Events(httpx.AsyncByteStream):
    """The body one SSE event at a time, with a real pause between events, as a server would."""

    def __init__(self, body: bytes, pause: float) -> None:
        self._body = body
        self._pause = pause

    async def __aiter__(self) -> AsyncIterator[bytes]:
        pieces = self._body.split(b"\n\n")
        for index, piece in enumerate(pieces):
            if index:
                await asyncio.sleep(self._pause)
            yield piece + (b"\n\n" if index < len(pieces) - 1 else b"")


@contextlib.asynccontextmanager
async def serving(
    transcripts: Sequence[Transcript], *, pause: float = 0.001, api_key: str | None = None
) -> AsyncIterator[tuple[OpenAiCompatibleChatClient, list[httpx.Request]]]:
    """A real client whose n-th request is answered with the n-th transcript's bytes."""
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        served = transcripts[len(requests)]
        requests.append(request)
        headers = {"content-type": served.sidecar["response"].get("content_type", "")}
        return httpx.Response(served.status, headers=headers, stream=_Events(served.body, pause))

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        client = OpenAiCompatibleChatClient(
            BASE_URL, "test-model", api_key, backend=transcripts[0].backend, http_client=http
        )
        yield client, requests

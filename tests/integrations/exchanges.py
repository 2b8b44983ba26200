"""What the framework tests share: two-turn replays from ``transcripts/`` on a loopback server
that records each request, the weather tool the recordings call, and the rule that a missing
framework skips a test locally but fails it on CI.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import pytest

from providers import ChatClient, ChatInput, ChatOptions, ChatResponseUpdate, DelegatingChatClient
from providers.replay.server import ReceivedRequest, RecordedReply
from providers.replay.transcripts import Transcript, iter_transcripts

BY_ID = {t.id: t for t in iter_transcripts()}


def require(module: str, extra: str) -> ModuleType:
    """``module``, imported; without it a local run skips with the extra to install, and a CI
    run (``CI`` set) fails, since a suite that skipped the frameworks proves nothing."""
    try:
        return importlib.import_module(module)
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip(
            f"{module} is not installed: pip install -e '.[{extra}]'", allow_module_level=True
        )


@dataclass
class Exchange:
    """Serves the recordings in order, one per request, and keeps the request bodies."""

    replies: list[Transcript]
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def answer(self, request: ReceivedRequest) -> RecordedReply:
        self.bodies.append(json.loads(request.body))
        transcript = self.replies[min(len(self.bodies), len(self.replies)) - 1]
        content_type = transcript.sidecar["response"].get("content_type", "")
        return RecordedReply(transcript.status, transcript.body, {"Content-Type": content_type})


@dataclass(frozen=True)
class Scenario:
    """A recorded tool call, then a recorded answer."""

    call: str
    answer: str

    @property
    def first(self) -> Transcript:
        return BY_ID[self.call]

    @property
    def second(self) -> Transcript:
        return BY_ID[self.answer]

    @property
    def streamed(self) -> bool:
        return self.first.is_stream

    def exchange(self) -> Exchange:
        return Exchange([self.first, self.second])

    def recorded_call(self) -> tuple[str, dict[str, Any], str]:
        """Name, arguments and call id of the one call; for llama.cpp's call left in the text
        (no structured call recorded) the arguments the text carries, and no id."""
        calls = self.first.expected["tool_calls"]
        if calls:
            (call,) = calls
            return call["name"], call["arguments"], call["call_id"]
        text = self.first.expected["text"]
        body = json.loads(text.split("<tool_call>", 1)[1].split("</tool_call>", 1)[0])
        return body["name"], body["arguments"], ""

    def usage(self) -> tuple[int, int]:
        """Input and output tokens of both turns together."""
        turns = [self.first.expected["usage"], self.second.expected["usage"]]
        return (
            sum(u["input_token_count"] for u in turns),
            sum(u["output_token_count"] for u in turns),
        )


SCENARIOS = [
    Scenario(
        "vllm/captured--qwen3-hermes--stream-reasoning-then-tool-call",
        "vllm/captured--qwen3-hermes--stream-reasoning",
    ),
    Scenario(
        "vllm/captured--qwen3-hermes--nonstream-tool-call",
        "vllm/captured--qwen3-hermes--nonstream-reasoning",
    ),
    Scenario(
        "sglang/captured--qwen3-qwen25--stream-reasoning-then-tool-call",
        "sglang/captured--qwen3-qwen25--stream-reasoning",
    ),
    Scenario(
        "sglang/captured--qwen3-qwen25--nonstream-tool-call",
        "sglang/captured--qwen3-qwen25--nonstream-reasoning",
    ),
    Scenario(
        "llamacpp/captured--qwen25-plain--stream-text-tool-call-in-content",
        "llamacpp/captured--qwen3-reasoning-deepseek--stream-reasoning",
    ),
]
"""vLLM (reasoning, then a hermes call, then the answer), SGLang the same, and llama.cpp's call
left in the content (recorded streamed only)."""


class Weather:
    """The tool every recording calls; counts its runs."""

    def __init__(self) -> None:
        self.ran: list[dict[str, Any]] = []

    def get_weather(self, city: str, unit: str = "celsius") -> str:
        """Current weather in a city."""
        self.ran.append({"city": city, "unit": unit})
        return f"Sunny in {city}, 21 degrees {unit}"


def tool_result(weather_args: dict[str, Any]) -> str:
    return f"Sunny in {weather_args['city']}, 21 degrees {weather_args['unit']}"


class StallingServer:
    """Sends the head of a recorded stream, then holds the connection open and silent until the
    client closes it: ``closed`` is set when the server reads end-of-file, which is what a
    cancelled request must cause. Loopback only; every wait in the tests is bounded."""

    def __init__(self, transcript: Transcript, events: int = 3) -> None:
        self._head = b"\n\n".join(transcript.body.split(b"\n\n")[:events]) + b"\n\n"
        self.closed = asyncio.Event()
        self.requests = 0
        self._server: asyncio.Server | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"

    async def __aenter__(self) -> StallingServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._server.wait_closed(), 5)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = next(
                (
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ),
                0,
            )
            await reader.readexactly(length)
            self.requests += 1
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n"
                + b"%x\r\n%s\r\n"
                % (len(self._head), self._head)
            )
            await writer.drain()
            while await reader.read(1024):
                pass
            self.closed.set()
        except (ConnectionError, asyncio.IncompleteReadError):
            self.closed.set()
        finally:
            writer.close()


class KeepsStreams(DelegatingChatClient):
    """Holds every stream it hands out, so only an explicit close (never the garbage collector
    finalizing a dropped generator) can release the upstream request in a cancellation test."""

    def __init__(self, inner: ChatClient) -> None:
        super().__init__(inner)
        self.streams: list[AsyncIterator[ChatResponseUpdate]] = []

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        stream = super().get_streaming_response(messages, options)
        self.streams.append(stream)
        return stream

"""Shared replay helpers: run a transcript through the real client and reduce the outcome."""

from __future__ import annotations

import itertools
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import respx

from providers import (
    ChatClient,
    ChatOptions,
    ChatResponse,
    OpenAiCompatibleChatClient,
    ProviderError,
)
from providers.replay.transcripts import Transcript, recorded_offer, summarize, summarize_error

BASE_URL = "http://replay.test"

EMPTY: dict[str, Any] = {
    "text": "",
    "reasoning": "",
    "tool_calls": [],
    "finish_reason": None,
    "usage": None,
    "response_id": None,
    "model_id": None,
    "stop_sequence": None,
}


def is_streaming_request(transcript: Transcript) -> bool:
    return bool(transcript.request.get("stream", transcript.is_stream))


async def outcome(
    client: ChatClient, transcript: Transcript, options: ChatOptions | None = None
) -> dict[str, Any]:
    """What a caller gets: the response (or the error's partial response) plus the error.

    Without ``options``, the request offers the tools the recorded one did (a server's call
    naming no offered tool carries ``error``)."""
    if options is None:
        options = recorded_offer(transcript.request)
    response: ChatResponse | None
    error: dict[str, Any] | None = None
    try:
        if is_streaming_request(transcript):
            response = ChatResponse.from_updates(
                [update async for update in client.get_streaming_response("hello", options)]
            )
        else:
            response = await client.get_response("hello", options)
    except ProviderError as exc:
        response = exc.partial_response
        error = summarize_error(exc)
    result = dict(EMPTY) if response is None else summarize(response)
    result["error"] = error
    return result


def comparable(result: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any]:
    """Ids we invented (the server sent none) cannot be expected, nor raw argument text that the
    expectation leaves open (``None``); everything else must match."""
    result = dict(result)
    calls = []
    for got, want in zip(result["tool_calls"], expected["tool_calls"], strict=False):
        call = dict(got)
        for key in ("call_id", "raw_arguments"):
            if want.get(key) is None:
                call[key] = None
        calls.append(call)
    result["tool_calls"] = calls + result["tool_calls"][len(calls) :]
    return result


class Pieces(httpx.AsyncByteStream):
    """A response body delivered in exactly these pieces."""

    def __init__(self, pieces: list[bytes]) -> None:
        self._pieces = pieces

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self._pieces:
            yield piece


Splitter = Callable[[bytes], list[bytes]]


def whole(body: bytes) -> list[bytes]:
    return [body]


def cut_at(body: bytes, cuts: list[int]) -> list[bytes]:
    edges = [0, *sorted(set(cuts)), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(edges) if b > a]


def random_cuts(body: bytes, rng: random.Random, count: int) -> list[int]:
    return [rng.randrange(1, max(2, len(body))) for _ in range(count)]


def awkward_cuts(body: bytes) -> list[int]:
    """Inside every multi-byte UTF-8 character and between every CR and LF."""
    cuts = []
    for i in range(1, len(body)):
        byte, prev = body[i], body[i - 1]
        if 0x80 <= byte < 0xC0 or (prev == 0x0D and byte == 0x0A):
            cuts.append(i)
    return cuts


async def replay_respx(
    transcript: Transcript, pieces: list[bytes], body_override: bytes | None = None
) -> dict[str, Any]:
    headers = {"content-type": transcript.sidecar["response"].get("content_type", "")}
    with respx.mock(base_url=BASE_URL, assert_all_called=True) as mock:
        mock.post("/v1/chat/completions").mock(
            side_effect=lambda request: httpx.Response(
                transcript.status, headers=headers, stream=Pieces(pieces)
            )
        )
        async with OpenAiCompatibleChatClient(BASE_URL, backend=transcript.backend) as client:
            return await outcome(client, transcript)


class PieceServer:
    """One client for many replays of one transcript: each call serves ``pieces`` as set now.

    Building a respx router and a client per cut set dominated the cut-point test; the client
    under test is the same either way.
    """

    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self.pieces: list[bytes] = [transcript.body]
        headers = {"content-type": transcript.sidecar["response"].get("content_type", "")}

        def handler(request: httpx.Request) -> httpx.Response:
            return httpx.Response(transcript.status, headers=headers, stream=Pieces(self.pieces))

        self.client = OpenAiCompatibleChatClient(
            BASE_URL,
            backend=transcript.backend,
            http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
        )

    async def replay(self, pieces: list[bytes]) -> dict[str, Any]:
        self.pieces = pieces
        return await outcome(self.client, self.transcript)

"""Replaying Responses-API transcripts through ``OpenAiCompatibleResponsesClient``.

A transcript's sidecar names the ``operation`` it recorded (``create``, ``retrieve``,
``retrieve_stream``, ``cancel``) and the exact HTTP method and path; the fake server checks the
client sends that request, so URL building is tested by the same replay.
"""

from __future__ import annotations

from typing import Any

import httpx

from providers import ChatClient, ChatResponse, ProviderError
from providers.replay.transcripts import (
    Transcript,
    iter_transcripts,
    recorded_offer,
    summarize,
    summarize_error,
)
from providers.responses import OpenAiCompatibleResponsesClient
from tests.transcripts.replaying import BASE_URL, EMPTY, Pieces, is_streaming_request

RESPONSES = list(iter_transcripts(api="responses"))
BY_ID = {t.id: t for t in RESPONSES}
CLIENT_OPERATIONS = ("create", "retrieve", "retrieve_stream", "cancel")


def response_id_of(transcript: Transcript) -> str:
    """The stored response a GET or cancel was about: ``/v1/responses/{id}[/cancel][?…]``."""
    path: str = transcript.sidecar["http"]["path"]
    return path.split("?", maxsplit=1)[0].split("/")[3]


async def responses_outcome(client: ChatClient, transcript: Transcript) -> dict[str, Any]:
    """What a caller of the recorded operation gets (``expected`` shape, ``error`` included)."""
    operation = transcript.sidecar["operation"]
    response: ChatResponse | None
    error: dict[str, Any] | None = None
    try:
        if operation == "create":
            offer = recorded_offer(transcript.request)  # the tools the recorded request offered
            if is_streaming_request(transcript):
                updates = [u async for u in client.get_streaming_response("hello", offer)]
                response = ChatResponse.from_updates(updates)
            else:
                response = await client.get_response("hello", offer)
        else:
            assert isinstance(client, OpenAiCompatibleResponsesClient)
            response_id = response_id_of(transcript)
            if operation == "retrieve":
                response = await client.retrieve(response_id)
            elif operation == "retrieve_stream":
                updates = [u async for u in client.retrieve_streaming(response_id)]
                response = ChatResponse.from_updates(updates)
            elif operation == "cancel":
                response = await client.cancel(response_id)
            else:
                raise AssertionError(f"{operation} is not a client operation")
    except ProviderError as exc:
        response = exc.partial_response
        error = summarize_error(exc)
    result = dict(EMPTY) if response is None else summarize(response)
    result["error"] = error
    return result


class ResponsesPieceServer:
    """One client for many replays of one transcript, each serving ``pieces`` as set now, and
    checking the request line is the recorded one."""

    def __init__(self, transcript: Transcript, **client_options: Any) -> None:
        self.transcript = transcript
        self.pieces: list[bytes] = [transcript.body]
        self.requests: list[httpx.Request] = []
        http = transcript.sidecar["http"]
        headers = {"content-type": transcript.sidecar["response"].get("content_type") or ""}

        def handler(request: httpx.Request) -> httpx.Response:
            self.requests.append(request)
            assert request.method == http["method"]
            assert request.url.raw_path.decode() == http["path"]
            return httpx.Response(transcript.status, headers=headers, stream=Pieces(self.pieces))

        self.client = OpenAiCompatibleResponsesClient(
            BASE_URL,
            backend=transcript.backend,
            http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
            **client_options,
        )

    async def replay(self, pieces: list[bytes] | None = None) -> dict[str, Any]:
        self.pieces = pieces if pieces is not None else [self.transcript.body]
        return await responses_outcome(self.client, self.transcript)

"""Every Responses-API transcript, replayed through ``OpenAiCompatibleResponsesClient``, gives its
expected result, whole and cut anywhere (issue 11 item 5).

``expected`` was computed by the importer's own reader of the body (``tools/import_transcripts.py``
section 5), never by the client. Adding a transcript adds cases here with no new test code.
"""

from __future__ import annotations

import random
from functools import partial

import httpx
import pytest

from providers import ChatResponse, TextRecoveryChatClient
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from providers.replay.transcripts import Transcript, iter_transcripts, replay_bytes
from providers.responses import OpenAiCompatibleResponsesClient
from providers.transport.error_classification import error_from_response
from tests.transcripts.cut_replay import (
    LINE_ENDINGS,
    assert_same_wherever_cut,
    assert_same_with_line_ending,
)
from tests.transcripts.replaying import (
    BASE_URL,
    Pieces,
    awkward_cuts,
    comparable,
    cut_at,
    random_cuts,
)
from tests.transcripts.responses_replaying import (
    BY_ID,
    CLIENT_OPERATIONS,
    RESPONSES,
    ResponsesPieceServer,
    responses_outcome,
)

REPLAYED = [t for t in RESPONSES if t.sidecar["operation"] in CLIENT_OPERATIONS]
STREAMS = [t for t in REPLAYED if t.is_stream and t.body]
CREATES = [t for t in REPLAYED if t.sidecar["operation"] == "create"]
ROUTE_ONLY = [t for t in RESPONSES if t.sidecar["operation"] == "tool_outputs"]


def test_every_responses_capture_is_a_transcript() -> None:
    assert len(RESPONSES) == 104
    assert {t.backend for t in RESPONSES} == {"vllm", "sglang"}
    assert {t.sidecar["operation"] for t in RESPONSES} == {*CLIENT_OPERATIONS, "tool_outputs"}
    assert len(REPLAYED) + len(ROUTE_ONLY) == len(RESPONSES)
    for transcript in RESPONSES:
        assert transcript.api == "responses"
        assert transcript.scenario.startswith("captured--")
        assert "--responses--" in transcript.scenario
        provenance = transcript.sidecar["provenance"]
        assert provenance["kind"] == "captured"
        assert provenance["server"] in {"vLLM 0.33.0", "SGLang 0.5.23"}
        assert provenance["flags"]
    # The chat suite must not see them (it replays through the chat client).
    assert all(t.api == "chat" for t in iter_transcripts())


@pytest.mark.parametrize("transcript", REPLAYED, ids=lambda t: t.id)
async def test_replay_gives_the_expected_result(transcript: Transcript) -> None:
    server = ResponsesPieceServer(transcript)
    result = await server.replay()
    assert comparable(result, transcript.expected) == transcript.expected
    assert len(server.requests) == 1


@pytest.mark.parametrize("transcript", STREAMS, ids=lambda t: t.id)
async def test_result_does_not_depend_on_where_the_bytes_are_cut(transcript: Transcript) -> None:
    await assert_same_wherever_cut(
        ResponsesPieceServer(transcript),
        transcript.body,
        transcript.expected,
        transcript.id,
        samples=100,
    )


@pytest.mark.parametrize("transcript", STREAMS, ids=lambda t: t.id)
@LINE_ENDINGS
async def test_every_sse_line_ending_gives_the_same_result(
    transcript: Transcript, line_end: bytes
) -> None:
    await assert_same_with_line_ending(
        ResponsesPieceServer(transcript),
        transcript.body,
        transcript.expected,
        transcript.id,
        line_end,
    )


@pytest.mark.parametrize("transcript", STREAMS, ids=lambda t: t.id)
async def test_loopback_replay_cut_anywhere(transcript: Transcript) -> None:
    """A real TCP server on loopback: httpx and h11 see the chunked writes a network gives."""
    http = transcript.sidecar["http"]
    headers = {"Content-Type": transcript.sidecar["response"]["content_type"]}
    rng = random.Random(transcript.id)

    def answer(request: ReceivedRequest) -> RecordedReply:
        return RecordedReply(transcript.status, transcript.body, headers)

    for cuts in (awkward_cuts(transcript.body), random_cuts(transcript.body, rng, 60)):
        async with ReplayServer(answer, partial(cut_at, cuts=cuts)) as server:
            async with OpenAiCompatibleResponsesClient(
                server.base_url, backend=transcript.backend
            ) as client:
                result = await responses_outcome(client, transcript)
            assert [(r.method, r.path) for r in server.requests] == [(http["method"], http["path"])]
        assert comparable(result, transcript.expected) == transcript.expected


@pytest.mark.parametrize("transcript", CREATES, ids=lambda t: t.id)
async def test_text_recovery_layer_over_the_responses_client(transcript: Transcript) -> None:
    """Recovery works by wrapping: every answer comes out as the chat suite's recovery gives it
    (the template's whitespace trimmed at block edges; no markup is left in these outputs)."""
    expected = dict(transcript.sidecar.get("expected_recovered") or transcript.expected)
    server = ResponsesPieceServer(transcript)
    async with TextRecoveryChatClient(server.client) as client:
        result = await responses_outcome(client, transcript)
    assert comparable(result, expected) == expected


@pytest.mark.parametrize("transcript", ROUTE_ONLY, ids=lambda t: t.id)
def test_tool_outputs_route_is_missing_and_never_needed(transcript: Transcript) -> None:
    """Neither server has OpenAI's ``POST /v1/responses/{id}/tool_outputs``: FastAPI's own 404.

    The client never calls it (``tests/unit/providers/responses/test_client.py`` runs a tool loop
    with only ``POST /v1/responses`` mocked); the body is replayed through the error mapping every
    client call uses, which must not mistake this route 404 for an unknown model.
    """
    assert transcript.sidecar["http"]["path"].endswith("/tool_outputs")
    error = error_from_response(transcript.status, transcript.body, backend=transcript.backend)
    expected = transcript.expected["error"]
    assert {"class": type(error).__name__, "status": error.status} == expected
    assert expected == {"class": "InvalidRequestError", "status": 404}


BACKGROUND = {"vllm": "qwen3-hermes-store", "sglang": "qwen3-qwen25-store"}


def sequence_client(
    backend: str, names: list[str]
) -> tuple[OpenAiCompatibleResponsesClient, list[httpx.Request]]:
    """A background client answered by these transcripts, one per request, in order."""
    transcripts = [
        BY_ID[f"{backend}/captured--{BACKGROUND[backend]}--responses--{n}"] for n in names
    ]
    requests: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        transcript = transcripts[len(requests)]
        requests.append(request)
        http = transcript.sidecar["http"]
        assert (request.method, request.url.raw_path.decode()) == (http["method"], http["path"])
        headers = {"content-type": transcript.sidecar["response"]["content_type"]}
        return httpx.Response(transcript.status, headers=headers, stream=Pieces([transcript.body]))

    client = OpenAiCompatibleResponsesClient(
        BASE_URL,
        backend=backend,
        background=True,
        poll_interval=0,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
    )
    return client, requests


@pytest.mark.parametrize("backend", ["vllm", "sglang"])
async def test_background_response_polled_to_completion(backend: str) -> None:
    client, requests = sequence_client(
        backend, ["background-create-short", "background-get-completed"]
    )
    async with client:
        response = await client.get_response("What is the weather in Paris?")
    completed = BY_ID[
        f"{backend}/captured--{BACKGROUND[backend]}--responses--background-get-completed"
    ].expected
    assert response.text == completed["text"] == "\n\nIt is sunny in Paris."
    assert response.reasoning == completed["reasoning"]
    assert response.finish_reason == completed["finish_reason"] == "stop"
    assert [r.method for r in requests] == ["POST", "GET"]


@pytest.mark.parametrize("backend", ["vllm", "sglang"])
async def test_background_response_cancelled_while_polled(backend: str) -> None:
    # Queued, still running at the first read, cancelled (by someone) before the second.
    client, _ = sequence_client(
        backend,
        ["background-create", "background-get-in-progress", "background-get-after-cancel"],
    )
    async with client:
        response: ChatResponse = await client.get_response("What is the weather in Paris?")
    assert response.finish_reason == "cancelled"
    assert response.additional_properties["status"] == "cancelled"
    assert response.text == ""


@pytest.mark.parametrize(
    "scenario",
    [
        "vllm/captured--qwen3-hermes--responses--stream-reasoning-then-tool-call",
        "sglang/captured--plain--responses--error-input-over-context-stream",
        "sglang/captured--qwen3coder--responses--nonstream-tool-call",
    ],
)
async def test_replay_bytes_can_use_the_responses_client(scenario: str) -> None:
    """What ``oaicompat replay`` / ``record`` print for a Responses exchange."""
    transcript = BY_ID[scenario]
    result = await replay_bytes(
        transcript.status,
        transcript.body,
        transcript.sidecar["response"]["content_type"],
        streaming=transcript.is_stream,
        backend=transcript.backend,
        api="responses",
        request=transcript.request,
    )
    assert comparable(result, transcript.expected) == transcript.expected

"""Every embeddings transcript, replayed on loopback through
``OpenAiCompatibleEmbeddingGenerator``, gives its expected normalised result.

The sidecars' ``expected`` is read from the body without the client
(``providers.replay.embedding_transcripts.expected_embeddings``); a new transcript under
``transcripts/embeddings/<backend>/`` adds cases here with no new test code.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers.abstractions.errors import ProviderError
from providers.factory import create_embedding_generator
from providers.replay.embedding_transcripts import (
    EMBEDDINGS_API,
    expected_embeddings,
    iter_embedding_transcripts,
    replay_embedding_bytes,
)
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from providers.replay.transcripts import Transcript, iter_transcripts

TRANSCRIPTS = [t for t in iter_embedding_transcripts() if "vectors" in t.expected]
"""The transcripts in the vector format (``expected_embeddings``); the rigs' count format is
replayed by ``test_service_replay.py``."""

TOO_LARGE = "captured--embed-mean-ub32--input-over-ubatch"
KNOWN_BUGS: dict[str, str] = {}
"""Transcript id → why its replay fails today (a strict xfail, so a fix shows)."""


def _case(transcript: Transcript) -> Any:
    reason = KNOWN_BUGS.get(transcript.id)
    if reason is None:
        return pytest.param(transcript, id=transcript.id)
    return pytest.param(
        transcript, id=transcript.id, marks=pytest.mark.xfail(strict=True, reason=reason)
    )


def shape(transcript: Transcript) -> str:
    """``200 float``, ``200 base64``, or ``<status> <error class>``."""
    error = transcript.expected["error"]
    if error is not None:
        return f"{transcript.status} {error['class']}"
    return f"{transcript.status} {transcript.request['encoding_format']}"


def test_llamacpp_has_every_exchange_shape_with_its_source() -> None:
    shapes = {shape(t) for t in TRANSCRIPTS if t.backend == "llamacpp"}
    assert shapes >= {
        "200 float",
        "200 base64",
        "501 EmbeddingsUnavailableError",
        "400 EmbeddingsUnavailableError",
        "500 EmbeddingInputTooLargeError",
        "200 EmbeddingResponseError",
    }
    for transcript in TRANSCRIPTS:
        provenance = transcript.sidecar["provenance"]
        assert transcript.api == EMBEDDINGS_API
        assert provenance["kind"] == "captured"
        assert provenance["source"] and provenance["server"] and provenance["flags"]
        assert "-m" in provenance["flags"]


def test_the_chat_suite_does_not_see_them() -> None:
    assert TRANSCRIPTS
    assert all(t.api != EMBEDDINGS_API for t in iter_transcripts(api=None))


@pytest.mark.parametrize("transcript", TRANSCRIPTS, ids=lambda t: t.id)
def test_expected_is_the_bodys_own_reading(transcript: Transcript) -> None:
    declared = transcript.expected["error"]
    if declared is not None:
        declared = {key: value for key, value in declared.items() if key != "status"}
    assert expected_embeddings(transcript.body, transcript.status, error=declared) == (
        transcript.expected
    )


@pytest.mark.parametrize("transcript", [_case(t) for t in TRANSCRIPTS])
async def test_replay_gives_the_expected_result(transcript: Transcript) -> None:
    expected = transcript.expected
    error = expected["error"]
    result, received = await replay_embedding_bytes(
        transcript.status,
        transcript.body,
        transcript.sidecar["response"]["content_type"],
        transcript.request,
        backend=transcript.backend,
        fix_mentions=None if error is None else error["fix_mentions"],
    )
    # One request, the one recorded: the client asks what the capture asked.
    assert [json.loads(request.body) for request in received] == [transcript.request]
    assert [request.path for request in received] == ["/v1/embeddings"]
    assert result == expected


def test_float_and_base64_answers_hold_the_same_vectors() -> None:
    by_request: dict[str, dict[str, Any]] = {}
    for transcript in TRANSCRIPTS:
        if transcript.expected["error"] is None:
            key = json.dumps([transcript.backend, transcript.request["input"]])
            by_request.setdefault(key, {})[transcript.request["encoding_format"]] = transcript
    pairs = [pair for pair in by_request.values() if {"float", "base64"} <= set(pair)]
    assert pairs, "no float/base64 pair of the same inputs"
    for pair in pairs:
        assert pair["float"].body != pair["base64"].body
        assert pair["float"].expected["vectors"] == pair["base64"].expected["vectors"]


async def test_the_standard_pipeline_sends_an_input_too_large_once() -> None:
    """A too-large input fails the same way every time: the retry layer must not resend it."""
    (transcript,) = [t for t in TRANSCRIPTS if t.id == f"llamacpp/{TOO_LARGE}"]

    def answer(received: ReceivedRequest) -> RecordedReply:
        return RecordedReply(transcript.status, transcript.body)

    async with ReplayServer(answer) as server:
        generator = create_embedding_generator(server.base_url, backend="llamacpp")
        try:
            with pytest.raises(ProviderError):
                await generator.generate(transcript.request["input"])
        finally:
            await generator.aclose()
    assert len(server.requests) == 1

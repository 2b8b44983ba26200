"""Every transcript, replayed through the real client, gives its expected normalised result.

Adding a transcript (body + sidecar) adds cases here with no new test code.
"""

from __future__ import annotations

import random

import pytest

from providers.transcripts import Transcript, iter_transcripts
from tests.transcripts.replaying import (
    PieceServer,
    awkward_cuts,
    comparable,
    cut_at,
    random_cuts,
    replay_respx,
    whole,
)

TRANSCRIPTS = list(iter_transcripts())
STREAMS = [t for t in TRANSCRIPTS if t.is_stream]
SHORT = 2048  # bodies up to this size are cut at every single offset


def test_the_suite_has_evidence_from_every_backend() -> None:
    backends = {t.backend for t in TRANSCRIPTS}
    assert backends == {"llamacpp", "vllm", "sglang"}
    assert len(TRANSCRIPTS) >= 100
    for transcript in TRANSCRIPTS:
        assert transcript.sidecar["provenance"]["kind"] in {
            "captured",
            "reconstructed",
            "assembled",
        }
        assert transcript.sidecar["provenance"]["source"]


@pytest.mark.parametrize("transcript", TRANSCRIPTS, ids=lambda t: t.id)
async def test_replay_gives_the_expected_result(transcript: Transcript) -> None:
    result = await replay_respx(transcript, whole(transcript.body))
    assert comparable(result, transcript.expected) == transcript.expected


@pytest.mark.parametrize("transcript", STREAMS, ids=lambda t: t.id)
async def test_result_does_not_depend_on_where_the_bytes_are_cut(transcript: Transcript) -> None:
    body = transcript.body
    expected = transcript.expected
    rng = random.Random(transcript.id)
    if len(body) <= SHORT:
        cut_sets = [[offset] for offset in range(1, len(body))]
    else:
        cut_sets = [random_cuts(body, rng, 1) for _ in range(150)]
        cut_sets += [random_cuts(body, rng, rng.randrange(2, 40)) for _ in range(150)]
    cut_sets.append(list(range(1, len(body))))  # one byte at a time
    cut_sets.append(awkward_cuts(body))
    server = PieceServer(transcript)
    for cuts in cut_sets:
        result = await server.replay(cut_at(body, cuts))
        assert comparable(result, expected) == expected, f"differs when cut at {cuts[:10]}"


@pytest.mark.parametrize("transcript", STREAMS, ids=lambda t: t.id)
@pytest.mark.parametrize("line_end", [b"\r\n", b"\r"], ids=["crlf", "cr"])
async def test_every_sse_line_ending_gives_the_same_result(
    transcript: Transcript, line_end: bytes
) -> None:
    # JSON escapes control characters, so a raw LF in an SSE body is always a line end.
    body = transcript.body.replace(b"\n", line_end)
    rng = random.Random(transcript.id)
    expected = transcript.expected
    server = PieceServer(transcript)
    for cuts in ([], awkward_cuts(body), random_cuts(body, rng, 25)):
        result = await server.replay(cut_at(body, cuts))
        assert comparable(result, expected) == expected

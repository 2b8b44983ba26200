"""Every transcript, replayed through the real client, gives its expected normalised result.

Adding a transcript (body + sidecar) adds cases here with no new test code.
"""

from __future__ import annotations

import pytest

from providers.replay.transcripts import Transcript, iter_transcripts
from tests.transcripts.cut_replay import (
    LINE_ENDINGS,
    assert_same_wherever_cut,
    assert_same_with_line_ending,
)
from tests.transcripts.replaying import PieceServer, comparable, replay_respx, whole

TRANSCRIPTS = list(iter_transcripts())
STREAMS = [t for t in TRANSCRIPTS if t.is_stream]


def test_the_suite_has_evidence_from_every_backend() -> None:
    backends = {t.backend for t in TRANSCRIPTS}
    assert backends == {"llamacpp", "llama-cpp-python", "vllm", "sglang"}
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
    await assert_same_wherever_cut(
        PieceServer(transcript), transcript.body, transcript.expected, transcript.id, samples=150
    )


@pytest.mark.parametrize("transcript", STREAMS, ids=lambda t: t.id)
@LINE_ENDINGS
async def test_every_sse_line_ending_gives_the_same_result(
    transcript: Transcript, line_end: bytes
) -> None:
    await assert_same_with_line_ending(
        PieceServer(transcript), transcript.body, transcript.expected, transcript.id, line_end
    )

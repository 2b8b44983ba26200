"""Every transcript served by a real TCP server on loopback, its bytes cut anywhere.

This is the closest a test gets to the network without a model server: httpx, h11 and our
decoder see chunked HTTP/1.1 writes that end inside UTF-8 characters and between ``\\r`` and
``\\n``. The named tests below pin the two facts the issue singles out.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from providers import OpenAiCompatibleChatClient
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from providers.replay.transcripts import Transcript, iter_transcripts
from tests.transcripts.replaying import awkward_cuts, comparable, cut_at, outcome, random_cuts

TRANSCRIPTS = list(iter_transcripts())
BY_ID = {t.id: t for t in TRANSCRIPTS}


async def serve(transcript: Transcript, body: bytes, cuts: list[int]) -> dict[str, Any]:
    headers = {"Content-Type": transcript.sidecar["response"].get("content_type", "")}

    def answer(request: ReceivedRequest) -> RecordedReply:
        return RecordedReply(transcript.status, body, headers)

    async with ReplayServer(answer, lambda data: cut_at(data, cuts)) as server:
        async with OpenAiCompatibleChatClient(
            server.base_url, backend=transcript.backend
        ) as client:
            result = await outcome(client, transcript)
        assert len(server.requests) == 1
        assert server.requests[0].path == "/v1/chat/completions"
    return result


def crlf(body: bytes) -> bytes:
    return body.replace(b"\n", b"\r\n")


@pytest.mark.parametrize("transcript", TRANSCRIPTS, ids=lambda t: t.id)
async def test_loopback_replay_cut_anywhere(transcript: Transcript) -> None:
    rng = random.Random(transcript.id)
    expected = transcript.expected
    variants = (
        [transcript.body, crlf(transcript.body)] if transcript.is_stream else [transcript.body]
    )
    for body in variants:
        for cuts in (awkward_cuts(body), random_cuts(body, rng, 60)):
            result = await serve(transcript, body, cuts)
            assert comparable(result, expected) == expected


async def test_vllm_final_reasoning_token_sharing_the_finish_chunk_is_kept() -> None:
    transcript = BY_ID["vllm/assembled--seed000-gpt-oss-reasoning-length"]
    body = transcript.body
    finish_chunk = body.index(b'"reasoning":"STATE"')
    result = await serve(transcript, body, [finish_chunk + 3, finish_chunk + 15])
    assert result["reasoning"].endswith("STATE")
    assert result["finish_reason"] == "length"


@pytest.mark.parametrize(
    "scenario",
    [
        "llamacpp/captured--qwen25-plain--stream-unicode-line-separators",
        "llamacpp/captured--qwen25-plain--nonstream-unicode-line-separators",
    ],
)
async def test_unicode_line_separators_in_content_survive(scenario: str) -> None:
    transcript = BY_ID[scenario]
    separator = "\u2028".encode()
    assert separator in transcript.body, "the capture must carry U+2028 unescaped"
    at = transcript.body.index(separator)
    result = await serve(transcript, crlf(transcript.body), [at + 1, at + 2])
    for character in ("\u2028", "\u2029", "\u0085"):
        assert character in result["text"]
    assert result == {**transcript.expected, "tool_calls": result["tool_calls"]}

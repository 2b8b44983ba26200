"""Every transcript through the text-recovery layer: markup in content becomes structured.

Transcripts whose sidecar has ``expected_recovered`` (tool calls or think tags left in
``delta.content``) must come out structured, with no markup in the text; every other transcript
must come out exactly as without the layer (recovery in ``auto`` is a no-op on clean output).
"""

from __future__ import annotations

import random
from typing import Any

import httpx
import pytest

from providers import ChatOptions, OpenAiCompatibleChatClient
from providers.layers.text_recovery import TextRecoveryChatClient
from providers.replay.transcripts import Transcript, iter_transcripts
from tests.transcripts.replaying import BASE_URL, Pieces, comparable, cut_at, outcome, random_cuts

TRANSCRIPTS = list(iter_transcripts())
RECOVERED = [t for t in TRANSCRIPTS if "expected_recovered" in t.sidecar]


def expectation(transcript: Transcript) -> dict[str, Any]:
    return dict(transcript.sidecar.get("expected_recovered") or transcript.expected)


async def replay_recovered(transcript: Transcript, pieces: list[bytes]) -> dict[str, Any]:
    settings = dict(transcript.sidecar.get("recovery") or {})
    tools = settings.pop("tools", None)
    headers = {"content-type": transcript.sidecar["response"].get("content_type", "")}

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(transcript.status, headers=headers, stream=Pieces(pieces))

    inner = OpenAiCompatibleChatClient(
        BASE_URL,
        backend=transcript.backend,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
    )
    async with TextRecoveryChatClient(inner, **settings) as client:
        return await outcome(client, transcript, ChatOptions(tools=tools) if tools else None)


def test_recovery_cases_cover_every_backend_and_both_kinds() -> None:
    assert {t.backend for t in RECOVERED} == {"llamacpp", "llama-cpp-python", "vllm", "sglang"}
    assert any(t.sidecar["expected_recovered"]["tool_calls"] for t in RECOVERED)
    assert any(t.sidecar["expected_recovered"]["reasoning"] for t in RECOVERED)


@pytest.mark.parametrize("transcript", TRANSCRIPTS, ids=lambda t: t.id)
async def test_recovery_layer_result(transcript: Transcript) -> None:
    expected = expectation(transcript)
    result = await replay_recovered(transcript, [transcript.body])
    assert comparable(result, expected) == expected


@pytest.mark.parametrize("transcript", RECOVERED, ids=lambda t: t.id)
async def test_recovered_result_does_not_depend_on_cuts(transcript: Transcript) -> None:
    expected = expectation(transcript)
    for markup in ("<tool_call>", "<think>", "</think>", "<function="):
        assert markup not in expected["text"]
    rng = random.Random(transcript.id)
    body = transcript.body
    for cuts in [list(range(1, len(body)))] + [random_cuts(body, rng, 30) for _ in range(40)]:
        result = await replay_recovered(transcript, cut_at(body, cuts))
        assert comparable(result, expected) == expected

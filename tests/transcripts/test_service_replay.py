"""Every rig-recorded service transcript (``transcripts/embeddings/README.md``: embeddings,
rerank and tokenize answers of the real vLLM and SGLang servers, their ``expected`` read from
the body without the client) replayed on loopback through the library's own client for it:
``OpenAiCompatibleEmbeddingGenerator``, ``OpenAiCompatibleRerankClient``, ``count_tokens``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers.abstractions.contents import TextContent
from providers.abstractions.errors import ProviderError
from providers.abstractions.messages import ChatMessage
from providers.abstractions.open_values import ChatRole
from providers.chat_completions.client import OpenAiCompatibleChatClient
from providers.embeddings import OpenAiCompatibleEmbeddingGenerator
from providers.replay.embedding_transcripts import iter_embedding_transcripts
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from providers.replay.transcripts import Transcript
from providers.rerank import VLLM_SCORE, OpenAiCompatibleRerankClient

SERVICE = [t for t in iter_embedding_transcripts() if "vectors" not in t.expected]


def test_the_rigs_recorded_every_service() -> None:
    assert {t.api for t in SERVICE} == {"embeddings", "rerank", "tokenize"}
    for transcript in SERVICE:
        provenance = transcript.sidecar["provenance"]
        assert provenance["kind"] in ("captured", "reconstructed")
        assert provenance["server"] and provenance["source"]


async def _replayed(transcript: Transcript) -> tuple[Any, list[ReceivedRequest]]:
    headers = {"Content-Type": transcript.sidecar["response"]["content_type"]}

    def answer(request: ReceivedRequest) -> RecordedReply:
        return RecordedReply(transcript.status, transcript.body, headers)

    async with ReplayServer(answer) as server:
        try:
            result: Any = await _call(transcript, server.base_url)
        except ProviderError as error:
            result = error
    return result, server.requests


async def _call(transcript: Transcript, base_url: str) -> Any:
    request = transcript.request
    backend = transcript.backend
    if transcript.api == "embeddings":
        encoding = request.get("encoding_format", "float")
        async with OpenAiCompatibleEmbeddingGenerator(
            base_url, request["model"], backend=backend, encoding_format=encoding
        ) as generator:
            return await generator.generate(request["input"])
    if transcript.api == "rerank":
        route = VLLM_SCORE if transcript.sidecar["http"]["path"] == "/score" else None
        documents: list[str] = request.get("documents") or request["text_2"]
        query: str = request.get("query") or request["text_1"]
        async with OpenAiCompatibleRerankClient(
            base_url, request["model"], backend=backend, route=route
        ) as client:
            return await client.rerank(query, documents, top_n=request.get("top_n"))
    async with OpenAiCompatibleChatClient(base_url, request["model"], backend=backend) as chat:
        return await chat.count_tokens(_messages(request))


def _messages(request: dict[str, Any]) -> Any:
    """The chat input that makes the library send ``request``: vLLM's takes the messages,
    SGLang's one prompt text per message."""
    if "messages" in request:
        return request["messages"][-1]["content"]
    prompts = request["prompt"]
    if isinstance(prompts, list):
        return [ChatMessage(role=ChatRole.USER, contents=[TextContent(text)]) for text in prompts]
    return prompts


@pytest.mark.parametrize("transcript", SERVICE, ids=lambda t: t.id)
async def test_replay_reads_what_the_server_said(transcript: Transcript) -> None:
    result, received = await _replayed(transcript)
    expected = transcript.expected
    if transcript.request.get("input") == []:  # the server's 400, never asked: nothing to embed
        assert (len(result), received) == (0, [])
        return
    assert received, "the client sent nothing"
    if "error" in expected:
        assert isinstance(result, ProviderError), result
        assert result.status == expected["error"]["status"]
        assert expected["error"]["message"][:60] in str(result) + (result.body or "")
        return
    assert not isinstance(result, ProviderError), result
    if transcript.api == "embeddings":
        assert len(result) == expected["count"]
        assert {e.dimensions for e in result} == {expected["dimensions"]}
        assert result.usage.input_token_count == expected["usage"]["prompt_tokens"]
    elif transcript.api == "rerank":
        scores = sorted(expected["scores"], key=lambda pair: -pair[1])
        assert [d.index for d in result.documents] == [index for index, _ in scores]
        assert [d.raw_score for d in result.documents] == pytest.approx([s for _, s in scores])
    else:
        assert (result.count, result.max_model_len) == (
            expected["count"],
            expected["max_model_len"],
        )
        assert json.loads(received[-1].body).keys() >= {"model"}

"""``OpenAiCompatibleRerankClient`` and ``count_tokens`` against the real ``vllm serve`` (0.33.0).

Rerank (server set ``embed``): vLLM 0.33 mounts ``/rerank``, ``/v1/rerank``, ``/v2/rerank`` and
``/score`` for an embedding model too (``enable_scoring_api``: a bi-encoder, whose score is
the cosine similarity of the query's and the document's vectors, in [-1, 1]), not only for a
cross-encoder. The scripted engine pools deterministic vectors (``rigs/pooled_vectors.py``), so
each test computes the scores vLLM must send from the token ids the engine logged.

Token counts (server sets ``plain`` and ``qwen3-hermes``): ``/tokenize`` with the chat's
messages and tools, checked against the prompt the engine is then given for the same chat.
"""

from __future__ import annotations

from contextlib import aclosing

import pytest

from providers import ChatOptions, OpenAiCompatibleChatClient
from providers.rerank.client import OpenAiCompatibleRerankClient
from providers.rerank.errors import RerankUnavailableError
from providers.rerank.routes import VLLM_SCORE
from tests.integration.rigs.pooled_vectors import pooled_vector
from tests.integration.rigs.scenarios import SCENARIOS
from tests.integration.rigs.vllm.server import EngineRecord, VllmServer

WIDTH = 64
QUERY = "the weather in Paris"
DOCUMENTS = (
    "Bread needs flour, water and salt.",
    "the weather in Paris is sunny",
    "the weather in Tokyo",
    "Paris",
)


def cosine_scores(
    records: list[EngineRecord], query: str, documents: tuple[str, ...]
) -> list[float]:
    """Each document's cosine similarity to the query, from the vectors the engine pooled."""
    vectors: dict[str, list[float]] = {}
    for record in records:
        assert record.pooling is not None and record.pooling["task"] == "embed"
        vectors[record.prompt] = pooled_vector(record.pooling["prompt_token_ids"], WIDTH)
    assert set(vectors) == {query, *documents}, "the engine pooled other texts"
    q = vectors[query]
    return [sum(a * b for a, b in zip(q, vectors[d], strict=True)) for d in documents]


def ranker(server: VllmServer, **kwargs: object) -> OpenAiCompatibleRerankClient:
    return OpenAiCompatibleRerankClient(
        server.base_url,
        server.model_id,
        backend="vllm",
        **kwargs,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize("top_n", [None, 2])
async def test_rerank_orders_by_the_servers_scores(
    vllm_embed: VllmServer, top_n: int | None
) -> None:
    """``/v1/rerank``: the documents most similar first, each with the score vLLM computed and
    its own index; ``top_n`` keeps the best ones."""
    before = len(vllm_embed.prompts())
    async with ranker(vllm_embed) as client:
        result = await client.rerank(QUERY, list(DOCUMENTS), top_n=top_n)
    scores = cosine_scores(vllm_embed.prompts()[before:], QUERY, DOCUMENTS)
    order = sorted(range(len(DOCUMENTS)), key=lambda i: -scores[i])[: top_n or len(DOCUMENTS)]
    assert [doc.index for doc in result.documents] == order
    for doc in result.documents:
        assert doc.score == pytest.approx(scores[doc.index], abs=1e-5)
        assert doc.document == DOCUMENTS[doc.index]
    assert order[0] == 1, "the document sharing the query's tokens must come first"
    assert min(scores) < 0, "a bi-encoder's cosine can go negative (the kind test relies on it)"


async def test_score_route_gives_the_same_scores(vllm_embed: VllmServer) -> None:
    """``route=VLLM_SCORE`` (``/score``, ``text_1``/``text_2``): the same cosine scores."""
    before = len(vllm_embed.prompts())
    async with ranker(vllm_embed, route=VLLM_SCORE) as client:
        result = await client.rerank(QUERY, list(DOCUMENTS))
    scores = cosine_scores(vllm_embed.prompts()[before:], QUERY, DOCUMENTS)
    assert {doc.index: doc.score for doc in result.documents} == pytest.approx(
        dict(enumerate(scores)), abs=1e-5
    )


async def test_a_bi_encoder_score_is_not_called_a_probability(vllm_embed: VllmServer) -> None:
    """An embedding model's rerank scores are cosines in [-1, 1]: a result that says
    ``probability`` while holding a negative score misleads a caller that thresholds at 0.5."""
    async with ranker(vllm_embed) as client:
        result = await client.rerank(QUERY, list(DOCUMENTS))
    negative = [doc.score for doc in result.documents if doc.score < 0]
    assert negative, "the scripted vectors give at least one negative cosine"
    assert result.score_kind != "probability"


async def test_a_chat_model_has_no_rerank_route(vllm_plain: VllmServer) -> None:
    """A model served for chat: 404 ``{"detail": "Not Found"}`` for ``/v1/rerank``, typed as
    "this server does not rerank" with the fix."""
    async with ranker(vllm_plain) as client:
        with pytest.raises(RerankUnavailableError) as caught:
            await client.rerank(QUERY, list(DOCUMENTS))
    assert caught.value.status == 404
    assert caught.value.fix


async def test_token_count_is_the_prompt_the_engine_gets(vllm_qwen3_hermes: VllmServer) -> None:
    """``count_tokens`` with messages and tools (``/tokenize``, chat form): exactly the prompt
    size the engine is then given for the same chat, and ``max_model_len`` as the window."""
    scenario = SCENARIOS["tool-call"]
    options = scenario.options()
    async with OpenAiCompatibleChatClient(
        vllm_qwen3_hermes.base_url, vllm_qwen3_hermes.model_id, backend="vllm"
    ) as client:
        counted = await client.count_tokens(scenario.prompt, options)
        vllm_qwen3_hermes.script(scenario.model_text)
        await client.get_response(scenario.prompt, options)
    engine = vllm_qwen3_hermes.prompts()[-1]
    assert counted.count == engine.prompt_tokens
    assert counted.max_model_len == vllm_qwen3_hermes.max_model_len
    assert counted.exact is True
    assert counted.source == "vllm:/tokenize"
    assert "get_weather" in engine.prompt, "the tools were rendered into the counted prompt"


async def test_token_count_without_tools(vllm_plain: VllmServer) -> None:
    """Plain messages: the count equals the engine's prompt for the same chat."""
    scenario = SCENARIOS["text"]
    async with aclosing(
        OpenAiCompatibleChatClient(vllm_plain.base_url, vllm_plain.model_id, backend="vllm")
    ) as client:
        counted = await client.count_tokens(scenario.prompt, scenario.options())
        vllm_plain.script(scenario.model_text)
        await client.get_response(scenario.prompt, scenario.options())
    assert counted.count == vllm_plain.prompts()[-1].prompt_tokens
    assert counted.max_model_len == vllm_plain.max_model_len


async def test_preflight_refuses_before_sending(vllm_plain: VllmServer) -> None:
    """``preflight_context_check=True``: a prompt past the window counted by vLLM's tokenizer
    is refused before the chat request is sent (the engine never sees it)."""
    from providers import ContextLengthExceededError

    before = len(vllm_plain.prompts())
    async with OpenAiCompatibleChatClient(
        vllm_plain.base_url, vllm_plain.model_id, backend="vllm", preflight_context_check=True
    ) as client:
        with pytest.raises(ContextLengthExceededError) as caught:
            await client.get_response("weather " * 5000, ChatOptions(max_output_tokens=4))
    assert caught.value.context_window == vllm_plain.max_model_len
    assert len(vllm_plain.prompts()) == before

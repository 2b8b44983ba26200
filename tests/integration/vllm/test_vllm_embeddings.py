"""``OpenAiCompatibleEmbeddingGenerator`` against the real ``vllm serve`` (0.33.0) embedding.

Server set ``embed``: Qwen3's weightless folder served with ``--runner pooling --convert
embed``, so vLLM's own front end takes the request (its request models, tokenisation, context
check, ``dimensions`` check, response building and base64 encoding); the scripted engine pools
each prompt into a deterministic vector (``rigs/pooled_vectors.py``) from the token ids it was
given and logs them. Each test computes what every value's vector must be from those logged
ids, so a vector given to the wrong value, cut or altered on the way fails it.

Server set ``plain`` (a chat model) checks what a user gets from a server that does not embed.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import aclosing

import pytest

from providers import (
    ContextLengthExceededError,
    EmbeddingGenerationOptions,
    EmbeddingsUnavailableError,
    GeneratedEmbeddings,
    InvalidRequestError,
    ModelNotFoundError,
    OpenAiCompatibleEmbeddingGenerator,
)
from providers.backends import EmbeddingEncoding
from providers.factory import create_embedding_generator
from tests.integration.rigs.pooled_vectors import pooled_vector
from tests.integration.rigs.vllm.server import EngineRecord, VllmServer

WIDTH = 64
"""The weightless Qwen3's ``hidden_size``: vLLM's ``embedding_size`` for the converted model."""

TEXTS = (
    "It is sunny in Paris.",
    "Bread needs flour, water and salt.",
    "The weather in Tokyo is rainy.",
    "Héllo wörld — ünïcode ✓",
    "It is sunny in Paris.",  # a repeat: the same vector, at its own position
)


def generator(server: VllmServer, **kwargs: object) -> OpenAiCompatibleEmbeddingGenerator:
    return OpenAiCompatibleEmbeddingGenerator(
        server.base_url,
        server.model_id,
        backend="vllm",
        **kwargs,  # type: ignore[arg-type]
    )


def pooled_since(server: VllmServer, before: int) -> list[EngineRecord]:
    records = server.prompts()[before:]
    assert all(record.pooling is not None for record in records), "a request was not pooled"
    return records


def expected_by_prompt(records: Sequence[EngineRecord]) -> dict[str, list[float]]:
    """Each pooled prompt (as the engine decoded it) → the vector the engine returned for it."""
    expected: dict[str, list[float]] = {}
    for record in records:
        assert record.pooling is not None
        ids = record.pooling["prompt_token_ids"]
        vector = pooled_vector(ids, WIDTH, dimensions=record.pooling["dimensions"])
        assert expected.setdefault(record.prompt, vector) == vector
    return expected


def assert_vectors(
    generated: GeneratedEmbeddings, texts: Sequence[str], records: Sequence[EngineRecord]
) -> None:
    expected = expected_by_prompt(records)
    assert set(expected) == set(texts), "the engine pooled other prompts than the values"
    assert len(generated) == len(texts)
    for position, (text, embedding) in enumerate(zip(texts, generated, strict=True)):
        assert embedding.dimensions == WIDTH
        assert embedding.vector.tolist() == pytest.approx(expected[text], abs=1e-6), (
            f"value {position} ({text!r}) got another value's vector"
        )


@pytest.mark.parametrize("encoding", ["float", "base64"])
async def test_vectors_in_order_with_usage(
    vllm_embed: VllmServer, encoding: EmbeddingEncoding
) -> None:
    """Both encodings give each value its own vector, in order; usage is the prompt tokens."""
    before = len(vllm_embed.prompts())
    async with generator(vllm_embed, encoding_format=encoding) as embedder:
        generated = await embedder.generate(list(TEXTS))
    records = pooled_since(vllm_embed, before)
    assert len(records) == len(TEXTS), "vLLM sends one engine request per input"
    assert {record.pooling["task"] for record in records if record.pooling} == {"embed"}
    assert_vectors(generated, TEXTS, records)
    assert generated[0].vector == generated[4].vector
    assert generated[0].model_id == vllm_embed.model_id
    assert generated.usage is not None
    assert generated.usage.input_token_count == sum(record.prompt_tokens for record in records)
    assert generated.usage.total_token_count == generated.usage.input_token_count
    assert embedder.encoding_format == encoding, "vLLM honours both encodings: no fallback"


async def test_a_batch_split_keeps_the_order(vllm_embed: VllmServer) -> None:
    """``max_batch_size=2`` on five values: three requests, vectors in the values' order, the
    usage of all three added up."""
    before = len(vllm_embed.prompts())
    async with generator(vllm_embed, max_batch_size=2) as embedder:
        generated = await embedder.generate(list(TEXTS))
    records = pooled_since(vllm_embed, before)
    assert len(records) == len(TEXTS)
    assert_vectors(generated, TEXTS, records)
    assert generated.usage is not None
    assert generated.usage.input_token_count == sum(record.prompt_tokens for record in records)


async def test_vectors_are_unit_length_as_vllm_normalises(vllm_embed: VllmServer) -> None:
    """vLLM's ``embed`` pooler normalises by default (``use_activation``); ``normalize=True``
    on the client then records a server norm of 1 and changes nothing."""
    async with generator(vllm_embed, normalize=True) as embedder:
        generated = await embedder.generate(["It is sunny in Paris.", "Bread."])
    for embedding in generated:
        assert embedding.additional_properties is not None
        assert embedding.additional_properties["server_norm"] == pytest.approx(1.0, abs=1e-5)
        assert embedding.vector.norm() == pytest.approx(1.0, abs=1e-6)


async def test_the_standard_pipeline_embeds(vllm_embed: VllmServer) -> None:
    """``create_embedding_generator`` (telemetry, retry, wire) gives the same vectors."""
    before = len(vllm_embed.prompts())
    embedder = create_embedding_generator(vllm_embed.base_url, vllm_embed.model_id, backend="vllm")
    async with aclosing(embedder):
        generated = await embedder.generate(["It is sunny in Paris."])
    assert_vectors(generated, ["It is sunny in Paris."], pooled_since(vllm_embed, before))


async def test_dimensions_refused_for_a_model_without_matryoshka(vllm_embed: VllmServer) -> None:
    """vLLM 0.33 answers 400 "Model '…' does not support Matryoshka embeddings; dimensions must
    be unset (received dimensions=8)." (``param`` null) before the engine runs: the typed
    error, with the fix and the server's answer kept."""
    before = len(vllm_embed.prompts())
    async with generator(vllm_embed) as embedder:
        with pytest.raises(EmbeddingsUnavailableError) as caught:
            await embedder.generate(["It is sunny."], EmbeddingGenerationOptions(dimensions=8))
    error = caught.value
    assert error.status == 400
    assert error.backend == "vllm"
    assert error.param == "dimensions"
    assert "dimensions" in error.fix
    assert error.body is not None and "does not support Matryoshka" in error.body
    assert len(vllm_embed.prompts()) == before, "the engine must not have been reached"


async def test_a_chat_model_has_no_embeddings_route(vllm_plain: VllmServer) -> None:
    """A model served for chat: vLLM 0.33 mounts routes by task, so ``/v1/embeddings`` is
    FastAPI's own 404 ``{"detail": "Not Found"}`` (not the older "does not support Embeddings
    API" 400): still ``EmbeddingsUnavailableError`` with the fix, never a model-not-found."""
    before = len(vllm_plain.prompts())
    async with generator(vllm_plain) as embedder:
        with pytest.raises(EmbeddingsUnavailableError) as caught:
            await embedder.generate(["It is sunny."])
    error = caught.value
    assert not isinstance(error, ModelNotFoundError)
    assert error.status == 404
    assert error.body is not None and "Not Found" in error.body
    assert "--runner pooling" in error.fix
    assert len(vllm_plain.prompts()) == before


async def test_unknown_model_is_model_not_found(vllm_embed: VllmServer) -> None:
    """404 "The model `no-such-model` does not exist." is about the model, not the route."""
    async with OpenAiCompatibleEmbeddingGenerator(
        vllm_embed.base_url, "no-such-model", backend="vllm"
    ) as embedder:
        with pytest.raises(ModelNotFoundError) as caught:
            await embedder.generate(["It is sunny."])
    assert caught.value.status == 404
    assert "no-such-model" in str(caught.value)


async def test_an_input_over_the_context_is_typed_with_sizes(vllm_embed: VllmServer) -> None:
    """One input over ``--max-model-len 4096``: vLLM's 400 (param ``input_tokens``, "at least
    4097 input tokens") is a ``ContextLengthExceededError`` with both sizes."""
    async with generator(vllm_embed) as embedder:
        with pytest.raises(ContextLengthExceededError) as caught:
            await embedder.generate(["short", "weather " * 5000])
    error = caught.value
    assert error.status == 400
    assert error.context_window == vllm_embed.max_model_len
    assert error.prompt_tokens is not None and error.prompt_tokens > vllm_embed.max_model_len


async def test_an_empty_string_is_an_invalid_request(vllm_embed: VllmServer) -> None:
    """``""`` among the values: vLLM answers 400 "The decoder prompt cannot be empty" for the
    whole request; the caller gets an ``InvalidRequestError``, no partial list."""
    async with generator(vllm_embed) as embedder:
        with pytest.raises(InvalidRequestError) as caught:
            await embedder.generate(["It is sunny.", ""])
    assert caught.value.status == 400
    assert "cannot be empty" in str(caught.value)

"""``OpenAiCompatibleEmbeddingGenerator`` against a real llama-server (issue 36).

Three server starts at most, one per flag set: ``--embeddings --pooling mean`` with a physical
batch of 32 tokens (``-ub 32 -b 32``, so an over-long input is cheap to send), ``--embeddings
--pooling none``, and the session's plain chat server (no ``--embeddings``) for the 501. The
model is the tiny random-weight qwen2 GGUF: its vectors mean nothing, but they are
deterministic, distinct per text and as wide as its ``embedding_length``, read here from the
GGUF itself so nothing about the width is taken from the server or assumed.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from providers.abstractions.embedding_errors import (
    EmbeddingInputTooLargeError,
    EmbeddingResponseError,
    EmbeddingsUnavailableError,
)
from providers.abstractions.embeddings import EmbeddingGenerationOptions
from providers.abstractions.errors import ProviderError
from providers.embeddings import OpenAiCompatibleEmbeddingGenerator
from tests.integration.llama_server import LlamaServer
from tests.integration.tiny_model import TINY_MODEL_NAME, cache_dir

EMBED_FLAGS = ("--embeddings", "--pooling", "mean", "-ub", "32", "-b", "32")
"""Mean pooling; a physical batch of 32 tokens, so a 100-token input is over it."""
POOLING_NONE_FLAGS = ("--embeddings", "--pooling", "none")
UBATCH = 32

TEXTS = (
    "The cat sat on the mat.",
    "Quantum chromodynamics describes the strong force between quarks and gluons.",
    "Bonjour, comment ça va aujourd'hui ?",
    "1 2 3 4 5 6 7 8 9 10",
    "An embedding is a vector of floating point numbers.",
)
"""Distinct texts, each well under ``UBATCH`` tokens, together well over it."""
TOO_LARGE = "hello " * 100
"""About 100 tokens: over ``-ub 32``, far under the context."""


_GGUF_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q"}
_GGUF_SCALARS |= {12: "d"}
_GGUF_STRING, _GGUF_ARRAY = 8, 9


@functools.cache
def gguf_width(model: Path | str) -> int:
    """The model's ``<architecture>.embedding_length``, read from the GGUF header.

    A small reader of the key-value section, stopping at the key (``gguf.GGUFReader`` parses
    the 150k-token vocabulary first, tens of seconds on a loaded machine)."""
    with open(model, "rb") as file:

        def take(fmt: str) -> Any:
            size = struct.calcsize("<" + fmt)
            return struct.unpack("<" + fmt, file.read(size))[0]

        def string() -> str:
            return file.read(take("Q")).decode("utf-8")

        def value(kind: int) -> Any:
            if kind == _GGUF_STRING:
                return string()
            if kind == _GGUF_ARRAY:
                item_kind, count = take("I"), take("Q")
                return [value(item_kind) for _ in range(count)]
            return take(_GGUF_SCALARS[kind])

        assert file.read(4) == b"GGUF"
        _version, _tensors, pairs = take("I"), take("Q"), take("Q")
        seen: dict[str, Any] = {}
        for _ in range(pairs):
            key = string()
            seen[key] = value(take("I"))
            architecture = seen.get("general.architecture")
            if architecture is not None and f"{architecture}.embedding_length" in seen:
                return int(seen[f"{architecture}.embedding_length"])
    raise ValueError(f"{model} has no embedding_length")


def start(*extra: str) -> Iterator[LlamaServer]:
    """The tiny model by its relative name (the answers' ``model`` then names no home folder)."""
    with LlamaServer(TINY_MODEL_NAME, cwd=cache_dir(), extra_args=extra) as server:
        yield server


@pytest.fixture(scope="module")
def embed_server(rig: dict[str, Any]) -> Iterator[LlamaServer]:
    yield from start(*EMBED_FLAGS)


@pytest.fixture(scope="module")
def pooling_none_server(rig: dict[str, Any]) -> Iterator[LlamaServer]:
    yield from start(*POOLING_NONE_FLAGS)


@asynccontextmanager
async def generator(
    server: Any, posts: list[dict[str, Any]] | None = None, **kwargs: Any
) -> AsyncIterator[OpenAiCompatibleEmbeddingGenerator]:
    """A generator for ``server``; ``posts`` collects the JSON body of every request sent."""

    async def seen(request: httpx.Request) -> None:
        if posts is not None:
            posts.append(httpx.Response(200, content=request.content).json())

    async with httpx.AsyncClient(event_hooks={"request": [seen]}) as http:
        embedder = OpenAiCompatibleEmbeddingGenerator(
            server.base_url, backend="llamacpp", http_client=http, **kwargs
        )
        async with embedder:
            yield embedder


def matrix(vectors: Any) -> np.ndarray[Any, Any]:
    return np.stack([vector.to_numpy() for vector in vectors])


async def test_a_split_batch_gives_each_text_its_own_vector_in_order(
    embed_server: LlamaServer, rig: dict[str, Any]
) -> None:
    width = gguf_width(rig["model"])
    posts: list[dict[str, Any]] = []
    async with generator(embed_server, posts, max_batch_size=2) as embedder:
        together = await embedder.generate(list(TEXTS))
    async with generator(embed_server) as embedder:
        alone = [await embedder.generate([text]) for text in TEXTS]

    assert [post["input"] for post in posts] == [list(TEXTS[0:2]), list(TEXTS[2:4]), [TEXTS[4]]]
    assert [embedding.dimensions for embedding in together] == [width] * len(TEXTS)
    assert {embedding.model_id for embedding in together} == {TINY_MODEL_NAME}
    batched = matrix(together.vectors())
    single = matrix(one[0].vector for one in alone)
    np.testing.assert_allclose(batched, single, rtol=1e-4, atol=1e-5)
    # Each text's vector is nearest to its own single-request vector: the order is the inputs'.
    distances = np.linalg.norm(batched[:, None, :] - single[None, :, :], axis=2)
    assert list(distances.argmin(axis=1)) == list(range(len(TEXTS)))
    assert min(distances[i, j] for i in range(5) for j in range(5) if i != j) > 1e-3
    assert together.usage is not None
    counts = [one.usage.input_token_count if one.usage else None for one in alone]
    assert None not in counts
    assert together.usage.input_token_count == sum(count or 0 for count in counts)
    assert (
        sum(count or 0 for count in counts) > UBATCH
    )  # the whole list would not fit one physical batch


async def test_base64_and_float_answers_give_the_same_vectors(embed_server: LlamaServer) -> None:
    by_format = {}
    for encoding in ("base64", "float"):
        posts: list[dict[str, Any]] = []
        async with generator(embed_server, posts, encoding_format=encoding) as embedder:
            by_format[encoding] = matrix((await embedder.generate(list(TEXTS[:3]))).vectors())
        assert [post["encoding_format"] for post in posts] == [encoding]
    np.testing.assert_array_equal(by_format["base64"], by_format["float"])
    # The server really answered in each shape (not floats both times).
    async with httpx.AsyncClient() as http:
        for encoding, kind in (("base64", str), ("float", list)):
            answer = await http.post(
                f"{embed_server.base_url}/v1/embeddings",
                json={"input": [TEXTS[0]], "encoding_format": encoding},
            )
            assert isinstance(answer.json()["data"][0]["embedding"], kind)


async def test_llamacpp_is_the_rows_encoding_and_it_is_honoured(embed_server: LlamaServer) -> None:
    posts: list[dict[str, Any]] = []
    async with generator(embed_server, posts) as embedder:
        generated = await embedder.generate([TEXTS[0]])
        assert embedder.encoding_format == "base64"  # not turned to float by a refusal
    assert posts[0]["encoding_format"] == "base64"
    assert np.isfinite(generated[0].vector.to_numpy()).all()


async def test_without_embeddings_flag_the_501_says_to_start_with_it(plain_server: Any) -> None:
    async with generator(plain_server) as embedder:
        with pytest.raises(EmbeddingsUnavailableError) as caught:
            await embedder.generate([TEXTS[0]])
    assert caught.value.status == 501
    assert "--embeddings" in caught.value.fix
    assert "--embeddings" in str(caught.value)
    assert "does not support embeddings" in (caught.value.body or "")


async def test_pooling_none_is_the_typed_400(pooling_none_server: LlamaServer) -> None:
    async with generator(pooling_none_server) as embedder:
        with pytest.raises(EmbeddingsUnavailableError) as caught:
            await embedder.generate([TEXTS[0]])
    assert caught.value.status == 400
    assert "--pooling mean" in caught.value.fix
    assert "Pooling type 'none'" in (caught.value.body or "")


async def test_an_input_over_the_ubatch_is_input_too_large(embed_server: LlamaServer) -> None:
    async with generator(embed_server) as embedder:
        try:
            await embedder.generate([TEXTS[0], TOO_LARGE])
        except ProviderError as exc:
            caught: ProviderError = exc
    assert isinstance(caught, EmbeddingInputTooLargeError), f"{type(caught).__name__}: {caught}"
    assert caught.status == 500
    assert "--ubatch-size" in caught.fix


async def test_an_input_over_the_ubatch_is_refused_with_the_servers_words(
    embed_server: LlamaServer,
) -> None:
    """Whatever its class (the xfail above), the answer is an error quoting the server, never
    vectors for a shortened input."""
    async with generator(embed_server) as embedder:
        with pytest.raises(ProviderError) as caught:
            await embedder.generate([TEXTS[0], TOO_LARGE])
    assert caught.value.status == 500
    assert "too large to process" in str(caught.value)
    assert f"current batch size: {UBATCH}" in str(caught.value)


async def test_dimensions_below_the_width_is_a_width_error(
    embed_server: LlamaServer, rig: dict[str, Any]
) -> None:
    width = gguf_width(rig["model"])
    async with httpx.AsyncClient() as http:
        raw = await http.post(
            f"{embed_server.base_url}/v1/embeddings",
            json={"input": [TEXTS[0]], "encoding_format": "float", "dimensions": 8},
        )
    assert len(raw.json()["data"][0]["embedding"]) == width  # llama.cpp ignores `dimensions`
    async with generator(embed_server) as embedder:
        with pytest.raises(EmbeddingResponseError) as caught:
            await embedder.generate([TEXTS[0]], EmbeddingGenerationOptions(dimensions=8))
    assert caught.value.problem == "wrong width"
    assert f"{width} dimensions where 8 were asked" in str(caught.value)
    assert caught.value.backend == "llamacpp"

"""``OpenAiCompatibleEmbeddingGenerator`` over respx: shapes, the request, batching, usage."""

from __future__ import annotations

import json
import math
from typing import Any

import httpx
import pytest
import respx

from providers.abstractions.embeddings import (
    EmbeddingGenerationOptions,
    EmbeddingGenerator,
    generate_vector,
)
from providers.abstractions.errors import ConfigurationError, ConfigurationTypeError
from providers.embeddings import NORMALIZED, SERVER_NORM, OpenAiCompatibleEmbeddingGenerator
from tests.unit.providers.embeddings.helpers import BASE, URL, answer, b64, echoing, vector_for


def generator(**kwargs: Any) -> OpenAiCompatibleEmbeddingGenerator:
    return OpenAiCompatibleEmbeddingGenerator(BASE, "emb", **kwargs)


def test_it_is_an_embedding_generator() -> None:
    assert isinstance(generator(), EmbeddingGenerator)


@pytest.mark.parametrize("shape", ["float", "base64"])
@respx.mock
async def test_each_shape_is_read_whatever_was_asked(shape: str) -> None:
    for backend in ("vllm", "sglang"):  # one asks for base64, the other for floats
        respx.post(URL).mock(side_effect=echoing(shape=shape))
        async with generator(backend=backend) as embedder:
            generated = await embedder.generate(["a", "bbb"])
        assert [e.vector.tolist() for e in generated] == [vector_for("a"), vector_for("bbb")]
        assert [e.model_id for e in generated] == ["emb", "emb"]


@respx.mock
async def test_the_row_chooses_the_encoding_and_values_go_as_strings() -> None:
    seen: list[Any] = []
    respx.post(URL).mock(side_effect=echoing(seen=seen))
    async with generator(backend="llamacpp") as llama, generator(backend="lmstudio") as studio:
        await llama.generate(["x"])
        await studio.generate(["x"])
    assert seen[0] == {"model": "emb", "input": ["x"], "encoding_format": "base64"}
    assert seen[1]["encoding_format"] == "float"  # LM Studio ignores the field: ask what it sends


@respx.mock
async def test_options_reach_the_body_without_overriding_the_input() -> None:
    seen: list[Any] = []
    respx.post(URL).mock(side_effect=echoing(seen=seen, width=2))
    options = EmbeddingGenerationOptions(
        model_id="other", dimensions=2, additional_properties={"input": "no", "truncate": 8}
    )
    async with generator() as embedder:
        await embedder.generate(["x"], options)
    assert seen[0]["input"] == ["x"]
    assert seen[0]["model"] == "other"
    assert seen[0]["dimensions"] == 2
    assert seen[0]["truncate"] == 8


@respx.mock
async def test_a_long_list_is_split_and_reassembled_in_order() -> None:
    seen: list[Any] = []
    respx.post(URL).mock(side_effect=echoing(seen=seen, reverse=True, shape="base64"))
    texts = ["a" * n for n in range(1, 8)]
    async with generator(max_batch_size=3) as embedder:
        generated = await embedder.generate(texts)
    assert [body["input"] for body in seen] == [texts[0:3], texts[3:6], texts[6:7]]
    assert [e.vector[0] for e in generated] == [float(n) for n in range(1, 8)]
    assert generated.usage is not None
    assert generated.usage.input_token_count == sum(range(1, 8))
    assert generated.usage.total_token_count == sum(range(1, 8))


@respx.mock
async def test_the_batch_limit_comes_from_the_row_unless_given() -> None:
    assert generator(backend="openai").max_batch_size == 2048
    assert generator(backend="vllm").max_batch_size == 256
    assert generator(backend="openai", max_batch_size=10).max_batch_size == 10
    with pytest.raises(ConfigurationError):
        generator(max_batch_size=0)


@respx.mock
async def test_no_usage_reported_is_none() -> None:
    respx.post(URL).mock(return_value=httpx.Response(200, json=answer([{"embedding": [1.0]}])))
    async with generator() as embedder:
        generated = await embedder.generate(["x"])
    assert generated.usage is None
    assert generated[0].vector.tolist() == [1.0]


@respx.mock
async def test_normalisation_is_client_side_and_recorded() -> None:
    body = answer([{"index": 0, "embedding": b64([3.0, 4.0])}])
    respx.post(URL).mock(return_value=httpx.Response(200, json=body))
    async with generator(normalize=True) as embedder:
        embedding = (await embedder.generate(["x"]))[0]
    assert embedding.vector.tolist() == pytest.approx([0.6, 0.8])
    assert math.isclose(embedding.vector.norm(), 1.0, rel_tol=1e-6)
    assert embedding.additional_properties == {NORMALIZED: "client", SERVER_NORM: 5.0}
    async with generator() as plain:
        assert (await plain.generate(["x"]))[0].additional_properties is None


async def test_nothing_to_embed_sends_nothing() -> None:
    with respx.mock:  # any request would fail: no route
        async with generator() as embedder:
            generated = await embedder.generate([])
    assert len(generated) == 0


async def test_one_string_and_token_ids_are_refused_before_sending() -> None:
    async with generator() as embedder:
        with pytest.raises(ConfigurationTypeError, match="not one string"):
            await embedder.generate("hello")
        with pytest.raises(ConfigurationTypeError, match=r"values\[1\] is a list"):
            await embedder.generate(["ok", [1, 2, 3]])  # type: ignore[list-item]
        with pytest.raises(ConfigurationError, match="dimensions"):
            await embedder.generate(["x"], EmbeddingGenerationOptions(dimensions=0))


@respx.mock
async def test_generate_vector_reads_one_value() -> None:
    respx.post(URL).mock(side_effect=echoing())
    async with generator() as embedder:
        vector = await generate_vector(embedder, "abc")
    assert vector.tolist() == vector_for("abc")


@respx.mock
async def test_the_api_key_is_sent_and_never_shown() -> None:
    route = respx.post(URL).mock(side_effect=echoing())
    embedder = OpenAiCompatibleEmbeddingGenerator(BASE, "emb", "sk-secret-123")
    await embedder.generate(["x"])
    assert route.calls[0].request.headers["authorization"] == "Bearer sk-secret-123"
    assert "sk-secret" not in repr(embedder)
    await embedder.aclose()


@respx.mock
async def test_a_refused_base64_falls_back_to_floats_for_good() -> None:
    seen: list[Any] = []
    refusal = {"object": "error", "message": "encoding_format: base64 is not supported"}
    respond = echoing(seen=seen)

    def server(request: httpx.Request) -> httpx.Response:
        if json.loads(request.content)["encoding_format"] == "base64":
            seen.append(json.loads(request.content))
            return httpx.Response(400, json=refusal)
        return respond(request)

    respx.post(URL).mock(side_effect=server)
    async with generator(backend="vllm") as embedder:
        first = await embedder.generate(["ab"])
        await embedder.generate(["c"])
    assert first[0].vector.tolist() == vector_for("ab")
    assert [body["encoding_format"] for body in seen] == ["base64", "float", "float"]
    assert embedder.encoding_format == "float"

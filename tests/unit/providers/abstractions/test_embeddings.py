"""Embedding values: compact float32 vectors, in order, with usage; the one-value helpers."""

from __future__ import annotations

import base64
import struct
from collections.abc import Sequence

import pytest

from providers.abstractions.embeddings import (
    DelegatingEmbeddingGenerator,
    Embedding,
    EmbeddingGenerationOptions,
    EmbeddingGenerator,
    EmbeddingVector,
    GeneratedEmbeddings,
    generate_embedding,
    generate_vector,
)
from providers.abstractions.usage import UsageDetails


def test_a_vector_holds_float32_in_four_bytes_a_dimension() -> None:
    vector = EmbeddingVector([0.1, -2.5, 3.0])
    assert len(vector) == 3
    assert vector.nbytes == 12
    assert vector.buffer().nbytes == 12
    assert vector[1] == -2.5
    assert vector[0] == pytest.approx(0.1, rel=1e-6)  # rounded to float32
    assert vector[0] != 0.1
    assert vector[1:] == [-2.5, 3.0]
    assert vector.tolist() == list(vector)


def test_bytes_are_read_as_little_endian_float32() -> None:
    raw = struct.pack("<3f", 1.0, -0.5, 2.25)
    vector = EmbeddingVector.from_bytes(base64.b64decode(base64.b64encode(raw)))
    assert vector.tolist() == [1.0, -0.5, 2.25]
    assert vector.to_bytes() == raw
    with pytest.raises(ValueError, match="whole number"):
        EmbeddingVector.from_bytes(raw[:-1])


def test_numpy_sees_the_same_buffer_read_only() -> None:
    numpy = pytest.importorskip("numpy")
    vector = EmbeddingVector([1.0, 2.0])
    array = vector.to_numpy()
    assert array.dtype == numpy.float32
    assert array.tolist() == [1.0, 2.0]
    assert not array.flags.writeable
    assert numpy.shares_memory(array, numpy.frombuffer(vector.buffer(), dtype=numpy.float32))


def test_normalising_gives_length_one_and_leaves_zero_alone() -> None:
    assert EmbeddingVector([3.0, 4.0]).normalized().tolist() == pytest.approx([0.6, 0.8])
    assert EmbeddingVector([3.0, 4.0]).norm() == 5.0
    zero = EmbeddingVector([0.0, 0.0])
    assert zero.normalized() is zero


def test_vectors_compare_by_value_and_are_not_hashable() -> None:
    assert EmbeddingVector([1.0]) == EmbeddingVector([1.0])
    assert EmbeddingVector([1.0]) != EmbeddingVector([2.0])
    with pytest.raises(TypeError):
        hash(EmbeddingVector([1.0]))


def test_the_repr_shows_a_few_values_and_the_width() -> None:
    assert repr(EmbeddingVector(range(10))) == ("EmbeddingVector([0, 1, 2, 3, …], dimensions=10)")


def test_generated_embeddings_keep_order_and_usage() -> None:
    usage = UsageDetails(input_token_count=4)
    embeddings = [Embedding(EmbeddingVector([float(i)]), "m") for i in range(3)]
    generated = GeneratedEmbeddings(embeddings, usage=usage)
    assert len(generated) == 3
    assert [e.vector[0] for e in generated] == [0.0, 1.0, 2.0]
    assert generated.vectors()[2] == EmbeddingVector([2.0])
    assert generated[1:][0] is embeddings[1]
    assert generated.usage is usage
    assert generated[0].dimensions == 1


class _Fixed:
    def __init__(self, count: int = 1) -> None:
        self.count = count
        self.asked: list[tuple[list[str], EmbeddingGenerationOptions | None]] = []
        self.closed = False

    async def generate(
        self, values: Sequence[str], options: EmbeddingGenerationOptions | None = None
    ) -> GeneratedEmbeddings:
        self.asked.append((list(values), options))
        return GeneratedEmbeddings(Embedding(EmbeddingVector([1.0])) for _ in range(self.count))

    async def aclose(self) -> None:
        self.closed = True


async def test_a_delegating_generator_forwards_and_closes() -> None:
    inner = _Fixed()
    assert isinstance(inner, EmbeddingGenerator)
    options = EmbeddingGenerationOptions(dimensions=1)
    async with DelegatingEmbeddingGenerator(inner) as layer:
        assert len(await layer.generate(["a"], options)) == 1
    assert inner.asked == [(["a"], options)]
    assert inner.closed


async def test_the_one_value_helpers_refuse_a_wrong_count() -> None:
    assert (await generate_vector(_Fixed(), "x")).tolist() == [1.0]
    assert (await generate_embedding(_Fixed(), "x")).dimensions == 1
    with pytest.raises(ValueError, match="got 2"):
        await generate_embedding(_Fixed(count=2), "x")

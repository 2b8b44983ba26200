"""``CachingEmbeddingGenerator``: only missing values are sent, in order, bounded by entries."""

from __future__ import annotations

import pytest

from providers.abstractions.embedding_errors import EmbeddingResponseError
from providers.abstractions.embeddings import (
    EmbeddingGenerationOptions,
    GeneratedEmbeddings,
)
from providers.abstractions.errors import ConfigurationError
from providers.layers.embedding_cache import CachingEmbeddingGenerator
from tests.unit.providers.layers.embedding_fakes import FakeEmbedder


async def test_only_missing_values_are_sent_each_once() -> None:
    inner = FakeEmbedder()
    cache = CachingEmbeddingGenerator(inner)
    first = await cache.generate(["a", "bb"])
    second = await cache.generate(["ccc", "a", "ccc", "bb", "dddd"])
    assert inner.calls == [["a", "bb"], ["ccc", "dddd"]]
    assert [e.vector[0] for e in second] == [3.0, 1.0, 3.0, 2.0, 4.0]
    assert second[1] is first[0]
    assert second.additional_properties == {"cache_hits": 2}
    assert second.usage is not None and second.usage.input_token_count == 7


async def test_all_cached_sends_nothing_and_reports_no_usage() -> None:
    inner = FakeEmbedder()
    cache = CachingEmbeddingGenerator(inner)
    await cache.generate(["a"])
    again = await cache.generate(["a", "a"])
    assert len(inner.calls) == 1
    assert again.usage is None
    assert again.additional_properties == {"cache_hits": 2}


async def test_model_dimensions_and_extra_keys_are_part_of_the_key() -> None:
    inner = FakeEmbedder()
    cache = CachingEmbeddingGenerator(inner)
    await cache.generate(["a"])
    await cache.generate(["a"], EmbeddingGenerationOptions(dimensions=8))
    await cache.generate(["a"], EmbeddingGenerationOptions(model_id="other"))
    await cache.generate(["a"], EmbeddingGenerationOptions(additional_properties={"x": 1}))
    await cache.generate(["a"], EmbeddingGenerationOptions(dimensions=8))
    assert len(inner.calls) == 4
    assert len(cache) == 4


async def test_the_least_recently_used_entry_goes_first() -> None:
    inner = FakeEmbedder()
    cache = CachingEmbeddingGenerator(inner, max_entries=2)
    await cache.generate(["a", "b"])
    await cache.generate(["a"])  # a is now the most recent
    await cache.generate(["c"])  # b goes
    inner.calls.clear()
    await cache.generate(["a", "b", "c"])
    assert inner.calls == [["b"]]
    assert len(cache) == 2


async def test_a_failure_caches_nothing() -> None:
    inner = FakeEmbedder(RuntimeError("down"))
    cache = CachingEmbeddingGenerator(inner)
    with pytest.raises(RuntimeError):
        await cache.generate(["a"])
    assert len(cache) == 0


async def test_an_inner_answer_of_the_wrong_length_is_refused() -> None:
    class Short(FakeEmbedder):
        async def generate(self, values: object, options: object = None) -> GeneratedEmbeddings:
            return GeneratedEmbeddings()

    with pytest.raises(EmbeddingResponseError, match="0 embeddings for 1 values"):
        await CachingEmbeddingGenerator(Short()).generate(["a"])


async def test_what_the_inner_generator_refuses_goes_to_it_unchanged() -> None:
    inner = FakeEmbedder()
    await CachingEmbeddingGenerator(inner).generate("ab")
    assert inner.calls == [["a", "b"]]  # the fake takes it; the wire client refuses it


@pytest.mark.parametrize("bad", [0, -3, True, 1.5])
def test_the_bound_must_be_a_positive_int(bad: object) -> None:
    with pytest.raises(ConfigurationError):
        CachingEmbeddingGenerator(FakeEmbedder(), max_entries=bad)  # type: ignore[arg-type]

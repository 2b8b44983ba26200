"""``create_embedding_generator``: the standard embedding pipeline, in order, each layer
optional."""

from __future__ import annotations

from typing import Any

import pytest

from providers.abstractions.errors import ConfigurationError
from providers.embeddings import OpenAiCompatibleEmbeddingGenerator
from providers.factory import create_embedding_generator
from providers.layers.embedding_cache import CachingEmbeddingGenerator
from providers.layers.embedding_retry import RetryingEmbeddingGenerator
from providers.layers.retry import RetryPolicy
from telemetry.embeddings import TelemetryEmbeddingGenerator


def kinds(generator: Any) -> list[type]:
    found = [type(generator)]
    while hasattr(generator, "inner"):
        generator = generator.inner
        found.append(type(generator))
    return found


def test_the_default_pipeline_is_telemetry_over_retry_over_the_wire() -> None:
    generator = create_embedding_generator("http://h.test", "m", backend="vllm")
    assert kinds(generator) == [
        TelemetryEmbeddingGenerator,
        RetryingEmbeddingGenerator,
        OpenAiCompatibleEmbeddingGenerator,
    ]
    assert isinstance(generator, TelemetryEmbeddingGenerator)
    assert generator.backend == "vllm"


def test_a_cache_sits_outside_retry_and_each_layer_can_go() -> None:
    policy = RetryPolicy(max_attempts=7)
    generator = create_embedding_generator("http://h.test", retry=policy, cache_entries=5)
    assert kinds(generator) == [
        TelemetryEmbeddingGenerator,
        CachingEmbeddingGenerator,
        RetryingEmbeddingGenerator,
        OpenAiCompatibleEmbeddingGenerator,
    ]
    retry = generator.inner.inner  # type: ignore[attr-defined]
    assert retry.policy is policy
    bare = create_embedding_generator("http://h.test", retry=None, telemetry=False)
    assert kinds(bare) == [OpenAiCompatibleEmbeddingGenerator]


def test_auto_is_the_generic_row_and_keywords_reach_the_wire() -> None:
    generator = create_embedding_generator(
        "http://h.test", backend="auto", telemetry=False, retry=None, max_batch_size=3
    )
    assert isinstance(generator, OpenAiCompatibleEmbeddingGenerator)
    assert (generator.profile.name, generator.max_batch_size) == ("generic", 3)


def test_an_unknown_keyword_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="create_embedding_generator"):
        create_embedding_generator("http://h.test", batch=3)

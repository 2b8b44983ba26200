"""YAML embeddings: a backend's ``embeddings:`` block, the ``embeddings`` role, and
``create_embedding_generator(config, role)``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import respx

from providers.abstractions.errors import ConfigurationError
from providers.config import OaicompatConfig, create_embedding_generator, load_config
from providers.embeddings import OpenAiCompatibleEmbeddingGenerator
from providers.layers.embedding_cache import CachingEmbeddingGenerator
from providers.layers.embedding_retry import RetryingEmbeddingGenerator
from telemetry.embeddings import TelemetryEmbeddingGenerator
from tests.unit.providers.embeddings.helpers import echoing


def _load(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> OaicompatConfig:
    path = tmp_path / "oaicompat.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path, env or {})


def layers(generator: Any) -> list[Any]:
    stack = [generator]
    while hasattr(stack[-1], "inner"):
        stack.append(stack[-1].inner)
    return stack


FILE = """
backends:
  chat: {base_url: 'http://chat.test:8000', backend: vllm, model_id: qwen}
  local-embed:
    base_url: 'http://embed.test:8080'
    backend: llamacpp
    model_id: nomic
    api_key: ${EMBED_KEY}
    retry: {max_attempts: 5}
    embeddings: {max_batch_size: 2, normalize: true, cache_entries: 100}
roles: {main: chat, embeddings: local-embed}
"""


@respx.mock
async def test_the_embeddings_role_builds_the_configured_pipeline(tmp_path: Path) -> None:
    config = _load(tmp_path, FILE, {"EMBED_KEY": "sk-embed-1"})
    seen: list[Any] = []
    route = respx.post("http://embed.test:8080/v1/embeddings").mock(
        side_effect=echoing(seen=seen, shape="base64")
    )
    generator = create_embedding_generator(config)
    stack = layers(generator)
    assert [type(layer) for layer in stack] == [
        TelemetryEmbeddingGenerator,
        CachingEmbeddingGenerator,
        RetryingEmbeddingGenerator,
        OpenAiCompatibleEmbeddingGenerator,
    ]
    core = stack[-1]
    assert (core.profile.name, core.model_id, core.max_batch_size, core.normalize) == (
        "llamacpp",
        "nomic",
        2,
        True,
    )
    assert stack[2].policy.max_attempts == 5
    assert stack[1].max_entries == 100
    generated = await generator.generate(["a", "bb", "ccc"])
    await generator.generate(["a"])  # cached: not sent
    assert [body["input"] for body in seen] == [["a", "bb"], ["ccc"]]
    assert seen[0]["encoding_format"] == "base64"
    assert route.calls[0].request.headers["authorization"] == "Bearer sk-embed-1"
    assert all(embedding.additional_properties for embedding in generated)
    await generator.aclose()


def test_the_one_backend_that_embeds_serves_the_default_role(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        "backends:\n"
        "  chat: {base_url: 'http://a.test'}\n"
        "  emb: {base_url: 'http://b.test', embeddings: {model_id: bge, encoding_format: float}}\n",
    )
    core = layers(create_embedding_generator(config, telemetry=False))[-1]
    assert core.url == "http://b.test/v1/embeddings"
    assert (core.model_id, core.encoding_format) == ("bge", "float")


def test_a_role_or_backend_name_is_used_as_given(tmp_path: Path) -> None:
    config = _load(tmp_path, "backends:\n  chat: {base_url: 'http://a.test', model_id: m}\n")
    core = layers(create_embedding_generator(config, "chat", retry=None))[-1]
    assert core.model_id == "m"
    assert isinstance(create_embedding_generator(config, "chat"), TelemetryEmbeddingGenerator)


def test_no_backend_that_embeds_is_an_error_naming_the_known_ones(tmp_path: Path) -> None:
    config = _load(tmp_path, "backends:\n  chat: {base_url: 'http://a.test'}\n")
    with pytest.raises(ConfigurationError, match="no role or backend named 'embeddings'"):
        create_embedding_generator(config)


def test_two_backends_that_embed_need_a_role(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        "backends:\n"
        "  a: {base_url: 'http://a.test', embeddings: {}}\n"
        "  b: {base_url: 'http://b.test', embeddings: {}}\n",
    )
    with pytest.raises(ConfigurationError, match=r"several backends declare embeddings \(a, b\)"):
        create_embedding_generator(config)


def test_an_unknown_key_in_the_block_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="embeddings"):
        _load(tmp_path, "backends:\n  a: {base_url: 'http://a.test', embeddings: {batch: 2}}\n")


@respx.mock
async def test_keywords_win_over_the_file(tmp_path: Path) -> None:
    config = _load(tmp_path, FILE, {"EMBED_KEY": "k"})
    seen: list[Any] = []
    respx.post("http://embed.test:8080/v1/embeddings").mock(side_effect=echoing(seen=seen))
    async with httpx.AsyncClient() as http:
        generator = create_embedding_generator(config, max_batch_size=10, http_client=http)
        await generator.generate(["a", "b", "c"])
    assert len(seen) == 1
    assert json.dumps(seen[0]["input"]) == '["a", "b", "c"]'

"""pydantic-ai's ``Embedder``, LangChain's ``Embeddings`` and Agent Framework's embedding client,
each embedding through the oaicompat pipeline against a loopback backend.

Each run must give back the vectors the backend computed for each text, in the texts' order
(the backend answers in base64 or floats and in reverse order is the pipeline's business), and
the usage it reported; requests must carry the texts (never token ids) and ``dimensions``.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator
from contextlib import aclosing
from pathlib import Path
from typing import Any

import pytest

from providers import create_embedding_generator
from providers.abstractions.embeddings import EmbeddingGenerator
from providers.replay.server import ReplayServer
from tests.integrations.embedding_backend import MODEL, EmbeddingBackend, tokens_of, vector_for
from tests.integrations.frameworks import require

DOCUMENTS = ["Paris is the capital of France.", "The Seine flows through Paris.", "Lyon"]
QUERY = "What is the capital of France?"


@pytest.fixture(params=["float", "base64"])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[tuple[str, EmbeddingBackend]]:
    handler = EmbeddingBackend(shape=request.param)
    async with ReplayServer(handler) as server:
        yield f"{server.base_url}/v1", handler


def generator_for(url: str) -> EmbeddingGenerator:
    return create_embedding_generator(url, MODEL, backend="vllm", telemetry=False, retry=None)


def _pipeline(server: ReplayServer) -> aclosing[EmbeddingGenerator]:
    return aclosing(generator_for(f"{server.base_url}/v1"))


# --- pydantic-ai -------------------------------------------------------------------------------


async def test_pydantic_ai_embedder_embeds_queries_and_documents(
    backend: tuple[str, EmbeddingBackend],
) -> None:
    pydantic_ai = require("pydantic_ai")
    from providers.integrations.pydantic_ai import OaicompatEmbeddingModel

    url, handler = backend
    async with aclosing(generator_for(url)) as generator:
        model = OaicompatEmbeddingModel(generator)
        embedder = pydantic_ai.Embedder(model)
        documents = await embedder.embed_documents(DOCUMENTS)
        query = await embedder.embed_query(QUERY)
    assert [list(v) for v in documents.embeddings] == [vector_for(t) for t in DOCUMENTS]
    assert list(documents[DOCUMENTS[1]]) == vector_for(DOCUMENTS[1])
    assert documents.input_type == "document"
    assert documents.usage.input_tokens == tokens_of(DOCUMENTS)
    assert documents.model_name == MODEL
    assert [list(v) for v in query.embeddings] == [vector_for(QUERY)]
    assert query.input_type == "query"
    assert [body["input"] for body in handler.bodies] == [DOCUMENTS, [QUERY]]


async def test_pydantic_ai_dimensions_setting_reaches_the_server() -> None:
    pydantic_ai = require("pydantic_ai")
    from providers.integrations.pydantic_ai import OaicompatEmbeddingModel

    handler = EmbeddingBackend(honours_dimensions=True)
    async with ReplayServer(handler) as server, _pipeline(server) as generator:
        embedder = pydantic_ai.Embedder(
            OaicompatEmbeddingModel(generator), settings={"dimensions": 3}
        )
        result = await embedder.embed_query(QUERY)
    assert [list(v) for v in result.embeddings] == [vector_for(QUERY, 3)]
    assert handler.bodies[0]["dimensions"] == 3


async def test_pydantic_ai_ignored_dimensions_are_a_model_error() -> None:
    pydantic_ai = require("pydantic_ai")
    from pydantic_ai.exceptions import ModelAPIError

    from providers.integrations.pydantic_ai import OaicompatEmbeddingModel

    handler = EmbeddingBackend(honours_dimensions=False)
    async with ReplayServer(handler) as server, _pipeline(server) as generator:
        embedder = pydantic_ai.Embedder(OaicompatEmbeddingModel(generator))
        with pytest.raises(ModelAPIError) as caught:
            await embedder.embed_query(QUERY, settings={"dimensions": 3})
    assert "dimensions" in str(caught.value)


def test_pydantic_ai_from_config_and_the_sync_face(tmp_path: Path) -> None:
    """``OaicompatEmbeddingModel.from_config`` finds the backend declaring ``embeddings:``
    (its ``model_id`` there), and ``Embedder.embed_documents_sync`` works from a script."""
    pydantic_ai = require("pydantic_ai")
    from providers.integrations.pydantic_ai import OaicompatEmbeddingModel

    with _served(EmbeddingBackend()) as (url, handler):
        path = _config(tmp_path, url)
        model = OaicompatEmbeddingModel.from_config(path)
        result = pydantic_ai.Embedder(model).embed_documents_sync(DOCUMENTS)
    assert [list(v) for v in result.embeddings] == [vector_for(t) for t in DOCUMENTS]
    assert handler.bodies[0]["model"] == "embed-model"


# --- LangChain ---------------------------------------------------------------------------------


async def test_langchain_async_methods(backend: tuple[str, EmbeddingBackend]) -> None:
    require("langchain_core")
    from providers.integrations.langchain_embeddings import OaicompatEmbeddings

    url, handler = backend
    async with aclosing(generator_for(url)) as generator:
        embeddings = OaicompatEmbeddings(generator)
        documents = await embeddings.aembed_documents(DOCUMENTS)
        query = await embeddings.aembed_query(QUERY)
        await embeddings.aclose()
    assert documents == [vector_for(t) for t in DOCUMENTS]
    assert query == vector_for(QUERY)
    assert [body["input"] for body in handler.bodies] == [DOCUMENTS, [QUERY]]


def test_langchain_sync_methods_from_a_script_and_a_running_loop(tmp_path: Path) -> None:
    require("langchain_core")
    from providers.integrations.langchain_embeddings import OaicompatEmbeddings

    with _served(EmbeddingBackend(shape="base64")) as (url, handler):
        embeddings = OaicompatEmbeddings.from_config(_config(tmp_path, url), dimensions=4)
        documents = embeddings.embed_documents(DOCUMENTS)

        async def inside_a_loop() -> list[float]:
            return embeddings.embed_query(QUERY)  # (blocks this loop, never re-enters it)

        query = asyncio.run(inside_a_loop())
        embeddings.close()
    assert documents == [vector_for(t, 4) for t in DOCUMENTS]
    assert query == vector_for(QUERY, 4)
    assert [body["dimensions"] for body in handler.bodies] == [4, 4]


async def test_langchain_in_a_vector_store(backend: tuple[str, EmbeddingBackend]) -> None:
    """LangChain's own ``InMemoryVectorStore`` finds a stored text by its own vector."""
    require("langchain_core")
    from langchain_core.vectorstores import InMemoryVectorStore

    from providers.integrations.langchain_embeddings import OaicompatEmbeddings

    url, _ = backend
    async with aclosing(generator_for(url)) as generator:
        store = InMemoryVectorStore(OaicompatEmbeddings(generator))
        await store.aadd_texts(DOCUMENTS)
        (found,) = await store.asimilarity_search(DOCUMENTS[1], k=1)
    assert found.page_content == DOCUMENTS[1]


# --- Agent Framework ---------------------------------------------------------------------------


async def test_agent_framework_embedding_client(backend: tuple[str, EmbeddingBackend]) -> None:
    agent_framework = require("agent_framework")
    from providers.integrations.agent_framework import OaicompatEmbeddingClient

    url, handler = backend
    async with aclosing(generator_for(url)) as generator:
        client = OaicompatEmbeddingClient(generator)
        assert isinstance(client, agent_framework.SupportsGetEmbeddings)
        result = await client.get_embeddings(DOCUMENTS, options={"dimensions": 8})
    assert [e.vector for e in result] == [vector_for(t) for t in DOCUMENTS]
    assert [e.dimensions for e in result] == [8, 8, 8]
    assert {e.model for e in result} == {MODEL}
    assert result.usage == {
        "input_token_count": tokens_of(DOCUMENTS),
        "total_token_count": tokens_of(DOCUMENTS),
    }
    assert handler.bodies[0]["dimensions"] == 8
    assert client.service_url() == url


async def test_agent_framework_from_config_owns_its_pipeline(tmp_path: Path) -> None:
    require("agent_framework")
    from providers.integrations.agent_framework import OaicompatEmbeddingClient

    handler = EmbeddingBackend()
    async with ReplayServer(handler) as server:
        path = _config(tmp_path, f"{server.base_url}/v1")
        client = OaicompatEmbeddingClient.from_config(path)
        result = await client.get_embeddings([QUERY], options={"extra_body": {"truncate": True}})
        await client.aclose()
    assert [e.vector for e in result] == [vector_for(QUERY)]
    assert handler.bodies[0]["truncate"] is True
    assert handler.bodies[0]["model"] == "embed-model"


async def test_agent_framework_errors_are_the_frameworks() -> None:
    require("agent_framework")
    from agent_framework.exceptions import ChatClientException

    from providers.integrations.agent_framework import OaicompatEmbeddingClient

    handler = EmbeddingBackend(honours_dimensions=False)
    async with ReplayServer(handler) as server, _pipeline(server) as generator:
        client = OaicompatEmbeddingClient(generator)
        with pytest.raises(ChatClientException) as caught:
            await client.get_embeddings([QUERY], options={"dimensions": 2})
    assert "dimensions" in str(caught.value)


# --- helpers -----------------------------------------------------------------------------------


def _config(folder: Path, url: str) -> Path:
    """A file whose chat backend also embeds, with another model id for embeddings."""
    backend = {
        "base_url": url,
        "model_id": "chat-model",
        "backend": "vllm",
        "embeddings": {"model_id": "embed-model"},
    }
    config = {"backends": {"local": backend}, "roles": {"main": "local"}}
    path = folder / "oaicompat.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


class _served:
    """A ``ReplayServer`` on a thread of its own, for tests of blocking methods."""

    def __init__(self, handler: EmbeddingBackend) -> None:
        self.handler = handler
        self._ready = threading.Event()
        self._done: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._url = ""
        self._thread = threading.Thread(target=asyncio.run, args=(self._serve(),), daemon=True)

    async def _serve(self) -> None:
        async with ReplayServer(self.handler) as server:
            self._url = f"{server.base_url}/v1"
            self._loop, self._done = asyncio.get_running_loop(), asyncio.Event()
            self._ready.set()
            await self._done.wait()

    def __enter__(self) -> tuple[str, EmbeddingBackend]:
        self._thread.start()
        assert self._ready.wait(10)
        return self._url, self.handler

    def __exit__(self, *exc: Any) -> None:
        assert self._loop is not None and self._done is not None
        self._loop.call_soon_threadsafe(self._done.set)
        self._thread.join(10)

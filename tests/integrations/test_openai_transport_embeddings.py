"""openai-python's ``client.embeddings.create`` over ``OaicompatTransport`` into the embedding
pipeline, against a loopback backend.

The backend answers with float lists even when base64 was asked (LM Studio, SGLang): the SDK
asks base64 by default and decodes what it gets as base64, so without the transport it reads
nonsense. Through the transport it must decode the vectors the backend computed, exactly (the
backend's values are exact in float32), with the usage the backend reported.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import aclosing
from pathlib import Path
from typing import Any

import httpx
import pytest

from providers import create_chat_client, create_embedding_generator
from providers.abstractions.embeddings import EmbeddingGenerator
from providers.integrations.openai import OaicompatSyncTransport, OaicompatTransport
from providers.replay.server import ReplayServer
from tests.integrations.embedding_backend import MODEL, EmbeddingBackend, tokens_of, vector_for
from tests.integrations.frameworks import require

TEXTS = ["the first document", "a second, longer document about vectors", "third"]


@pytest.fixture
async def floats_backend() -> AsyncIterator[tuple[ReplayServer, EmbeddingBackend]]:
    backend = EmbeddingBackend(shape="float", honours_dimensions=False)
    async with ReplayServer(backend) as server:
        yield server, backend


def pipeline(server: ReplayServer, **kwargs: Any) -> EmbeddingGenerator:
    # lmstudio's row asks floats; "auto" (the generic row) may ask base64: the answer is floats
    # either way, which is the case under test
    kwargs.setdefault("backend", "auto")
    return create_embedding_generator(
        f"{server.base_url}/v1", MODEL, telemetry=False, retry=None, **kwargs
    )


def sdk_client(generator: EmbeddingGenerator, flavour: str = "httpx") -> Any:
    openai = require("openai")
    chat = create_chat_client("http://127.0.0.1:9/v1", "unused", telemetry=False)
    if flavour == "httpx2":
        httpx2 = require("httpx2")
        from providers.integrations.openai_httpx2 import OaicompatHttpx2Transport

        transport: Any = OaicompatHttpx2Transport(chat, embeddings=generator)
        http: Any = httpx2.AsyncClient(transport=transport)
    else:
        http = httpx.AsyncClient(transport=OaicompatTransport(chat, embeddings=generator))
    return openai.AsyncOpenAI(
        api_key="unused", base_url="http://oaicompat.invalid/v1", http_client=http, max_retries=0
    )


@pytest.mark.parametrize("flavour", ["httpx", "httpx2"])
@pytest.mark.parametrize("encoding", [None, "float", "base64"])
async def test_the_sdk_decodes_the_backends_vectors(
    floats_backend: tuple[ReplayServer, EmbeddingBackend], encoding: str | None, flavour: str
) -> None:
    server, backend = floats_backend
    async with aclosing(pipeline(server)) as generator:
        client = sdk_client(generator, flavour)
        extra = {} if encoding is None else {"encoding_format": encoding}
        response = await client.embeddings.create(model=MODEL, input=TEXTS, **extra)
        await client.close()
    got = [item.embedding for item in response.data]
    if encoding == "base64":  # asked explicitly: the SDK hands the string on, undecoded
        import base64
        import struct

        got = [list(struct.unpack("<8f", base64.b64decode(item))) for item in got]
    assert got == [vector_for(text) for text in TEXTS]
    assert [item.index for item in response.data] == [0, 1, 2]
    assert response.model == MODEL
    assert response.usage.prompt_tokens == tokens_of(TEXTS)
    assert response.usage.total_tokens == tokens_of(TEXTS)
    assert [body["input"] for body in backend.bodies] == [TEXTS]


async def test_the_wire_carries_base64_when_the_sdk_asked_it(
    floats_backend: tuple[ReplayServer, EmbeddingBackend],
) -> None:
    """The SDK's default request asks base64, and the answer's strings are base64 of
    little-endian float32 (what the SDK decodes), although the backend sent floats."""
    import base64
    import struct

    server, _ = floats_backend
    async with aclosing(pipeline(server)) as generator:
        transport = OaicompatTransport(create_chat_client("http://127.0.0.1:9/v1", "x"))
        transport = OaicompatTransport(transport.client, embeddings=generator)
        async with httpx.AsyncClient(transport=transport) as http:
            body = {"model": MODEL, "input": TEXTS, "encoding_format": "base64"}
            answer = (await http.post("http://sdk.invalid/v1/embeddings", json=body)).json()
    strings = [item["embedding"] for item in answer["data"]]
    assert all(isinstance(value, str) for value in strings)
    decoded = [list(struct.unpack("<8f", base64.b64decode(value))) for value in strings]
    assert decoded == [vector_for(text) for text in TEXTS]


async def test_a_single_string_input_gets_one_vector(
    floats_backend: tuple[ReplayServer, EmbeddingBackend],
) -> None:
    server, _ = floats_backend
    async with aclosing(pipeline(server)) as generator:
        client = sdk_client(generator)
        response = await client.embeddings.create(model=MODEL, input="just one")
        await client.close()
    assert [item.embedding for item in response.data] == [vector_for("just one")]


async def test_dimensions_honoured_by_the_backend_come_back_that_wide() -> None:
    backend = EmbeddingBackend(shape="float", honours_dimensions=True)
    async with ReplayServer(backend) as server, aclosing(pipeline(server)) as generator:
        client = sdk_client(generator)
        response = await client.embeddings.create(model=MODEL, input=TEXTS, dimensions=4)
        await client.close()
    assert [item.embedding for item in response.data] == [vector_for(t, 4) for t in TEXTS]
    assert backend.bodies[0]["dimensions"] == 4


async def test_dimensions_the_backend_ignored_are_refused_out_loud(
    floats_backend: tuple[ReplayServer, EmbeddingBackend],
) -> None:
    openai = require("openai")
    server, backend = floats_backend
    async with aclosing(pipeline(server)) as generator:
        client = sdk_client(generator)
        with pytest.raises(openai.BadRequestError) as caught:
            await client.embeddings.create(model=MODEL, input=TEXTS, dimensions=4)
        await client.close()
    assert "dimensions" in str(caught.value)
    assert backend.bodies[0]["dimensions"] == 4  # (it was asked, and ignored)


async def test_an_answer_without_usage_has_none() -> None:
    backend = EmbeddingBackend(usage=False)
    async with ReplayServer(backend) as server, aclosing(pipeline(server)) as generator:
        transport = OaicompatTransport(create_chat_client("http://127.0.0.1:9/v1", "x"))
        transport = OaicompatTransport(transport.client, embeddings=generator)
        async with httpx.AsyncClient(transport=transport) as http:
            body = {"model": MODEL, "input": ["a b"], "encoding_format": "float"}
            answer = (await http.post("http://sdk.invalid/v1/embeddings", json=body)).json()
    assert "usage" not in answer  # unknown, not zero
    assert answer["data"][0]["embedding"] == vector_for("a b")


async def test_token_ids_are_refused_with_the_fix(
    floats_backend: tuple[ReplayServer, EmbeddingBackend],
) -> None:
    server, backend = floats_backend
    async with aclosing(pipeline(server)) as generator:
        transport = OaicompatTransport(
            create_chat_client("http://127.0.0.1:9/v1", "x"), embeddings=generator
        )
        async with httpx.AsyncClient(transport=transport) as http:
            body = {"model": MODEL, "input": [[1, 2, 3]]}
            answer = await http.post("http://sdk.invalid/v1/embeddings", json=body)
    assert answer.status_code == 400
    assert "check_embedding_ctx_length=False" in answer.json()["error"]["message"]
    assert backend.bodies == []


async def test_without_a_generator_embeddings_pass_through(
    floats_backend: tuple[ReplayServer, EmbeddingBackend],
) -> None:
    """A chat-only transport leaves embeddings to the network, as before: the SDK's base64
    request reaches the backend as sent."""
    server, backend = floats_backend
    transport = OaicompatTransport(create_chat_client("http://127.0.0.1:9/v1", "x"))
    async with httpx.AsyncClient(transport=transport) as http:
        body = {"model": MODEL, "input": ["x"], "encoding_format": "base64"}
        await http.post(f"{server.base_url}/v1/embeddings", json=body)
    assert backend.bodies == [body]


def test_the_blocking_transport_embeds(tmp_path: Path) -> None:
    """``OpenAI(http_client=httpx.Client(transport=OaicompatSyncTransport.from_config(...)))``
    with a file whose backend declares ``embeddings:``: the role is found without naming it."""
    import asyncio
    import threading

    openai = require("openai")
    backend = EmbeddingBackend(shape="float")
    started = threading.Event()
    stop: list[Any] = []
    ports: list[int] = []

    async def serve() -> None:
        async with ReplayServer(backend) as server:
            ports.append(server.port)
            done = asyncio.Event()
            stop.append((asyncio.get_running_loop(), done))
            started.set()
            await done.wait()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    started.wait(10)
    config = {
        "backends": {
            "local": {
                "base_url": f"http://127.0.0.1:{ports[0]}/v1",
                "model_id": MODEL,
                "backend": "lmstudio",
                "embeddings": {},
            }
        },
        "roles": {"main": "local"},
    }
    path = tmp_path / "oaicompat.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")
    try:
        transport = OaicompatSyncTransport.from_config(path, "main")
        with openai.OpenAI(
            api_key="unused",
            base_url="http://oaicompat.invalid/v1",
            http_client=httpx.Client(transport=transport),
            max_retries=0,
        ) as client:
            response = client.embeddings.create(model="any", input=TEXTS)
    finally:
        loop, done = stop[0]
        loop.call_soon_threadsafe(done.set)
        thread.join(10)
    assert [item.embedding for item in response.data] == [vector_for(t) for t in TEXTS]
    assert backend.bodies[0]["model"] == MODEL  # the configured model, not the SDK's "any"


@pytest.mark.parametrize("embeddings", [None, "local", False])
async def test_from_config_embeddings_role(
    floats_backend: tuple[ReplayServer, EmbeddingBackend], tmp_path: Path, embeddings: Any
) -> None:
    """Found without naming it (a backend declares ``embeddings:``), named, or turned off (the
    request then reaches the backend as the SDK sent it: base64 asked, floats answered)."""
    server, backend = floats_backend
    entry = {"base_url": f"{server.base_url}/v1", "model_id": MODEL, "embeddings": {}}
    config = {"backends": {"local": entry}, "roles": {"main": "local"}}
    path = tmp_path / "oaicompat.yaml"
    path.write_text(json.dumps(config), encoding="utf-8")
    transport = OaicompatTransport.from_config(path, "main", embeddings=embeddings)
    async with httpx.AsyncClient(transport=transport) as http:
        body = {"model": "any", "input": ["x y"], "encoding_format": "base64"}
        answer = (await http.post(f"{server.base_url}/v1/embeddings", json=body)).json()
    await transport.aclose()
    (item,) = answer["data"]
    if embeddings is False:
        assert backend.bodies == [body]
        assert item["embedding"] == vector_for("x y")  # the backend's floats, as sent
    else:
        assert isinstance(item["embedding"], str)  # reshaped into what was asked
        assert backend.bodies[0]["model"] == MODEL

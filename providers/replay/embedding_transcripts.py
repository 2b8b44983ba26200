"""Embedding transcripts: recorded ``/v1/embeddings`` exchanges, read, recorded and replayed.

They live apart from the chat transcripts, under ``transcripts/embeddings/<backend>/`` (the
chat loader's ``*/*.json`` does not reach them, so the chat suite never tries to replay an
embeddings answer as a chat completion). Body and sidecar are laid out as for chat
(``transcripts/README.md``), with ``"api": "embeddings"`` and an ``expected`` of their own:

* ``vectors``: one list of float32 values per input, in the inputs' order;
* ``model_id``: the answer's ``model``; ``usage``: its ``prompt_tokens`` / ``total_tokens``;
* ``error``: ``null``, or the class the client must raise, its HTTP status (``null`` for an
  answer refused after a 200) and ``fix_mentions``, a word the error's message must carry.

``expected_embeddings`` derives ``expected`` from the body without the client: the vectors by
plain JSON and base64 decoding, the error by the recording's own declaration (it knows what it
provoked: a server started without ``--embeddings`` must be ``EmbeddingsUnavailableError``).
``replay_embedding_bytes`` then asks the client, on loopback, what it makes of the same bytes.
"""

from __future__ import annotations

import base64
import binascii
import json
import struct
import sys
from array import array
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from providers.abstractions.embeddings import EmbeddingGenerationOptions, GeneratedEmbeddings
from providers.abstractions.errors import ProviderError
from providers.embeddings import OpenAiCompatibleEmbeddingGenerator
from providers.replay.recording import (
    Exchange,
    Recording,
    identify_server,
    post_exchange,
    provenance,
    write_transcript,
)
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from providers.replay.transcripts import Transcript, default_root
from providers.transport.endpoint import Endpoint
from providers.transport.stale_connections import new_http_client

__all__ = [
    "EMBEDDINGS_API",
    "embeddings_root",
    "expected_embeddings",
    "iter_embedding_transcripts",
    "record_embedding_exchange",
    "replay_embedding_bytes",
    "summarize_embeddings",
]

EMBEDDINGS_API = "embeddings"
"""The sidecar's ``api`` and the folder under the transcripts root."""

_READER_NOTE = (
    "`expected` read from the body by providers.replay.embedding_transcripts."
    "expected_embeddings (JSON and base64 decoding; the error as the recording declared it), "
    "not by the client."
)


def embeddings_root(root: Path | None = None) -> Path:
    """``<root>/embeddings``; ``root`` defaults to the repository's ``transcripts/``."""
    return (root or default_root()) / EMBEDDINGS_API


def iter_embedding_transcripts(root: Path | None = None) -> Iterator[Transcript]:
    """Every embedding transcript under ``embeddings_root(root)``, in a stable order."""
    for path in sorted(embeddings_root(root).glob("*/*.json")):
        yield Transcript.load(path)


def _float32(value: float) -> float:
    """``value`` as a float32 holds it (what a vector keeps of a JSON number)."""
    rounded: float = struct.unpack("<f", struct.pack("<f", value))[0]
    return rounded


def _decoded(raw: Any) -> list[float]:
    """A vector from a JSON list or a base64 string of little-endian float32 bytes."""
    if isinstance(raw, list):
        return [_float32(float(value)) for value in raw]
    if not isinstance(raw, str):
        raise ValueError(f"a vector of type {type(raw).__name__}")
    try:
        data = base64.b64decode(raw, validate=True)
    except binascii.Error:
        raise ValueError("a vector string that is not base64") from None
    values = array("f")
    values.frombytes(data)
    if sys.byteorder != "little":
        values.byteswap()
    return list(values)


def expected_embeddings(
    body: bytes, status: int, *, error: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The ``expected`` of one exchange, read from the body without the client.

    ``error`` is the recording's declaration (``class``, ``fix_mentions``; ``status`` defaults
    to the answer's): required for an error status, and also allowed for a 200 the client must
    refuse (``status`` then ``None``), e.g. vectors wider than the ``dimensions`` asked for."""
    empty: dict[str, Any] = {"vectors": [], "model_id": None, "usage": None}
    if status >= 400:
        if error is None:
            raise ValueError(f"an HTTP {status} answer needs the error it must raise declared")
        return {**empty, "error": {"status": status, **error}}
    payload = json.loads(body)
    items = payload["data"]
    if all("index" in item for item in items):
        items = sorted(items, key=lambda item: item["index"])
    usage = payload.get("usage")
    read = {
        "vectors": [_decoded(item["embedding"]) for item in items],
        "model_id": payload.get("model"),
        "usage": None
        if not isinstance(usage, dict)
        else {
            "input_token_count": usage.get("prompt_tokens"),
            "total_token_count": usage.get("total_tokens"),
        },
    }
    if error is not None:
        return {**empty, "error": {"status": None, **error}}
    return {**read, "error": None}


def summarize_embeddings(generated: GeneratedEmbeddings) -> dict[str, Any]:
    """What the client returned, in the shape of ``expected`` (without ``error``)."""
    usage = generated.usage
    return {
        "vectors": [vector.tolist() for vector in generated.vectors()],
        "model_id": generated[0].model_id if len(generated) else None,
        "usage": None
        if usage is None
        else {
            "input_token_count": usage.input_token_count,
            "total_token_count": usage.total_token_count,
        },
    }


def _error_summary(exc: ProviderError, fix_mentions: str | None) -> dict[str, Any]:
    """The error as ``expected.error`` holds it: ``fix_mentions`` stays when the message carries
    it, and is replaced by the whole message when it does not (so a diff shows what was said)."""
    message = str(exc)
    mentioned = fix_mentions if fix_mentions is not None and fix_mentions in message else message
    return {"status": exc.status, "class": type(exc).__name__, "fix_mentions": mentioned}


async def replay_embedding_bytes(
    status: int,
    body: bytes,
    content_type: str,
    request: Mapping[str, Any],
    *,
    backend: str | None = None,
    fix_mentions: str | None = None,
) -> tuple[dict[str, Any], list[ReceivedRequest]]:
    """Serve recorded bytes on loopback, ask ``OpenAiCompatibleEmbeddingGenerator`` for the
    recorded request's inputs (its ``encoding_format``, ``dimensions`` and ``model``, all in
    one request) and return the outcome in ``expected``'s shape with the requests it sent."""

    def answer(received: ReceivedRequest) -> RecordedReply:
        return RecordedReply(status, body, {"Content-Type": content_type})

    inputs = list(request["input"])
    options = EmbeddingGenerationOptions(dimensions=request.get("dimensions"))
    result: dict[str, Any]
    async with ReplayServer(answer) as server:
        generator = OpenAiCompatibleEmbeddingGenerator(
            server.base_url,
            request.get("model"),
            backend=backend,
            max_batch_size=max(1, len(inputs)),
            encoding_format=request.get("encoding_format"),
        )
        try:
            result = summarize_embeddings(await generator.generate(inputs, options))
            result["error"] = None
        except ProviderError as exc:
            result = {"vectors": [], "model_id": None, "usage": None}
            result["error"] = _error_summary(exc, fix_mentions)
        finally:
            await generator.aclose()
    return result, server.requests


async def record_embedding_exchange(
    base_url: str,
    request: Mapping[str, Any],
    *,
    root: Path,
    scenario: str,
    backend: str | None = None,
    flags: Sequence[str] | None = None,
    source: str,
    notes: str = "",
    error: Mapping[str, Any] | None = None,
    recorded_at: datetime | None = None,
) -> Recording:
    """POST ``request`` to the server's ``/v1/embeddings`` and write the transcript
    ``embeddings_root(root)/<backend>/<scenario>.{raw,json}``, ``expected`` read by
    ``expected_embeddings`` (``error``: what the client must raise, as declared there)."""
    endpoint = Endpoint.from_base_url(base_url)
    async with new_http_client(60.0) as http:
        identity = await identify_server(http, endpoint)
        exchange: Exchange = await post_exchange(http, f"{endpoint.api_base}/embeddings", request)
    sidecar: dict[str, Any] = {
        "provenance": provenance(
            identity,
            source=source,
            flags=flags,
            notes=notes,
            recorded_at=recorded_at or datetime.now(UTC),
            expected_by=_READER_NOTE,
        ),
        "api": EMBEDDINGS_API,
        "request": exchange.request,
        "response": {
            "status": exchange.status,
            "content_type": exchange.content_type,
            "headers": exchange.headers,
        },
        "expected": expected_embeddings(exchange.body, exchange.status, error=error),
    }
    folder = embeddings_root(root) / (backend or identity.backend)
    body_path, sidecar_path = write_transcript(folder, scenario, exchange, sidecar)
    return Recording(exchange, identity, sidecar, body_path, sidecar_path)

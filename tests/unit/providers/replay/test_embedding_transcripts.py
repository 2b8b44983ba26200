"""``providers.replay.embedding_transcripts``: the body's own reading, the replay, the folder."""

from __future__ import annotations

import base64
import json
import struct
from pathlib import Path

import pytest

from providers.replay.embedding_transcripts import (
    embeddings_root,
    expected_embeddings,
    iter_embedding_transcripts,
    replay_embedding_bytes,
)
from providers.replay.recording import Exchange, write_transcript


def as_base64(values: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


def answer(*items: dict[str, object]) -> bytes:
    body = {"model": "m", "data": list(items), "usage": {"prompt_tokens": 3, "total_tokens": 3}}
    return json.dumps(body).encode()


def test_both_shapes_read_as_the_same_float32_values_in_index_order() -> None:
    first, second = [0.1, -2.5], [1e-3, 7.0]
    floats = answer({"index": 1, "embedding": second}, {"index": 0, "embedding": first})
    packed = answer(
        {"index": 0, "embedding": as_base64(first)}, {"index": 1, "embedding": as_base64(second)}
    )
    read = expected_embeddings(floats, 200)
    assert read == expected_embeddings(packed, 200)
    assert read["vectors"][0] == [struct.unpack("<f", struct.pack("<f", 0.1))[0], -2.5]
    assert read["vectors"][0] != first  # float32, not the JSON's double
    assert read["usage"] == {"input_token_count": 3, "total_token_count": 3}
    assert (read["model_id"], read["error"]) == ("m", None)


def test_an_error_answer_needs_its_error_declared() -> None:
    with pytest.raises(ValueError, match="HTTP 501"):
        expected_embeddings(b'{"error": {}}', 501)
    declared = {"class": "EmbeddingsUnavailableError", "fix_mentions": "--embeddings"}
    read = expected_embeddings(b'{"error": {}}', 501, error=declared)
    assert read == {
        "vectors": [],
        "model_id": None,
        "usage": None,
        "error": {"status": 501, **declared},
    }


async def test_the_replay_sends_the_recorded_request_and_reads_the_answer() -> None:
    request = {"input": ["a", "b"], "encoding_format": "base64"}
    body = answer({"index": 1, "embedding": [3.0, 4.0]}, {"index": 0, "embedding": [1.0, 2.0]})
    result, received = await replay_embedding_bytes(
        200, body, "application/json", request, backend="llamacpp"
    )
    assert [json.loads(r.body) for r in received] == [request]
    assert result == expected_embeddings(body, 200)
    assert result["vectors"] == [[1.0, 2.0], [3.0, 4.0]]


async def test_a_replayed_error_keeps_the_message_when_the_fix_is_missing() -> None:
    body = b'{"error": {"code": 500, "message": "boom", "type": "server_error"}}'
    result, _ = await replay_embedding_bytes(
        500, body, "application/json", {"input": ["a"]}, fix_mentions="--never"
    )
    assert result["error"]["class"] == "ServerError"
    assert "boom" in result["error"]["fix_mentions"]


def test_transcripts_are_found_under_the_embeddings_folder(tmp_path: Path) -> None:
    exchange = Exchange({"input": ["a"]}, 200, "application/json", {}, answer())
    sidecar = {"api": "embeddings", "response": {"status": 200}, "expected": {}}
    write_transcript(embeddings_root(tmp_path) / "llamacpp", "captured--x--y", exchange, sidecar)
    (found,) = iter_embedding_transcripts(tmp_path)
    assert (found.id, found.body, found.api) == ("llamacpp/captured--x--y", answer(), "embeddings")

"""``POST /v1/embeddings`` through the gateway: the SDK gets what it asked for, in order."""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

import httpx
import openai
import pytest

from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from tests.unit.providers.embeddings.helpers import vector_for
from tests.unit.providers.gateway.serving import config_for, running_gateway


def _floats_whatever_was_asked(request: ReceivedRequest) -> RecordedReply:
    """LM Studio's habit: float lists, even for ``encoding_format: base64``."""
    body = json.loads(request.body)
    data = [
        {"object": "embedding", "index": i, "embedding": vector_for(text, 4)}
        for i, text in enumerate(body["input"])
    ]
    answer = {
        "object": "list",
        "data": data,
        "model": body.get("model"),
        "usage": {"prompt_tokens": 3, "total_tokens": 3},
    }
    return RecordedReply(200, json.dumps(answer).encode(), {"Content-Type": "application/json"})


def _floats(embedding: Any) -> list[float]:
    """The SDK decodes base64 itself only when it chose it (its default); asked explicitly, it
    hands the string over."""
    if isinstance(embedding, str):
        raw = base64.b64decode(embedding)
        return list(struct.unpack(f"<{len(raw) // 4}f", raw))
    return list(embedding)


@pytest.mark.parametrize("encoding", ["base64", "float", None])
async def test_the_sdk_gets_correct_vectors_in_either_encoding(encoding: str | None) -> None:
    async with ReplayServer(_floats_whatever_was_asked) as backend:
        config = config_for({"embed": backend.base_url}, {"embeddings": "embed"})
        async with running_gateway(config) as url:
            client = openai.AsyncOpenAI(base_url=url, api_key="unused")
            extra: dict[str, Any] = {"encoding_format": encoding} if encoding else {}
            result = await client.embeddings.create(
                model="embeddings", input=["a", "bb", "ccc"], **extra
            )
            await client.close()
    assert [item.index for item in result.data] == [0, 1, 2]
    for item, text in zip(result.data, ["a", "bb", "ccc"], strict=True):
        assert _floats(item.embedding) == pytest.approx(vector_for(text, 4), rel=1e-6)
        assert isinstance(item.embedding, str) == (encoding == "base64")  # what was asked
    assert result.usage.prompt_tokens == 3
    sent = json.loads(backend.requests[0].body)
    assert sent["model"] == "m-embed"
    assert sent["input"] == ["a", "bb", "ccc"]


async def test_token_ids_are_refused_naming_the_input() -> None:
    async with ReplayServer(_floats_whatever_was_asked) as backend:
        config = config_for({"embed": backend.base_url})
        async with running_gateway(config) as url, httpx.AsyncClient() as http:
            answer = await http.post(
                f"{url}/embeddings", json={"model": "embed", "input": [[1, 2, 3]]}
            )
    assert answer.status_code == 400
    assert "input" in answer.json()["error"]["message"]
    assert backend.requests == []

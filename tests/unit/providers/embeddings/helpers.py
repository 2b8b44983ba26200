"""Answers of ``/v1/embeddings`` as servers send them, for the embeddings tests."""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Callable, Sequence
from typing import Any

import httpx

BASE = "http://embed.test"
URL = f"{BASE}/v1/embeddings"


def b64(values: Sequence[float]) -> str:
    """Little-endian float32 bytes, base64: OpenAI's ``encoding_format: base64``."""
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()


def vector_for(text: str, width: int = 4) -> list[float]:
    """A vector that says which text it belongs to (its first value is the text's length)."""
    return [float(len(text)), *(float(i) for i in range(1, width))]


def answer(
    items: list[dict[str, Any]], *, usage: dict[str, Any] | None = None, model: str = "emb"
) -> dict[str, Any]:
    body: dict[str, Any] = {"object": "list", "data": items, "model": model}
    if usage is not None:
        body["usage"] = usage
    return body


def echoing(
    *, shape: str = "float", reverse: bool = False, width: int = 4, seen: list[Any] | None = None
) -> Callable[[httpx.Request], httpx.Response]:
    """A server that embeds each input as ``vector_for`` it, one token per character."""

    def respond(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if seen is not None:
            seen.append(body)
        items = []
        for index, text in enumerate(body["input"]):
            vector = vector_for(text, width)
            embedding: Any = b64(vector) if shape == "base64" else vector
            items.append({"object": "embedding", "index": index, "embedding": embedding})
        if reverse:
            items.reverse()
        tokens = sum(len(text) for text in body["input"])
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return httpx.Response(200, json=answer(items, usage=usage))

    return respond

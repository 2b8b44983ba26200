"""A loopback ``/v1/embeddings`` server for the embedding adapters' tests.

``EmbeddingBackend`` is a ``ReplayServer`` handler: it embeds each input as ``vector_for`` it (a
vector drawn from the text's SHA-256, so two texts never share one and a vector put at the
wrong position or decoded wrong shows), in the shape it is set to send whatever the request
asked (``floats``: what LM Studio and SGLang send to a request for base64), and counts one
token per word. It keeps each request body so a test can check what went out.
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from typing import Any

from providers.replay.server import ReceivedRequest, RecordedReply

__all__ = ["MODEL", "EmbeddingBackend", "tokens_of", "vector_for"]

MODEL = "nomic-embed-text"


def vector_for(text: str, width: int = 8) -> list[float]:
    """Values that float32 holds exactly (k/256 - 0.5), so a round trip through float32 bytes
    must give them back unchanged."""
    digest = hashlib.sha256(text.encode()).digest()
    return [digest[i % len(digest)] / 256 - 0.5 for i in range(width)]


def tokens_of(texts: list[str]) -> int:
    return sum(len(text.split()) for text in texts)


class EmbeddingBackend:
    """``ReplayServer(EmbeddingBackend())``; ``shape`` is ``"float"`` or ``"base64"``;
    ``honours_dimensions``: a shorter vector when ``dimensions`` asks for one (else ignored,
    as llama.cpp does); ``usage``: whether answers report it."""

    def __init__(
        self,
        *,
        shape: str = "float",
        width: int = 8,
        honours_dimensions: bool = True,
        usage: bool = True,
    ) -> None:
        self.shape = shape
        self.width = width
        self.honours_dimensions = honours_dimensions
        self.usage = usage
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: ReceivedRequest) -> RecordedReply:
        if not request.path.split("?")[0].endswith("/embeddings"):
            return RecordedReply(404, b'{"error": {"message": "not found"}}')
        body = json.loads(request.body)
        self.bodies.append(body)
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        width = self.width
        if self.honours_dimensions and isinstance(body.get("dimensions"), int):
            width = body["dimensions"]
        items = []
        for index, text in enumerate(texts):
            vector = vector_for(text, width)
            embedding: Any = vector
            if self.shape == "base64":
                embedding = base64.b64encode(struct.pack(f"<{width}f", *vector)).decode()
            items.append({"object": "embedding", "index": index, "embedding": embedding})
        answer: dict[str, Any] = {"object": "list", "data": items, "model": MODEL}
        if self.usage:
            count = tokens_of(texts)
            answer["usage"] = {"prompt_tokens": count, "total_tokens": count}
        headers = {"Content-Type": "application/json"}
        return RecordedReply(200, json.dumps(answer).encode(), headers)

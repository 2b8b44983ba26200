"""One ``/v1/embeddings`` answer read into ``Embedding``s, in the order of the values sent.

Each vector is read by the shape it arrives in, whatever ``encoding_format`` asked for: a JSON
list of numbers, or a base64 string of little-endian float32 bytes (LM Studio sends floats
when asked for base64; a server could do the reverse). Nothing a server sends is taken
on trust, and nothing is dropped or reordered to paper over it; each of these is an
``EmbeddingResponseError`` naming the server, with what was read in ``partial``:

* no ``data`` list, an item without a vector, or a vector of neither shape;
* a base64 string whose length is not a multiple of 4, that is not base64, or whose bytes are
  not a whole number of float32 values;
* an empty vector, a NaN or infinite value (or a float beyond float32's range);
* a vector whose width differs from the others' (in this answer or an earlier batch's), or from
  the ``dimensions`` asked for;
* more or fewer vectors than values sent;
* an ``index`` that is missing on some items only, not an integer, out of range, or repeated.

Items without any ``index`` are taken in the order received (some servers leave it out).
"""

from __future__ import annotations

import binascii
import math
from collections.abc import Sequence
from typing import Any, Final

from providers.abstractions.embedding_errors import EmbeddingResponseError
from providers.abstractions.embeddings import Embedding, EmbeddingVector, GeneratedEmbeddings
from providers.abstractions.usage import UsageDetails

__all__ = ["NORMALIZED", "SERVER_NORM", "AnswerReader"]

NORMALIZED: Final = "normalized"
"""``Embedding.additional_properties`` key, ``"client"`` when this client scaled the vector to
length 1 (``normalize=True``)."""
SERVER_NORM: Final = "server_norm"
"""``Embedding.additional_properties`` key: the L2 length of the vector as the server sent it,
beside ``NORMALIZED`` (about 1.0 when the server had normalised it already)."""


class AnswerReader:
    """Reads the answers of one ``generate`` call, batch by batch: the width of the first
    vector is the width every later one must have, in every batch."""

    def __init__(
        self,
        *,
        backend: str,
        model_id: str | None,
        dimensions: int | None,
        normalize: bool,
    ) -> None:
        self.backend = backend
        self.model_id = model_id
        self.dimensions = dimensions
        self.normalize = normalize
        self.width: int | None = dimensions
        self.read: list[Embedding] = []
        """Every batch's embeddings so far, in the values' order."""

    def add(self, payload: Any, expected: int) -> UsageDetails | None:
        """Reads one answer to ``expected`` values into ``read``; its usage."""
        if not isinstance(payload, dict) or not isinstance(payload.get("data"), list):
            raise self._error("has no `data` list of embeddings", "no data", [], payload)
        items: list[Any] = payload["data"]
        model = payload.get("model")
        model_id = model if isinstance(model, str) and model else self.model_id
        received: list[Embedding] = []
        for position, item in enumerate(items):
            vector = self._vector(item, position, received, payload)
            received.append(self._embedding(vector, model_id))
        order = self._order(items, expected, received, payload)
        self.read.extend(received[position] for position in order)
        return usage_of(payload.get("usage"))

    def _vector(
        self, item: Any, position: int, received: list[Embedding], payload: Any
    ) -> EmbeddingVector:
        raw = item.get("embedding") if isinstance(item, dict) else None
        try:
            vector = vector_of(raw)
        except ValueError as exc:
            raise self._error(f"item {position}: {exc}", "bad vector", received, payload) from None
        width = len(vector)
        if width == 0:
            raise self._error(f"item {position}: an empty vector", "bad vector", received, payload)
        if not math.isfinite(sum(vector)):
            bad = next(i for i, value in enumerate(vector) if not math.isfinite(value))
            detail = f"item {position}: value {bad} is {vector[bad]} (NaN or infinite)"
            raise self._error(detail, "not finite", received, payload)
        if self.width is None:
            self.width = width
        elif width != self.width:
            raise self._error(self._width_detail(position, width), "wrong width", received, payload)
        return vector

    def _width_detail(self, position: int, width: int) -> str:
        if self.dimensions is not None:
            return (
                f"item {position} has {width} dimensions where {self.dimensions} were asked "
                "for: the server ignored `dimensions` (llama.cpp and LM Studio do) or cannot "
                "shorten this model's vectors; leave `dimensions` out, or shorten and "
                "re-normalise the vectors yourself if the model was trained for it (Matryoshka)"
            )
        return f"item {position} has {width} dimensions where the others have {self.width}"

    def _embedding(self, vector: EmbeddingVector, model_id: str | None) -> Embedding:
        if not self.normalize:
            return Embedding(vector, model_id)
        norm = vector.norm()
        properties = {NORMALIZED: "client", SERVER_NORM: norm}
        return Embedding(vector.normalized(), model_id, properties)

    def _order(
        self, items: list[Any], expected: int, received: list[Embedding], payload: Any
    ) -> Sequence[int]:
        """Received positions in the values' order (``order[value] = position``)."""
        if len(items) != expected:
            detail = f"has {len(items)} embeddings for {expected} inputs"
            raise self._error(detail, "wrong count", received, payload)
        indices = [item.get("index") for item in items]
        if all(index is None for index in indices):
            return range(expected)
        order: list[int | None] = [None] * expected
        for position, index in enumerate(indices):
            if isinstance(index, bool) or not isinstance(index, int):
                detail = f"item {position} has index {index!r}, not an integer"
                raise self._error(detail, "bad index", received, payload)
            if not 0 <= index < expected:
                detail = f"item {position} has index {index}, outside 0..{expected - 1}"
                raise self._error(detail, "index out of range", received, payload)
            if order[index] is not None:
                detail = f"items {order[index]} and {position} both have index {index}"
                raise self._error(detail, "duplicate index", received, payload)
            order[index] = position
        return [position for position in order if position is not None]

    def _error(
        self, detail: str, problem: str, received: list[Embedding], payload: Any
    ) -> EmbeddingResponseError:
        partial = GeneratedEmbeddings([*self.read, *received])
        return EmbeddingResponseError(
            f"the /v1/embeddings answer from {self.backend} {detail}",
            problem=problem,
            partial=partial,
            payload=payload,
            backend=self.backend,
        )


def vector_of(raw: Any) -> EmbeddingVector:
    """A vector from either shape; ``ValueError`` saying what is wrong with it."""
    if isinstance(raw, str):
        if len(raw) % 4:
            raise ValueError(f"base64 string of {len(raw)} characters (not a multiple of 4)")
        try:
            data = binascii.a2b_base64(raw, strict_mode=True)
        except binascii.Error:
            raise ValueError("the string is not base64") from None
        if len(data) % 4:
            raise ValueError(f"base64 of {len(data)} bytes, not a whole number of float32")
        return EmbeddingVector.from_bytes(data)
    if isinstance(raw, list):
        try:
            return EmbeddingVector(raw)
        except TypeError:
            raise ValueError("the list holds something that is not a number") from None
    shown = "no vector" if raw is None else f"a vector of type {type(raw).__name__}"
    raise ValueError(f"{shown} (neither a list of floats nor a base64 string)")


def usage_of(usage: Any) -> UsageDetails | None:
    """``prompt_tokens`` and ``total_tokens``, where the server reported them as integers."""
    if not isinstance(usage, dict):
        return None
    prompt, total = usage.get("prompt_tokens"), usage.get("total_tokens")
    prompt = prompt if isinstance(prompt, int) and not isinstance(prompt, bool) else None
    total = total if isinstance(total, int) and not isinstance(total, bool) else None
    if prompt is None and total is None:
        return None
    return UsageDetails(input_token_count=prompt, total_token_count=total)

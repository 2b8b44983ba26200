"""``CachingEmbeddingGenerator``: an in-memory LRU of embeddings, so a text embedded once is
not sent again (an agent's memory re-embeds the same notes, a RAG index the same chunks).

A vector depends on the model, the ``dimensions`` asked for, the extra body keys and the text,
so the key is all four (``None`` for the model: the inner generator's own). Only the values not
in the cache are sent, each once however often it appears in the call, in one ``generate`` of
the inner generator; the result has every value's embedding in the values' order. The cache is
bounded by ``max_entries`` (least recently used out first).

``usage`` is that of the values sent (``None`` when all were cached), with the inner result's
``additional_properties`` (a retry count), and ``additional_properties["cache_hits"]`` says how
many values were answered from the cache.
Cached ``Embedding`` objects are shared between results: treat them as read-only.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence

from providers.abstractions.embedding_errors import EmbeddingResponseError
from providers.abstractions.embeddings import (
    DelegatingEmbeddingGenerator,
    Embedding,
    EmbeddingGenerationOptions,
    EmbeddingGenerator,
    GeneratedEmbeddings,
)
from providers.abstractions.errors import ConfigurationError
from providers.abstractions.properties import CACHE_HITS

__all__ = ["CACHE_HITS", "CachingEmbeddingGenerator"]

_Key = tuple[str | None, int | None, str, str]


class CachingEmbeddingGenerator(DelegatingEmbeddingGenerator):
    """See the module docstring. ``max_entries``: the most embeddings held (at least 1)."""

    def __init__(self, inner: EmbeddingGenerator, *, max_entries: int = 10_000) -> None:
        super().__init__(inner)
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            raise ConfigurationError(f"max_entries must be an int >= 1, not {max_entries!r}")
        self.max_entries = max_entries
        self._entries: OrderedDict[_Key, Embedding] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()

    async def generate(
        self, values: Sequence[str], options: EmbeddingGenerationOptions | None = None
    ) -> GeneratedEmbeddings:
        texts = list(values) if not isinstance(values, str | bytes) else []
        if isinstance(values, str | bytes) or not all(isinstance(t, str) for t in texts):
            return await self.inner.generate(values, options)  # (it refuses them, typed)
        scope = _scope(options)
        found: list[Embedding | None] = [self._get((*scope, text)) for text in texts]
        hits = sum(1 for hit in found if hit is not None)
        missing = list(dict.fromkeys(t for t, hit in zip(texts, found, strict=True) if not hit))
        usage, properties = None, {}
        if missing:
            generated = await self.inner.generate(missing, options)
            if len(generated) != len(missing):
                raise EmbeddingResponseError(
                    f"the inner generator returned {len(generated)} embeddings for "
                    f"{len(missing)} values",
                    problem="wrong count",
                    partial=generated,
                )
            fresh = dict(zip(missing, generated, strict=True))
            for text, embedding in fresh.items():
                self._put((*scope, text), embedding)
            found = [hit or fresh[text] for text, hit in zip(texts, found, strict=True)]
            usage, properties = generated.usage, generated.additional_properties or {}
        complete = [embedding for embedding in found if embedding is not None]
        properties = {**properties, CACHE_HITS: hits}
        return GeneratedEmbeddings(complete, usage=usage, additional_properties=properties)

    def _get(self, key: _Key) -> Embedding | None:
        embedding = self._entries.get(key)
        if embedding is not None:
            self._entries.move_to_end(key)
        return embedding

    def _put(self, key: _Key, embedding: Embedding) -> None:
        self._entries[key] = embedding
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)


def _scope(options: EmbeddingGenerationOptions | None) -> tuple[str | None, int | None, str]:
    """What besides the text decides the vector: model, dimensions, the extra body keys."""
    if options is None:
        return None, None, ""
    extra = options.additional_properties
    shown = json.dumps(extra, sort_keys=True, default=repr) if extra else ""
    return options.model_id, options.dimensions, shown

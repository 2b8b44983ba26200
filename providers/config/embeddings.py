"""A backend's ``embeddings:`` block: that it embeds, and how.

``embeddings: {}`` is enough to say so; ``create_embedding_generator(config)`` then finds it
when no ``embeddings`` role names a backend. Every key is optional and defaults to the
library's choice (the backend row's encoding and batch limit, no normalisation, no cache).
"""

from __future__ import annotations

from typing import Literal

from pydantic import NonNegativeInt, PositiveInt

from providers.config.strict import Strict

__all__ = ["EmbeddingsConfig"]


class EmbeddingsConfig(Strict):
    """How ``create_embedding_generator`` embeds with this backend (every key optional)."""

    model_id: str | None = None
    """The embedding model's id, when the server serves it beside a chat model (OpenAI, vLLM
    with several models); unset: the backend's ``model_id``."""
    max_batch_size: PositiveInt | None = None
    """Values per request; longer lists are split and put back in order. Unset: the backend
    row's limit (OpenAI 2048), else 256."""
    normalize: bool = False
    """Scale every vector to length 1 on the client (recorded on each embedding)."""
    encoding_format: Literal["base64", "float"] | None = None
    """What to ask the server for; unset: the backend row's choice (``base64`` where it is
    honoured). Answers are read by their shape either way."""
    cache_entries: NonNegativeInt = 0
    """Embeddings kept in an in-memory LRU cache, so a text is not sent twice; 0: no cache."""

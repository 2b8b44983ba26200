"""What every adapter does the same way: a client (or an embedding generator) from a
configuration file, and the question whether oaicompat's own telemetry should run under a
framework that instruments the call itself.
"""

from __future__ import annotations

import os
from typing import Any

from providers.abstractions.chat_client import ChatClient
from providers.abstractions.embeddings import EmbeddingGenerator
from providers.config import client_for, create_embedding_generator, load_config
from providers.config.clients import EMBEDDINGS_ROLE

__all__ = ["EMBEDDINGS_ROLE", "base_url_of", "client_from_config", "generator_from_config"]


def client_from_config(
    path: str | os.PathLike[str], role: str = "main", **client_kwargs: Any
) -> ChatClient:
    """The standard pipeline for ``role`` (or a backend name) of the YAML file at ``path``.

    oaicompat's telemetry layer is left out unless ``telemetry=True`` is passed: the frameworks
    time and trace the model call themselves (agent-framework's telemetry layer, pydantic-ai's
    instrumentation), and two spans or two log lines per request for one call is noise.
    """
    client_kwargs.setdefault("telemetry", False)
    return client_for(load_config(path), role, **client_kwargs)


def generator_from_config(
    path: str | os.PathLike[str], role: str = EMBEDDINGS_ROLE, **generator_kwargs: Any
) -> EmbeddingGenerator:
    """The standard embedding pipeline for ``role`` (by default ``embeddings``: the role, or
    the one backend declaring ``embeddings:``) of the YAML file at ``path``; telemetry left out
    unless ``telemetry=True``, as for ``client_from_config``."""
    generator_kwargs.setdefault("telemetry", False)
    return create_embedding_generator(load_config(path), role, **generator_kwargs)


def base_url_of(generator: EmbeddingGenerator) -> str | None:
    """The server URL of the wire generator under a stack of layers (each ``inner`` followed
    down), for a framework's telemetry; ``None`` for a generator that has no URL."""
    current: object = generator
    for _ in range(32):  # (a stack deeper than this is not a pipeline)
        endpoint = getattr(current, "endpoint", None)
        base = getattr(endpoint, "api_base", None)
        if isinstance(base, str):
            return base
        current = getattr(current, "inner", None)
        if current is None:
            return None
    return None

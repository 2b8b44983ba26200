"""Error answers to a rerank request that have one known fix, typed with it.

* llama.cpp started without ``--reranking`` (or without ``--pooling rank``) answers 501,
  ``not_supported_error``, "This server does not support reranking. Start it with
  `--reranking`".
* vLLM registers its rerank routes only for a model that scores (a cross-encoder, or a
  model converted with ``--convert classify``), so another model's server answers 404 ``Not
  Found`` for the route; older versions answered 400 "does not support … Score API".
* A server with no such route at all (Ollama, LM Studio, a proxy) answers 404 or 405.

Anything else (an unknown model, a 401, a 429) is typed as the chat clients type it.
"""

from __future__ import annotations

import re

from providers.rerank.errors import RerankUnavailableError
from providers.transport.error_bodies import parse_error_body

__all__ = ["rerank_error"]

_NOT_SUPPORTED = re.compile(
    r"does not support (?:rerank|reranking|score)|--rerank|not_supported_error", re.IGNORECASE
)
_ROUTE_MISSING = re.compile(r"^\s*not found\s*$|method not allowed|^\s*$", re.IGNORECASE)


def rerank_error(
    status: int, body: bytes, *, backend: str, url: str
) -> RerankUnavailableError | None:
    """The typed error for an answer meaning "this server does not rerank", else ``None``."""
    parsed = parse_error_body(body)
    text = f"{parsed.error_type or ''} {parsed.message}"
    kept = body.decode("utf-8", "replace")[:2000]
    if status == 501 or (status in (400, 422) and _NOT_SUPPORTED.search(text)):
        return RerankUnavailableError(
            f"{backend} at {url} does not rerank as started (HTTP {status}: {parsed.message})",
            fix=(
                "start llama-server with --reranking --pooling rank and a reranker model; on "
                "vLLM or SGLang serve a cross-encoder (reranker) model"
            ),
            status=status,
            backend=backend,
            error_type=parsed.error_type,
            body=kept,
        )
    if status in (404, 405) and _ROUTE_MISSING.search(parsed.message):
        return RerankUnavailableError(
            f"{backend} has no rerank route at {url} (HTTP {status})",
            fix=(
                "point the client at a server that reranks (llama.cpp with --reranking, vLLM or "
                "SGLang serving a reranker model), or pass the route it serves"
            ),
            status=status,
            backend=backend,
            body=kept,
        )
    return None

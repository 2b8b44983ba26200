"""What ``probe`` and ``check`` say beyond chat: does the server embed, rerank, tokenize?

Each question is one small real request through the library's own client (the embedding
generator, the rerank client, ``count_tokens``), so the answer is what an application would
meet: a typed refusal that says how to start the server for it (``fix``), a failure of another
kind (``unknown``, with the error's class), or yes with what was learnt (the vector width, the
kind of score, where the count came from).
"""

from __future__ import annotations

from typing import Any

import httpx

from providers.abstractions.errors import ProviderError
from providers.cli.target import Target

__all__ = ["probe_services", "services_line"]


async def probe_services(
    target: Target, http: httpx.AsyncClient, detected: str | None = None
) -> dict[str, dict[str, Any]]:
    """``{"embeddings": …, "rerank": …, "tokenize": …}``, each with ``supported`` (``True``,
    ``False`` or ``None`` for unknown) and what the request showed. ``detected`` is the
    backend the probes found, used when the target's is ``auto`` (the routes differ)."""
    backend = _backend(target) or detected
    return {
        "embeddings": await _embeddings(target, http, backend),
        "rerank": await _rerank(target, http, backend),
        "tokenize": await _tokenize(target, http, backend),
    }


async def _embeddings(
    target: Target, http: httpx.AsyncClient, backend: str | None
) -> dict[str, Any]:
    # deferred: only probe and check ask, and each service loads its own client
    from providers.abstractions.embedding_errors import EmbeddingsUnavailableError

    # deferred: as above, the embeddings client
    from providers.embeddings import OpenAiCompatibleEmbeddingGenerator

    generator = OpenAiCompatibleEmbeddingGenerator(
        target.base_url, target.model_id, target.api_key, backend=backend, http_client=http
    )
    try:
        generated = await generator.generate(["ping"])
    except EmbeddingsUnavailableError as refusal:
        return {"supported": False, "fix": refusal.fix}
    except ProviderError as error:
        return {"supported": None, "error": type(error).__name__}
    finally:
        await generator.aclose()
    return {"supported": True, "dimensions": generated[0].dimensions}


async def _rerank(target: Target, http: httpx.AsyncClient, backend: str | None) -> dict[str, Any]:
    # deferred: only probe and check ask
    from providers.rerank import OpenAiCompatibleRerankClient, RerankUnavailableError

    client = OpenAiCompatibleRerankClient(
        target.base_url, target.model_id, target.api_key, backend=backend, http_client=http
    )
    try:
        result = await client.rerank("ping", ["pong"])
    except RerankUnavailableError as refusal:
        return {"supported": False, "fix": refusal.fix}
    except ProviderError as error:
        return {"supported": None, "error": type(error).__name__}
    finally:
        await client.aclose()
    return {"supported": True, "score_kind": result.score_kind}


async def _tokenize(target: Target, http: httpx.AsyncClient, backend: str | None) -> dict[str, Any]:
    # deferred: only probe and check ask
    from providers.chat_completions.client import OpenAiCompatibleChatClient

    client = OpenAiCompatibleChatClient(
        target.base_url, target.model_id, target.api_key, backend=backend, http_client=http
    )
    try:
        count = await client.count_tokens("ping")
    except ProviderError as error:
        return {"supported": None, "error": type(error).__name__}
    finally:
        await client.aclose()
    found: dict[str, Any] = {"supported": count.source != "estimate", "source": count.source}
    if count.max_model_len is not None:
        found["max_model_len"] = count.max_model_len
    if not count.exact and count.source != "estimate":
        found["note"] = "the server's tokenizer without its chat template: a lower bound"
    return found


def _backend(target: Target) -> str | None:
    return None if target.backend in ("", "auto") else target.backend


def services_line(name: str, found: dict[str, Any]) -> str:
    """One report line: ``embeddings  yes (1024 dimensions)`` / ``no: start with …``."""
    supported = found.get("supported")
    if supported is None:
        return f"{name}: unknown ({found.get('error', 'no answer')})"
    if not supported:
        return f"{name}: no" + (f" ({found['fix']})" if found.get("fix") else "")
    details = ", ".join(f"{k} {v}" for k, v in found.items() if k != "supported")
    return f"{name}: yes" + (f" ({details})" if details else "")

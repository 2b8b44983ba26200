"""How many values one ``/v1/embeddings`` request carries, and the requests a list becomes.

A list longer than the server takes is split into consecutive slices, sent one after the other,
and the answers are put back together in the values' order (``decoding`` places each vector by
its ``index`` within its slice). One request at a time: llama.cpp, vLLM and SGLang already
spread one request's inputs over their slots or batches, so parallel requests would only queue
behind each other, and one at a time bounds what an answer can make the client hold.
"""

from __future__ import annotations

from typing import Final

from providers.abstractions.errors import ConfigurationError
from providers.abstractions.usage import UsageDetails
from providers.backends import BackendProfile

__all__ = ["DEFAULT_MAX_BATCH_SIZE", "add_usage", "batch_size_for", "slices"]

DEFAULT_MAX_BATCH_SIZE: Final = 256
"""Values per request when neither the caller nor the backend's row says otherwise. It bounds
one answer: 256 vectors of 4096 floats are about 20 MB as JSON, under ``Limits.max_body_bytes``
(64 MiB), where 2048 (OpenAI's limit) would not be for such a model."""


def batch_size_for(requested: int | None, profile: BackendProfile) -> int:
    """The caller's ``max_batch_size`` if given (it may know the deployment better, a proxy's
    limit say), else the row's ``embedding_batch_limit``, else ``DEFAULT_MAX_BATCH_SIZE``."""
    if requested is not None:
        if isinstance(requested, bool) or not isinstance(requested, int) or requested < 1:
            raise ConfigurationError(f"max_batch_size must be an int >= 1, not {requested!r}")
        return requested
    return profile.embedding_batch_limit or DEFAULT_MAX_BATCH_SIZE


def slices(count: int, size: int) -> list[range]:
    """The positions of ``count`` values, ``size`` at a time, in order."""
    return [range(start, min(start + size, count)) for start in range(0, count, size)]


def add_usage(total: UsageDetails | None, more: UsageDetails | None) -> UsageDetails | None:
    """The usage of the batches so far and one more: counts add up; unknown stays unknown
    only while no batch reports it."""
    if more is None:
        return total
    return more if total is None else total + more

"""``TelemetryEmbeddingGenerator``: one event per ``generate`` call, and observers.

Observes and never alters: the result passes through unchanged. When a call ends it logs
``oaicompat.embeddings.completed`` (or ``.failed``) with counts, never texts, and hands each
observer the ``EmbeddingRecord``. Place it outermost, so the duration is the caller's and the
retry and cache layers' counts are on the result it sees.

``OpenTelemetryEmbeddingGenerator`` (``telemetry.otel_embeddings``) reports the same call as an
OpenTelemetry span and GenAI metrics.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from providers.abstractions.embeddings import (
    DelegatingEmbeddingGenerator,
    EmbeddingGenerationOptions,
    EmbeddingGenerator,
    GeneratedEmbeddings,
)
from providers.abstractions.errors import ProviderError
from providers.abstractions.event_names import EMBEDDINGS_COMPLETED, EMBEDDINGS_FAILED
from providers.abstractions.logs import EventSink, get_logger
from providers.abstractions.properties import CACHE_HITS, RETRY_ATTEMPTS
from providers.abstractions.records import value_class
from providers.abstractions.usage import UsageDetails
from providers.backends import BackendProfile

__all__ = [
    "EmbeddingObserver",
    "EmbeddingRecord",
    "TelemetryEmbeddingGenerator",
    "described",
    "embedding_record",
]

_LOG = get_logger(__name__)


@value_class(frozen=True)
class EmbeddingRecord:
    """One ``generate`` call as telemetry sees it."""

    backend: str
    request_model: str | None
    response_model: str | None
    inputs: int
    dimensions: int | None
    """The width of the vectors returned (``None`` when none were)."""
    usage: UsageDetails | None
    duration_s: float
    retry_attempts: int | None = None
    cache_hits: int | None = None
    error: BaseException | None = None


EmbeddingObserver = Callable[[EmbeddingRecord], object]
"""Called once per ``generate`` call, after the event is logged."""


def described(
    inner: EmbeddingGenerator, backend: str | BackendProfile | None
) -> tuple[str, str | None]:
    """The backend name and default model of the generator under a stack of layers (each
    layer's ``inner`` followed down to the wire client's ``profile`` and ``model_id``)."""
    name = backend.name if isinstance(backend, BackendProfile) else backend
    model: str | None = None
    current: object = inner
    for _ in range(32):  # (a stack deeper than this is not a pipeline)
        model = model or getattr(current, "model_id", None)
        profile = getattr(current, "profile", None)
        if name is None and isinstance(profile, BackendProfile):
            name = profile.name
        current = getattr(current, "inner", None)
        if current is None:
            break
    return name or "generic", model if isinstance(model, str) else None


def embedding_record(
    *,
    backend: str,
    request_model: str | None,
    inputs: int,
    duration_s: float,
    result: GeneratedEmbeddings | None = None,
    error: BaseException | None = None,
) -> EmbeddingRecord:
    """The record of a call that returned ``result`` or raised ``error``."""
    properties = (result.additional_properties if result is not None else None) or {}
    first = result[0] if result is not None and len(result) else None
    attempts = properties.get(RETRY_ATTEMPTS)
    if attempts is None and isinstance(error, ProviderError):
        attempts = error.retry_attempts
    return EmbeddingRecord(
        backend=backend,
        request_model=request_model,
        response_model=first.model_id if first is not None else None,
        inputs=inputs,
        dimensions=first.dimensions if first is not None else None,
        usage=result.usage if result is not None else None,
        duration_s=duration_s,
        retry_attempts=attempts,
        cache_hits=properties.get(CACHE_HITS),
        error=error,
    )


class TelemetryEmbeddingGenerator(DelegatingEmbeddingGenerator):
    """See the module docstring. ``backend`` defaults to the wire client's row under the
    layers; ``logger`` to the library's event logger."""

    def __init__(
        self,
        inner: EmbeddingGenerator,
        *,
        backend: str | BackendProfile | None = None,
        logger: EventSink | None = None,
        observers: Iterable[EmbeddingObserver] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(inner)
        self.backend, self.model_id = described(inner, backend)
        self._logger = logger if logger is not None else _LOG
        self._observers = tuple(observers)
        self._clock = clock

    async def generate(
        self, values: Sequence[str], options: EmbeddingGenerationOptions | None = None
    ) -> GeneratedEmbeddings:
        started = self._clock()
        model = (options.model_id if options is not None else None) or self.model_id
        inputs = len(values)
        try:
            result = await self.inner.generate(values, options)
        except Exception as exc:
            self._report(
                embedding_record(
                    backend=self.backend,
                    request_model=model,
                    inputs=inputs,
                    duration_s=self._clock() - started,
                    error=exc,
                )
            )
            raise
        self._report(
            embedding_record(
                backend=self.backend,
                request_model=model,
                inputs=inputs,
                duration_s=self._clock() - started,
                result=result,
            )
        )
        return result

    def _report(self, record: EmbeddingRecord) -> None:
        fields: dict[str, Any] = {
            "backend": record.backend,
            "model": record.response_model or record.request_model,
            "inputs": record.inputs,
            "dimensions": record.dimensions,
            "input_tokens": record.usage.input_token_count if record.usage else None,
            "duration_ms": round(record.duration_s * 1000.0, 3),
            "retry_attempts": record.retry_attempts,
            "cache_hits": record.cache_hits,
        }
        if record.error is None:
            self._logger.info(EMBEDDINGS_COMPLETED, **fields)
        else:
            fields["error_type"] = type(record.error).__name__
            fields["status"] = getattr(record.error, "status", None)
            self._logger.warning(EMBEDDINGS_FAILED, **fields)
        for observer in self._observers:
            observer(record)

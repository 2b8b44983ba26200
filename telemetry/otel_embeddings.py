"""``OpenTelemetryEmbeddingGenerator``: a span and GenAI metrics per ``generate`` call.

Follows the OpenTelemetry GenAI semantic conventions for the ``embeddings`` operation: a
``CLIENT`` span named ``embeddings {model}`` with ``gen_ai.operation.name``,
``gen_ai.provider.name`` (the backend; ``gen_ai.system`` too, for readers of the older name),
``gen_ai.request.model``, ``gen_ai.response.model``, ``gen_ai.embeddings.dimension.count`` and
``gen_ai.usage.input_tokens``; and the histograms ``gen_ai.client.operation.duration`` and
``gen_ai.client.token.usage`` (input tokens). Texts are never recorded. Errors are reported by
class name only (``error.type``), as ``OpenTelemetryChatClient`` does.

Only ``opentelemetry-api`` is needed, imported when a generator is made (the ``otel`` extra).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from providers.abstractions.embeddings import (
    DelegatingEmbeddingGenerator,
    EmbeddingGenerationOptions,
    EmbeddingGenerator,
    GeneratedEmbeddings,
)
from providers.backends import BackendProfile
from telemetry.embeddings import EmbeddingRecord, described, embedding_record
from telemetry.otel import (
    ERROR_TYPE,
    INPUT_TOKENS,
    OPERATION_DURATION,
    OPERATION_NAME,
    PROVIDER_NAME,
    REQUEST_MODEL,
    RESPONSE_MODEL,
    SYSTEM,
    TOKEN_TYPE,
    TOKEN_USAGE,
    instruments,
)

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import Span, TracerProvider

__all__ = ["DIMENSION_COUNT", "EMBEDDINGS", "OpenTelemetryEmbeddingGenerator"]

EMBEDDINGS: Final = "embeddings"
DIMENSION_COUNT: Final = "gen_ai.embeddings.dimension.count"
_TOKEN_BUCKETS: Final = [4.0**i for i in range(14)]
_SECONDS_BUCKETS: Final = [0.01 * 2.0**i for i in range(14)]


class OpenTelemetryEmbeddingGenerator(DelegatingEmbeddingGenerator):
    """See the module docstring. Providers default to the global ones; tests pass in-memory
    ones. ``backend`` defaults to the wire client's row under the layers."""

    def __init__(
        self,
        inner: EmbeddingGenerator,
        *,
        backend: str | BackendProfile | None = None,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._trace, self._tracer, meter = instruments(tracer_provider, meter_provider)
        super().__init__(inner)
        self.backend, self.model_id = described(inner, backend)
        self._duration = meter.create_histogram(
            OPERATION_DURATION,
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=_SECONDS_BUCKETS,
        )
        self._token_usage = meter.create_histogram(
            TOKEN_USAGE,
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )
        self._clock = clock

    async def generate(
        self, values: Sequence[str], options: EmbeddingGenerationOptions | None = None
    ) -> GeneratedEmbeddings:
        model = (options.model_id if options is not None else None) or self.model_id
        attributes: dict[str, Any] = {
            OPERATION_NAME: EMBEDDINGS,
            PROVIDER_NAME: self.backend,
            SYSTEM: self.backend,
        }
        if model:
            attributes[REQUEST_MODEL] = model
        span = self._tracer.start_span(
            f"{EMBEDDINGS} {model}" if model else EMBEDDINGS,
            kind=self._trace.SpanKind.CLIENT,
            attributes=attributes,
        )
        started = self._clock()
        record = functools.partial(
            embedding_record, backend=self.backend, request_model=model, inputs=len(values)
        )
        try:
            with self._trace.use_span(
                span, end_on_exit=False, record_exception=False, set_status_on_exception=False
            ):
                result = await self.inner.generate(values, options)
        except Exception as exc:
            elapsed = self._clock() - started
            self._end(span, record(duration_s=elapsed, error=exc))
            raise
        elapsed = self._clock() - started
        self._end(span, record(duration_s=elapsed, result=result))
        return result

    def _end(self, span: Span, record: EmbeddingRecord) -> None:
        metric_attributes: dict[str, Any] = {
            OPERATION_NAME: EMBEDDINGS,
            PROVIDER_NAME: self.backend,
        }
        if record.request_model:
            metric_attributes[REQUEST_MODEL] = record.request_model
        if record.response_model:
            metric_attributes[RESPONSE_MODEL] = record.response_model
            span.set_attribute(RESPONSE_MODEL, record.response_model)
        if record.dimensions is not None:
            span.set_attribute(DIMENSION_COUNT, record.dimensions)
        tokens = record.usage.input_token_count if record.usage is not None else None
        if tokens is not None:
            span.set_attribute(INPUT_TOKENS, tokens)
        if record.retry_attempts is not None:
            span.set_attribute("oaicompat.retry_attempts", record.retry_attempts)
        if record.error is not None:
            error_type = type(record.error).__name__
            metric_attributes[ERROR_TYPE] = error_type
            span.set_attribute(ERROR_TYPE, error_type)
            span.set_status(self._trace.StatusCode.ERROR, error_type)
        span.end()
        self._duration.record(record.duration_s, metric_attributes)
        if tokens is not None:
            self._token_usage.record(tokens, {**metric_attributes, TOKEN_TYPE: "input"})

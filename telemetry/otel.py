"""``OpenTelemetryChatClient``: a span and GenAI metrics per request (the ``otel`` extra).

Follows the OpenTelemetry GenAI semantic conventions: a ``CLIENT`` span named
``chat {model}`` with ``gen_ai.operation.name``, ``gen_ai.provider.name`` (and the older
``gen_ai.system`` for back ends that still read it), request parameters, ``gen_ai.response.*``
and ``gen_ai.usage.*``; and the histograms ``gen_ai.client.token.usage``,
``gen_ai.client.operation.duration`` and ``gen_ai.client.operation.time_to_first_chunk`` (time
to the first *substantive* update: the role-only chunk is not a token). The backend name
(``llamacpp``, ``vllm``, …) is the provider name, as the conventions have no value for
self-hosted servers. Timings go on the span as ``oaicompat.timings.<name>``, whose suffix says
``_server`` or ``_client``.

Only the API is needed (``opentelemetry-api``); the application installs and configures the
SDK. ``opentelemetry`` is imported when a client is constructed, never when this module or
``telemetry`` is imported, and a missing extra is reported by name. Prompt and completion text
are never recorded (the conventions make them opt-in; this client does not offer it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Final

from providers.abstractions.chat_client import ChatClient
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.options import ChatOptions
from providers.backends import BackendProfile
from telemetry.extractors import TimingsExtractor
from telemetry.observing import ObservingChatClient
from telemetry.recorder import RequestRecord, RequestRecorder

if TYPE_CHECKING:
    from types import ModuleType

    from opentelemetry.metrics import Meter, MeterProvider
    from opentelemetry.trace import Span, Tracer, TracerProvider

__all__ = ["OTEL_MISSING", "OpenTelemetryChatClient", "instruments"]


def instruments(
    tracer_provider: TracerProvider | None, meter_provider: MeterProvider | None
) -> tuple[ModuleType, Tracer, Meter]:
    """``opentelemetry.trace``, this library's tracer and its meter (the global providers
    unless given), or the ``otel`` extra named in an ``ImportError``: every OTel layer's
    start."""
    try:
        # deferred: the `otel` extra, needed only once an OTel layer is made
        from opentelemetry import metrics, trace
    except ImportError as exc:  # pragma: no cover - exercised without the extra
        raise ImportError(OTEL_MISSING) from exc
    tracer = trace.get_tracer(INSTRUMENTATION_NAME, tracer_provider=tracer_provider)
    return trace, tracer, metrics.get_meter(INSTRUMENTATION_NAME, meter_provider=meter_provider)


OTEL_MISSING: Final = (
    "OpenTelemetryChatClient needs OpenTelemetry: install the `otel` extra "
    "(pip install 'oaicompat[otel]') and configure an SDK in your application"
)

INSTRUMENTATION_NAME: Final = "oaicompat.telemetry"

# Semantic-convention names, spelled out so the extra needs only opentelemetry-api.
OPERATION_NAME: Final = "gen_ai.operation.name"
PROVIDER_NAME: Final = "gen_ai.provider.name"
SYSTEM: Final = "gen_ai.system"
REQUEST_MODEL: Final = "gen_ai.request.model"
RESPONSE_MODEL: Final = "gen_ai.response.model"
RESPONSE_ID: Final = "gen_ai.response.id"
FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
CACHE_READ_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
REASONING_TOKENS: Final = "gen_ai.usage.reasoning.output_tokens"
TOKEN_TYPE: Final = "gen_ai.token.type"
ERROR_TYPE: Final = "error.type"
TOKEN_USAGE: Final = "gen_ai.client.token.usage"
OPERATION_DURATION: Final = "gen_ai.client.operation.duration"
TIME_TO_FIRST_CHUNK: Final = "gen_ai.client.operation.time_to_first_chunk"
CHAT: Final = "chat"

_REQUEST_OPTIONS: Final = (
    ("max_output_tokens", "gen_ai.request.max_tokens"),
    ("temperature", "gen_ai.request.temperature"),
    ("top_p", "gen_ai.request.top_p"),
    ("top_k", "gen_ai.request.top_k"),
    ("seed", "gen_ai.request.seed"),
    ("frequency_penalty", "gen_ai.request.frequency_penalty"),
    ("presence_penalty", "gen_ai.request.presence_penalty"),
    ("stop_sequences", "gen_ai.request.stop_sequences"),
)
# Bucket boundaries the conventions recommend for these histograms.
_TOKEN_BUCKETS: Final = [4.0**i for i in range(14)]
_SECONDS_BUCKETS: Final = [0.01 * 2.0**i for i in range(14)]


class OpenTelemetryChatClient(ObservingChatClient):
    """See the module docstring. Providers default to the global ones (``trace`` and
    ``metrics.get_*_provider()``); tests pass in-memory ones."""

    def __init__(
        self,
        inner: ChatClient,
        *,
        backend: str | BackendProfile | None = None,
        extractor: TimingsExtractor | None = None,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._trace, self._tracer, meter = instruments(tracer_provider, meter_provider)
        super().__init__(inner, backend=backend, extractor=extractor, clock=clock)
        self._token_usage = meter.create_histogram(
            TOKEN_USAGE,
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )
        self._duration = meter.create_histogram(
            OPERATION_DURATION,
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=_SECONDS_BUCKETS,
        )
        self._ttft = meter.create_histogram(
            TIME_TO_FIRST_CHUNK,
            unit="s",
            description="Time from sending the request to the first substantive streamed update.",
            explicit_bucket_boundaries_advisory=_SECONDS_BUCKETS,
        )

    def _start(self, recorder: RequestRecorder, options: ChatOptions | None) -> Span:
        attributes: dict[str, Any] = {
            OPERATION_NAME: CHAT,
            PROVIDER_NAME: self.backend,
            SYSTEM: self.backend,
        }
        if recorder.request_model:
            attributes[REQUEST_MODEL] = recorder.request_model
        if options is not None:
            for field, key in _REQUEST_OPTIONS:
                value = getattr(options, field)
                if value is not None:
                    attributes[key] = list(value) if isinstance(value, list) else value
        name = f"{CHAT} {recorder.request_model}" if recorder.request_model else CHAT
        return self._tracer.start_span(
            name, kind=self._trace.SpanKind.CLIENT, attributes=attributes
        )

    def _active(self, state: Span) -> AbstractContextManager[Any]:
        # Current only while the request is sent (an httpx span nests under it), never across
        # the stream's yields, where it would leak into the caller's context.
        # Exceptions are reported by `_end` (class name only), not recorded with their message.
        current: AbstractContextManager[Any] = self._trace.use_span(
            state, end_on_exit=False, record_exception=False, set_status_on_exception=False
        )
        return current

    def _end(
        self, state: Span, record: RequestRecord, target: ChatResponse | ChatResponseUpdate | None
    ) -> None:
        span = state
        metric_attributes: dict[str, Any] = {OPERATION_NAME: CHAT, PROVIDER_NAME: self.backend}
        if record.request_model:
            metric_attributes[REQUEST_MODEL] = record.request_model
        if record.response_model:
            metric_attributes[RESPONSE_MODEL] = record.response_model
            span.set_attribute(RESPONSE_MODEL, record.response_model)
        if record.response_id:
            span.set_attribute(RESPONSE_ID, record.response_id)
        if record.finish_reasons:
            span.set_attribute(FINISH_REASONS, list(record.finish_reasons))
        usage = record.usage
        if usage is not None:
            for key, value in (
                (INPUT_TOKENS, usage.input_token_count),
                (OUTPUT_TOKENS, usage.output_token_count),
                (CACHE_READ_TOKENS, usage.cached_input_token_count),
                (REASONING_TOKENS, usage.reasoning_token_count),
            ):
                if value is not None:
                    span.set_attribute(key, value)
        for name, measured in record.timings.to_dict().items():
            span.set_attribute(f"oaicompat.timings.{name}", measured)
        span.set_attribute("oaicompat.request.status", record.status)
        if record.retry_attempts is not None:
            span.set_attribute("oaicompat.retry_attempts", record.retry_attempts)
        if record.error is not None:
            error_type = type(record.error).__name__
            metric_attributes[ERROR_TYPE] = error_type
            span.set_attribute(ERROR_TYPE, error_type)
            # The class name only: exception messages may hold URLs, never worth the risk.
            span.set_status(self._trace.StatusCode.ERROR, error_type)
        span.end()

        client = record.timings.client
        self._duration.record(client.e2e_ms / 1000.0, metric_attributes)
        if client.ttft_ms is not None:
            self._ttft.record(client.ttft_ms / 1000.0, metric_attributes)
        if usage is not None:
            for token_type, count in (
                ("input", usage.input_token_count),
                ("output", usage.output_token_count),
            ):
                if count is not None:
                    self._token_usage.record(count, {**metric_attributes, TOKEN_TYPE: token_type})

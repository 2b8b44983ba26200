"""oaicompat telemetry: timings and prompt-cache metrics that mean the same on every backend.

* ``TelemetryChatClient`` (a ``DelegatingChatClient``): ``RequestTimings`` on every response
  and one structlog event per request (names and keys in ``telemetry.events``).
* ``OpenTelemetryChatClient``: a span and GenAI metrics per request (the ``otel`` extra;
  ``opentelemetry`` is imported only when one is constructed).
* ``TimingsExtractor``, and ``BackendTimingsExtractor`` set up per backend (``extractor_for``).
* ``CacheEvolution``: the multi-turn prompt-cache table.
* ``TelemetryEmbeddingGenerator`` / ``OpenTelemetryEmbeddingGenerator``: the same for
  embeddings (one event per ``generate``; an ``embeddings {model}`` span and GenAI metrics).

Every value is either ``server_reported`` (``ServerTimings``, names ending ``_server``) or
``client_measured`` (``ClientTimings``, names ending ``_client``), never both under one name.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from providers.lazy_exports import lazy_exports as _lazy_exports

if _TYPE_CHECKING:
    from telemetry.cache import CacheEvolution as CacheEvolution
    from telemetry.cache import CacheTurn as CacheTurn
    from telemetry.cache_hint import CacheReportHint as CacheReportHint
    from telemetry.embeddings import EmbeddingObserver as EmbeddingObserver
    from telemetry.embeddings import EmbeddingRecord as EmbeddingRecord
    from telemetry.embeddings import TelemetryEmbeddingGenerator as TelemetryEmbeddingGenerator
    from telemetry.extractors import BackendTimingsExtractor as BackendTimingsExtractor
    from telemetry.extractors import GenericTimingsExtractor as GenericTimingsExtractor
    from telemetry.extractors import LlamaCppTimingsExtractor as LlamaCppTimingsExtractor
    from telemetry.extractors import SglangTimingsExtractor as SglangTimingsExtractor
    from telemetry.extractors import TimingsExtractor as TimingsExtractor
    from telemetry.extractors import VllmTimingsExtractor as VllmTimingsExtractor
    from telemetry.extractors import extractor_for as extractor_for
    from telemetry.measurement import Measurement as Measurement
    from telemetry.otel import OpenTelemetryChatClient as OpenTelemetryChatClient
    from telemetry.otel_embeddings import (
        OpenTelemetryEmbeddingGenerator as OpenTelemetryEmbeddingGenerator,
    )
    from telemetry.recorder import RETRY_ATTEMPTS_PROPERTY as RETRY_ATTEMPTS_PROPERTY
    from telemetry.recorder import RequestRecord as RequestRecord
    from telemetry.recorder import RequestRecorder as RequestRecorder
    from telemetry.recorder import RequestStatus as RequestStatus
    from telemetry.telemetry_client import RequestObserver as RequestObserver
    from telemetry.telemetry_client import TelemetryChatClient as TelemetryChatClient
    from telemetry.timings import CLIENT_MEASURED as CLIENT_MEASURED
    from telemetry.timings import REQUEST_TIMINGS as REQUEST_TIMINGS
    from telemetry.timings import SERVER_REPORTED as SERVER_REPORTED
    from telemetry.timings import ClientTimings as ClientTimings
    from telemetry.timings import RequestTimings as RequestTimings
    from telemetry.timings import ServerTimings as ServerTimings
    from telemetry.timings import Source as Source
    from telemetry.timings import request_timings as request_timings

# Each name loads its own module on first use, so ``import telemetry.extractors`` (a pure
# reader) pays for neither the structlog client nor the OpenTelemetry layer nor the recorder.
_lazy_exports(
    __name__,
    {
        ".cache": ("CacheEvolution", "CacheTurn"),
        ".cache_hint": ("CacheReportHint",),
        ".embeddings": ("EmbeddingObserver", "EmbeddingRecord", "TelemetryEmbeddingGenerator"),
        ".extractors": (
            "BackendTimingsExtractor",
            "GenericTimingsExtractor",
            "LlamaCppTimingsExtractor",
            "SglangTimingsExtractor",
            "TimingsExtractor",
            "VllmTimingsExtractor",
            "extractor_for",
        ),
        ".measurement": ("Measurement",),
        ".otel": ("OpenTelemetryChatClient",),
        ".otel_embeddings": ("OpenTelemetryEmbeddingGenerator",),
        ".recorder": (
            "RETRY_ATTEMPTS_PROPERTY",
            "RequestRecord",
            "RequestRecorder",
            "RequestStatus",
        ),
        ".telemetry_client": ("RequestObserver", "TelemetryChatClient"),
        ".timings": (
            "CLIENT_MEASURED",
            "REQUEST_TIMINGS",
            "SERVER_REPORTED",
            "ClientTimings",
            "RequestTimings",
            "ServerTimings",
            "Source",
            "request_timings",
        ),
    },
)

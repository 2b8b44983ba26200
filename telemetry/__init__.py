"""oaicompat telemetry: timings and prompt-cache metrics that mean the same on every backend.

* ``TelemetryChatClient`` (a ``DelegatingChatClient``): ``RequestTimings`` on every response
  and one structlog event per request (names and keys in ``telemetry.events``).
* ``OpenTelemetryChatClient``: a span and GenAI metrics per request (the ``otel`` extra;
  ``opentelemetry`` is imported only when one is constructed).
* ``TimingsExtractor`` and one implementation per backend (``extractor_for``).
* ``CacheEvolution``: the multi-turn prompt-cache table.

Every value is either ``server_reported`` (``ServerTimings``, names ending ``_server``) or
``client_measured`` (``ClientTimings``, names ending ``_client``), never both under one name.
"""

from telemetry.cache import CacheEvolution, CacheReportHint, CacheTurn
from telemetry.extractors import (
    GenericTimingsExtractor,
    LlamaCppTimingsExtractor,
    SglangTimingsExtractor,
    TimingsExtractor,
    VllmTimingsExtractor,
    extractor_for,
)
from telemetry.otel import OpenTelemetryChatClient
from telemetry.recorder import (
    RETRY_ATTEMPTS_PROPERTY,
    RequestRecord,
    RequestRecorder,
    RequestStatus,
)
from telemetry.telemetry_client import RequestObserver, TelemetryChatClient
from telemetry.timings import (
    CLIENT_MEASURED,
    REQUEST_TIMINGS,
    SERVER_REPORTED,
    ClientTimings,
    Measurement,
    RequestTimings,
    ServerTimings,
    Source,
    request_timings,
)

__all__ = [
    "CLIENT_MEASURED",
    "REQUEST_TIMINGS",
    "RETRY_ATTEMPTS_PROPERTY",
    "SERVER_REPORTED",
    "CacheEvolution",
    "CacheReportHint",
    "CacheTurn",
    "ClientTimings",
    "GenericTimingsExtractor",
    "LlamaCppTimingsExtractor",
    "Measurement",
    "OpenTelemetryChatClient",
    "RequestObserver",
    "RequestRecord",
    "RequestRecorder",
    "RequestStatus",
    "RequestTimings",
    "ServerTimings",
    "SglangTimingsExtractor",
    "Source",
    "TelemetryChatClient",
    "TimingsExtractor",
    "VllmTimingsExtractor",
    "extractor_for",
    "request_timings",
]

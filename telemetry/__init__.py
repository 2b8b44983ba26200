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

from typing import TYPE_CHECKING as _TYPE_CHECKING

from providers.lazy_exports import lazy_exports as _lazy_exports

if _TYPE_CHECKING:
    from telemetry.cache import CacheEvolution, CacheTurn
    from telemetry.cache_hint import CacheReportHint
    from telemetry.extractors import (
        GenericTimingsExtractor,
        LlamaCppTimingsExtractor,
        SglangTimingsExtractor,
        TimingsExtractor,
        VllmTimingsExtractor,
        extractor_for,
    )
    from telemetry.measurement import Measurement
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
        RequestTimings,
        ServerTimings,
        Source,
        request_timings,
    )

# Each name loads its own module on first use, so ``import telemetry.extractors`` (a pure
# reader) pays for neither the structlog client nor the OpenTelemetry layer nor the recorder.
_LAZY: dict[str, str] = {
    "CacheEvolution": "telemetry.cache",
    "CacheReportHint": "telemetry.cache_hint",
    "CacheTurn": "telemetry.cache",
    "GenericTimingsExtractor": "telemetry.extractors",
    "LlamaCppTimingsExtractor": "telemetry.extractors",
    "SglangTimingsExtractor": "telemetry.extractors",
    "TimingsExtractor": "telemetry.extractors",
    "VllmTimingsExtractor": "telemetry.extractors",
    "extractor_for": "telemetry.extractors",
    "OpenTelemetryChatClient": "telemetry.otel",
    "RETRY_ATTEMPTS_PROPERTY": "telemetry.recorder",
    "RequestRecord": "telemetry.recorder",
    "RequestRecorder": "telemetry.recorder",
    "RequestStatus": "telemetry.recorder",
    "RequestObserver": "telemetry.telemetry_client",
    "TelemetryChatClient": "telemetry.telemetry_client",
    "CLIENT_MEASURED": "telemetry.timings",
    "REQUEST_TIMINGS": "telemetry.timings",
    "SERVER_REPORTED": "telemetry.timings",
    "ClientTimings": "telemetry.timings",
    "Measurement": "telemetry.measurement",
    "RequestTimings": "telemetry.timings",
    "ServerTimings": "telemetry.timings",
    "Source": "telemetry.timings",
    "request_timings": "telemetry.timings",
}


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

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)

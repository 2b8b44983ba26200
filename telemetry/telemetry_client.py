"""``TelemetryChatClient``: request timings, one structlog event per request, observers.

Observes and never alters: updates pass through unchanged and undelayed. When a request
completes it attaches ``RequestTimings`` under ``additional_properties["request_timings"]``: on
the returned ``ChatResponse``, or on the last update of a stream (set when the inner stream
ends, i.e. before the caller's ``async for`` exits, so ``ChatResponse.from_updates`` of the
collected updates carries it; an update being processed *as it arrives* cannot carry it, since
the end is not known yet). Then it logs ``oaicompat.request.completed`` / ``.failed`` /
``.cancelled`` and calls each observer with the ``RequestRecord``.

Place it outermost in the pipeline, so it measures what the caller experiences and sees the
retry layer's ``retry_attempts``::

    client = (
        ChatClientBuilder(OpenAiCompatibleChatClient(url, backend="vllm"))
        .use(lambda inner: TelemetryChatClient(inner, observers=[evolution.add]))
        .use(TextRecoveryChatClient)
        .build()
    )
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from providers.abstractions.chat_client import ChatClient
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.logs import EventSink, get_logger
from providers.abstractions.properties import set_property
from providers.backends import BackendProfile
from telemetry.cache_hint import CacheReportHint
from telemetry.events import request_event
from telemetry.extractors import TimingsExtractor
from telemetry.observing import ObservingChatClient
from telemetry.recorder import RequestRecord
from telemetry.timings import REQUEST_TIMINGS

__all__ = ["RequestObserver", "TelemetryChatClient"]

_LOG = get_logger(__name__)

RequestObserver = Callable[[RequestRecord], object]
"""Called once per request, after the event is logged (``CacheEvolution.add`` is one)."""


class TelemetryChatClient(ObservingChatClient):
    """See the module docstring.

    ``logger`` defaults to the library's event logger (``providers.abstractions.logs``);
    ``attach_timings=False`` leaves responses and updates untouched; ``cache_hint`` may be shared
    with a ``CacheEvolution`` so the "start the server with --enable-…" hint is logged once.
    """

    def __init__(
        self,
        inner: ChatClient,
        *,
        backend: str | BackendProfile | None = None,
        extractor: TimingsExtractor | None = None,
        logger: EventSink | None = None,
        observers: Iterable[RequestObserver] = (),
        attach_timings: bool = True,
        cache_hint: CacheReportHint | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(inner, backend=backend, extractor=extractor, clock=clock)
        self._logger = logger if logger is not None else _LOG
        self._observers = tuple(observers)
        self._attach = attach_timings
        self.cache_hint = cache_hint if cache_hint is not None else CacheReportHint(logger)

    def _end(
        self, state: Any, record: RequestRecord, target: ChatResponse | ChatResponseUpdate | None
    ) -> None:
        if record.status == "ok":
            if self._attach and target is not None:
                set_property(target, REQUEST_TIMINGS, record.timings)
            self.cache_hint.check(record.timings.server)
        name, fields = request_event(record)
        if record.status == "error":
            self._logger.warning(name, **fields)
        else:
            self._logger.info(name, **fields)
        for observer in self._observers:
            observer(record)

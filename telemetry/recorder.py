"""Per-request bookkeeping shared by the telemetry wrappers.

``RequestRecorder`` watches one request go by (each streamed update, or the whole response) and
summarises it as a ``RequestRecord``: status, usage, finish reasons, retry count and
``RequestTimings``. It never changes what it watches. Its per-update path is the hot one, so it
does a handful of attribute checks and reads the clock only for substantive updates; everything
else (choosing the transport's instants, running the extractor) happens once, at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.contents import (
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
    UsageContent,
    UsageDetails,
)
from providers.abstractions.properties import RETRY_ATTEMPTS, TRANSPORT_TIMESTAMPS
from providers.abstractions.records import value_class
from telemetry.extractors import TimingsExtractor
from telemetry.timings import ClientTimings, RequestTimings

__all__ = [
    "RETRY_ATTEMPTS_PROPERTY",
    "RequestRecord",
    "RequestRecorder",
    "RequestStatus",
]

RETRY_ATTEMPTS_PROPERTY: Final = RETRY_ATTEMPTS
"""``additional_properties`` key (on the response, or on any streamed update) where a retry layer
inside the telemetry layer reports how many attempts were retried; on failure the same number is
read from the exception's ``retry_attempts`` attribute (``providers.abstractions.properties``)."""

_SUBSTANTIVE = (TextContent, TextReasoningContent, FunctionCallContent)
_SUBSTANTIVE_TYPES = frozenset(_SUBSTANTIVE)

RequestStatus = Literal["ok", "error", "cancelled"]
"""``cancelled``: the caller stopped consuming the stream early, or the task was cancelled."""


@value_class(frozen=True)
class RequestRecord:
    """What one request did; observers and the log event are built from it."""

    status: RequestStatus
    backend: str
    streamed: bool
    timings: RequestTimings
    request_model: str | None = None
    response_model: str | None = None
    response_id: str | None = None
    finish_reasons: tuple[str, ...] = ()
    usage: UsageDetails | None = None
    retry_attempts: int | None = None
    error: BaseException | None = None


class RequestRecorder:
    """Watches one request. Call ``observe`` per update (or ``observe_response`` once), then
    ``finish`` exactly once."""

    __slots__ = (
        "_clock",
        "_extractor",
        "_finish",
        "_first_token",
        "_last_token",
        "_raw_timings",
        "_response_id",
        "_response_model",
        "_retry_attempts",
        "_stamps",
        "_started",
        "_substantive",
        "_usage",
        "backend",
        "last",
        "request_model",
        "streamed",
    )

    def __init__(
        self,
        *,
        backend: str,
        extractor: TimingsExtractor,
        clock: Callable[[], float],
        streamed: bool,
        request_model: str | None = None,
    ) -> None:
        self.backend = backend
        self.streamed = streamed
        self.request_model = request_model
        self._extractor = extractor
        self._clock = clock
        self._started = clock()
        self._stamps: Mapping[str, Any] | None = None
        self._first_token: float | None = None
        self._last_token: float | None = None
        self._substantive = 0
        self._usage: UsageDetails | None = None
        self._raw_timings: Any = None
        self._finish: dict[int, str] | None = None  # made with the first finish reason
        self._response_model: str | None = None
        self._response_id: str | None = None
        self._retry_attempts: int | None = None
        self.last: ChatResponseUpdate | None = None
        """The latest update observed (telemetry attaches the request's timings to it)."""

    def observe(self, update: ChatResponseUpdate) -> None:
        """One streamed update: the hot path.

        "Substantive" is ``ChatResponseUpdate.is_substantive``'s rule (text, reasoning or a tool
        call; not role-only, keepalive, finish or usage updates), inlined in the same pass that
        looks for usage: the property builds a generator per call, several times the cost.
        """
        text = update.plain_text  # (not ``contents``: a plain update has no list)
        if text is not None:  # plain (``response_update``): one text or nothing, no fields
            if text:
                self._last_token = now = self._clock()
                if self._first_token is None:
                    self._first_token = now
                self._substantive += 1
            self._saw_model(update)
            self.last = update
            return
        contents = update.contents
        if contents:  # (tool-call fragments, role and keepalive updates have none)
            substantive = False
            for content in contents:
                kind = type(content)
                if kind in _SUBSTANTIVE_TYPES:
                    substantive = True
                elif kind is UsageContent:
                    details = content.details  # type: ignore[attr-defined]
                    usage = self._usage
                    self._usage = details if usage is None else usage.updated_with(details)
                elif isinstance(content, _SUBSTANTIVE):  # subclasses of the content types
                    substantive = True
            if substantive:
                self._last_token = now = self._clock()
                if self._first_token is None:
                    self._first_token = now
                self._substantive += 1
        finish = update.finish_reason
        if finish is not None:
            if self._finish is None:
                self._finish = {}
            self._finish[update.choice_index] = finish.value
        properties = update.additional_properties
        if properties:
            self._properties(properties)
        self._saw_model(update)
        self.last = update

    def _saw_model(self, update: ChatResponseUpdate) -> None:
        if self._response_model is None and update.model_id is not None:
            self._response_model = update.model_id
            self._response_id = update.response_id

    def observe_run(self, run: list[ChatResponseUpdate]) -> None:
        """The updates of one run (``update_runs``), which arrived together.

        Hot path: the usual update, one plain text with nothing else, is counted inline;
        its token time is the run's (one clock reading: they arrived in one read).
        """
        substantive = 0
        for update in run:
            text = update.plain_text  # (one text or a tool-call fragment's none, no fields)
            if text is not None and self._response_model is not None:
                if text:
                    substantive += 1
            else:
                self.observe(update)
        if substantive:
            self._last_token = now = self._clock()
            if self._first_token is None:
                self._first_token = now
            self._substantive += substantive
        if run:
            self.last = run[-1]

    def observe_response(self, response: ChatResponse) -> None:
        """A whole (non-streamed) response."""
        self._usage = response.usage
        if response.finish_reason is not None:
            if self._finish is None:
                self._finish = {}
            self._finish[0] = response.finish_reason.value
        self._response_model = response.model_id
        self._response_id = response.response_id
        self._properties(response.additional_properties)

    def _properties(self, props: Mapping[str, Any]) -> None:
        stamps = props.get(TRANSPORT_TIMESTAMPS)
        if stamps is not None and self._stamps is None and isinstance(stamps, Mapping):
            self._stamps = stamps
        timings = props.get("timings")
        if timings is not None:
            self._raw_timings = timings  # llama.cpp: the last one is the whole request's
        attempts = props.get(RETRY_ATTEMPTS_PROPERTY)
        if type(attempts) is int:
            self._retry_attempts = attempts

    def finish(self, status: RequestStatus, error: BaseException | None = None) -> RequestRecord:
        end = self._clock()
        stamps = self._stamps or {}
        sent = _instant(stamps, "request_sent")
        client = ClientTimings(
            started=self._started,
            request_sent=self._started if sent is None else sent,
            end=end,
            response_headers=_instant(stamps, "response_headers"),
            first_byte=_instant(stamps, "first_byte"),
            first_token=self._first_token,
            last_token=self._last_token,
            substantive_updates=self._substantive,
        )
        report = ChatResponse(usage=self._usage)
        if self._raw_timings is not None:
            report.additional_properties["timings"] = self._raw_timings
        server = self._extractor.extract(report)
        finish = self._finish or {}
        attempts = self._retry_attempts
        if attempts is None and error is not None:
            value = getattr(error, RETRY_ATTEMPTS_PROPERTY, None)
            attempts = value if type(value) is int else None
        return RequestRecord(
            status=status,
            backend=self.backend,
            streamed=self.streamed,
            timings=RequestTimings(self.backend, self.streamed, client, server),
            request_model=self.request_model,
            response_model=self._response_model,
            response_id=self._response_id,
            finish_reasons=tuple(finish[i] for i in sorted(finish)),
            usage=self._usage,
            retry_attempts=attempts,
            error=error,
        )


def _instant(stamps: Mapping[str, Any], key: str) -> float | None:
    value = stamps.get(key)
    return float(value) if type(value) is float or type(value) is int else None

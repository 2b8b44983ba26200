"""Telemetry's log event keys (stable API), its event names, and the one function that builds a
request's event.

The library logs through ``providers.abstractions.logs`` and configures nothing: the events go to
structlog when the application configured it, else to the standard library's ``oaicompat.*``
loggers, which are silent until the application configures logging. Every event name, in the one
``oaicompat.<area>.<event>`` scheme, is defined in ``providers.abstractions.event_names``; the
ones telemetry logs are re-exported here beside their keys, so dashboards and alerts can rely on
both. An event carries counts, timings, identifiers
and error *classes*; it never carries message text, options, headers or exception messages, which is
how API keys and prompt text stay out of logs by construction.
"""

from __future__ import annotations

from typing import Any, Final

from providers.abstractions import properties
from providers.abstractions.contents import UsageDetails
from providers.abstractions.errors import ProviderError
from providers.abstractions.event_names import (
    CACHE_REPORT_UNAVAILABLE,
    REQUEST_CANCELLED,
    REQUEST_COMPLETED,
    REQUEST_FAILED,
    TELEMETRY_FAILED,
)
from telemetry.recorder import RequestRecord

__all__ = [
    "BACKEND",
    "CACHE_REPORT_UNAVAILABLE",
    "ERROR_TYPE",
    "FINISH_REASONS",
    "HINT",
    "HTTP_STATUS",
    "MODEL",
    "REQUEST_CANCELLED",
    "REQUEST_COMPLETED",
    "REQUEST_FAILED",
    "REQUEST_MODEL",
    "RESPONSE_ID",
    "RETRY_ATTEMPTS",
    "SERVER_ERROR_CODE",
    "SERVER_ERROR_TYPE",
    "SERVER_FLAG",
    "STATUS",
    "STREAMED",
    "TELEMETRY_FAILED",
    "TIMINGS",
    "USAGE",
    "request_event",
    "usage_fields",
]

# Keys.
BACKEND: Final = "backend"
MODEL: Final = "model"
"""The model that answered (the server's name), else the one requested."""
REQUEST_MODEL: Final = "request_model"
RESPONSE_ID: Final = "response_id"
STATUS: Final = "status"
STREAMED: Final = "streamed"
FINISH_REASONS: Final = "finish_reasons"
USAGE: Final = "usage"
"""Token counts (server_reported by nature): ``input_tokens``, ``output_tokens``,
``total_tokens``, ``cached_input_tokens``, ``reasoning_tokens``; ``None`` = not reported."""
TIMINGS: Final = "timings"
"""``RequestTimings.to_dict()``: names end in ``_server`` or ``_client``."""
RETRY_ATTEMPTS: Final = properties.RETRY_ATTEMPTS
"""The same name as the ``additional_properties`` key the retry layer writes."""
ERROR_TYPE: Final = "error_type"
"""The exception's class name (``RateLimitError``)."""
HTTP_STATUS: Final = "http_status"
SERVER_ERROR_TYPE: Final = "server_error_type"
SERVER_ERROR_CODE: Final = "server_error_code"
SERVER_FLAG: Final = "server_flag"
HINT: Final = "hint"

_EVENT_BY_STATUS: Final = {
    "ok": REQUEST_COMPLETED,
    "error": REQUEST_FAILED,
    "cancelled": REQUEST_CANCELLED,
}


def usage_fields(usage: UsageDetails | None) -> dict[str, int | None] | None:
    if usage is None:
        return None
    return {
        "input_tokens": usage.input_token_count,
        "output_tokens": usage.output_token_count,
        "total_tokens": usage.total_token_count,
        "cached_input_tokens": usage.cached_input_token_count,
        "reasoning_tokens": usage.reasoning_token_count,
    }


def request_event(record: RequestRecord) -> tuple[str, dict[str, Any]]:
    """The event name and its fields for one finished request."""
    fields: dict[str, Any] = {
        BACKEND: record.backend,
        MODEL: record.response_model or record.request_model,
        REQUEST_MODEL: record.request_model,
        RESPONSE_ID: record.response_id,
        STATUS: record.status,
        STREAMED: record.streamed,
        FINISH_REASONS: list(record.finish_reasons),
        USAGE: usage_fields(record.usage),
        TIMINGS: record.timings.to_dict(),
        RETRY_ATTEMPTS: record.retry_attempts,
    }
    error = record.error
    if error is not None:
        fields[ERROR_TYPE] = type(error).__name__
        if isinstance(error, ProviderError):
            fields[HTTP_STATUS] = error.status
            fields[SERVER_ERROR_TYPE] = error.error_type
            fields[SERVER_ERROR_CODE] = error.code
    return _EVENT_BY_STATUS[record.status], fields

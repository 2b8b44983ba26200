"""``request_event``: stable names and keys, counts and error classes, never message text."""

from __future__ import annotations

from providers import RateLimitError, UsageDetails
from telemetry import ClientTimings, RequestRecord, RequestTimings, ServerTimings, events

CLIENT = ClientTimings(
    started=1.0, request_sent=1.0, end=2.0, first_token=1.5, last_token=1.9, substantive_updates=3
)


def record(**overrides: object) -> RequestRecord:
    values: dict[str, object] = {
        "status": "ok",
        "backend": "llamacpp",
        "streamed": True,
        "timings": RequestTimings(
            "llamacpp", True, CLIENT, ServerTimings("llamacpp", prompt_ms=25.6)
        ),
        "request_model": "anything",
        "response_model": "rig/tiny.gguf",
        "response_id": "chatcmpl-1",
        "finish_reasons": ("stop",),
        "usage": UsageDetails(
            input_token_count=177,
            output_token_count=6,
            total_token_count=183,
            cached_input_token_count=5,
        ),
    }
    values.update(overrides)
    return RequestRecord(**values)  # type: ignore[arg-type]


def test_completed_event_fields() -> None:
    name, fields = events.request_event(record(retry_attempts=2))
    assert name == events.REQUEST_COMPLETED == "oaicompat.request.completed"
    assert fields[events.BACKEND] == "llamacpp"
    assert fields[events.MODEL] == "rig/tiny.gguf"
    assert fields[events.REQUEST_MODEL] == "anything"
    assert fields[events.STATUS] == "ok"
    assert fields[events.FINISH_REASONS] == ["stop"]
    assert fields[events.RETRY_ATTEMPTS] == 2
    assert fields[events.USAGE] == {
        "input_tokens": 177,
        "output_tokens": 6,
        "total_tokens": 183,
        "cached_input_tokens": 5,
        "reasoning_tokens": None,
    }
    assert fields[events.TIMINGS]["prompt_ms_server"] == 25.6
    assert fields[events.TIMINGS]["ttft_ms_client"] > 0
    assert events.ERROR_TYPE not in fields


def test_failed_event_names_the_error_class_not_its_message() -> None:
    error = RateLimitError(
        "slow down, key sk-LEAK",
        status=429,
        backend="vllm",
        error_type="rate_limit_error",
        code=429,
    )
    name, fields = events.request_event(record(status="error", error=error, usage=None))
    assert name == events.REQUEST_FAILED == "oaicompat.request.failed"
    assert fields[events.ERROR_TYPE] == "RateLimitError"
    assert fields[events.HTTP_STATUS] == 429
    assert fields[events.SERVER_ERROR_TYPE] == "rate_limit_error"
    assert fields[events.USAGE] is None
    assert "sk-LEAK" not in repr(fields)


def test_cancelled_has_its_own_event_and_model_falls_back_to_the_request() -> None:
    name, fields = events.request_event(record(status="cancelled", response_model=None))
    assert name == events.REQUEST_CANCELLED == "oaicompat.request.cancelled"
    assert fields[events.MODEL] == "anything"


def test_event_names_and_keys_are_unique_constants() -> None:
    names = [
        events.REQUEST_COMPLETED,
        events.REQUEST_FAILED,
        events.REQUEST_CANCELLED,
        events.CACHE_REPORT_UNAVAILABLE,
        events.TELEMETRY_FAILED,
    ]
    assert len(set(names)) == len(names)
    assert all(name.startswith("oaicompat.") for name in names)

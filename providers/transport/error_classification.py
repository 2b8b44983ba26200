"""An HTTP error answer or an in-stream error event, as the ``ProviderError`` subclass that
says what the caller does next (the tree is drawn in ``providers.abstractions.errors``).

The class follows the status, except that a context overflow is recognised whatever the status
(``providers.transport.context_overflow``) and an in-stream error, which arrives after HTTP 200,
takes the status its payload names: a ``status_code`` (or ``status``) field, in the error object
or beside it (Groq, OpenRouter), else a numeric ``code``, else an HTTP status name (SGLang), else
the OpenAI error type (``invalid_request_error`` is a 400: the request is wrong, and retrying it
cannot help). An event that names no status at all is a server failure.

Messages quote the server's, bounded and redacted (``providers.transport.error_redaction``); of
an error that arrived mid-stream only the first line is quoted, since past the 200 the server
has generated text and its errors may quote it (llama.cpp's "Invalid diff" quotes the tool call
being generated). The untouched body is kept in ``body``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from providers.abstractions.errors import (
    ApiStatusError,
    AuthenticationError,
    BackendUnavailableError,
    ContextLengthExceededError,
    InvalidRequestError,
    ModelNotFoundError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
    ServerError,
)
from providers.abstractions.limits import DEFAULT_LIMITS

if TYPE_CHECKING:
    from providers.transport.error_bodies import ErrorBody

# Every wire client imports this module, but only an error answer runs it: reading the body
# (``error_bodies``) and the overflow wordings (``context_overflow``, 17 patterns) cost about
# 2.5 ms of a first request's cold start (-X importtime), so they load with the first error.

__all__ = ["error_from_response", "error_from_stream_event"]

_VALIDATION = r"\s*\d+ validation errors?\b"
"""Pydantic's summary line ("1 validation error for …", "2 validation errors:")."""
_MESSAGE_LIMIT = 1000  # characters of the server's message quoted in an exception's message


def error_from_response(
    status: int,
    body: bytes | str | None,
    *,
    backend: str | None = None,
    retry_after: float | None = None,
) -> ProviderError:
    """The typed error for an HTTP error answer (``retry_after``: ``retry_after_from_headers``)."""
    # deferred: error answers only (cold start, see the imports)
    from providers.transport.error_bodies import parse_error_body

    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    parsed = parse_error_body(text)
    return _classify(
        status,
        parsed,
        backend=backend,
        body=text,
        retry_after=retry_after,
        prefix=f"HTTP {status} from {backend or 'the server'}",
        quoted=parsed.message,
    )


def error_from_stream_event(
    payload: Mapping[str, Any], *, backend: str | None = None
) -> ProviderError:
    """The typed error for a ``data: {"error": …}`` event (or an error body with HTTP 200).

    Only the message's first line is quoted: past the 200 the server has generated text, and
    its errors may quote it (the rest stays in ``body``).
    """
    # deferred: error answers only (cold start, see the imports)
    from providers.transport.error_bodies import parse_error_body

    parsed = parse_error_body(payload)
    status = _explicit_status(parsed.extra, payload) or _status_from(parsed.code, parsed.error_type)
    first_line, _, rest = parsed.message.strip().partition("\n")
    return _classify(
        status,
        parsed,
        backend=backend,
        body=json.dumps(payload, ensure_ascii=False)[: DEFAULT_LIMITS.max_error_body_bytes],
        retry_after=None,
        prefix=f"error event in the stream from {backend or 'the server'}",
        quoted=first_line + (" […]" if rest.strip() else ""),
    )


def _classify(
    status: int | None,
    parsed: ErrorBody,
    *,
    backend: str | None,
    body: str | None,
    retry_after: float | None,
    prefix: str,
    quoted: str,
) -> ProviderError:
    # deferred: error answers only (cold start, see the imports)
    from providers.transport.context_overflow import (
        context_window,
        is_context_overflow,
        prompt_tokens,
    )

    message = f"{prefix}: {_bounded(quoted)}" if quoted else prefix
    if retry_after is not None:
        message += f" (the server asked to wait {retry_after:g} s before retrying)"
    common: dict[str, Any] = {
        "status": status,
        "backend": backend,
        "error_type": parsed.error_type,
        "code": parsed.code,
        "param": parsed.param,
        "body": body,
        "retry_after": retry_after,
    }
    if is_context_overflow(status, parsed):
        return ContextLengthExceededError(
            message,
            prompt_tokens=prompt_tokens(parsed),
            context_window=context_window(parsed),
            **common,
        )
    return _status_class(status, parsed)(message, **common)


def _status_class(status: int | None, parsed: ErrorBody) -> type[ApiStatusError]:
    if status == 401:
        return AuthenticationError
    if status == 403:
        return PermissionDeniedError
    if status == 404 and (parsed.param == "model" or "model" in parsed.message.lower()):
        return ModelNotFoundError
    if status == 429:
        return RateLimitError
    if status in (408, 409):
        return ApiStatusError  # "try again" statuses: the request itself is fine
    if status in (502, 503, 504):
        return BackendUnavailableError
    if status == 500 and re.match(_VALIDATION, parsed.message):
        # llama-cpp-python wraps FastAPI's request validation in its 500 (docs/wire.md §7):
        # the request is wrong, and sending it again would only fail again.
        return InvalidRequestError
    if status is None or status >= 500:
        return ServerError  # an in-stream error that states no status: the server failed
    if status >= 400:
        return InvalidRequestError
    return ApiStatusError


_TYPE_STATUS: dict[str, int] = {
    "invalid_request_error": 400,  # OpenAI, Groq, OpenRouter, llama.cpp
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "rate_limit_error": 429,
    "server_error": 500,
    "not_supported_error": 501,
    "unavailable_error": 503,  # llama.cpp
}
"""OpenAI-style error types, by the HTTP status they stand for."""

_STATUS_KEYS = ("status_code", "status")


def _explicit_status(*sources: Mapping[str, Any]) -> int | None:
    """A ``status_code``/``status`` field in the error object or beside it (Groq, OpenRouter)."""
    for source in sources:
        for key in _STATUS_KEYS:
            status = _as_status(source.get(key))
            if status is not None:
                return status
    return None


def _as_status(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
        return value
    if isinstance(value, str) and value.isdigit() and 100 <= int(value) <= 599:
        return int(value)
    return None


def _status_from(code: Any, error_type: str | None) -> int | None:
    """In-stream errors carry their status as ``code``, as an HTTP status name (SGLang), or
    only as an OpenAI error ``type``."""
    status = _as_status(code)
    if status is not None:
        return status
    for candidate in (error_type, code):
        if isinstance(candidate, str):
            name = candidate.upper().replace(" ", "_")
            if name in HTTPStatus.__members__:
                return int(HTTPStatus[name])
    if isinstance(error_type, str) and error_type.lower() in _TYPE_STATUS:
        return _TYPE_STATUS[error_type.lower()]
    return None


def _bounded(message: str) -> str:
    if len(message) <= _MESSAGE_LIMIT:
        return message
    return message[:_MESSAGE_LIMIT] + f"… ({len(message)} characters)"

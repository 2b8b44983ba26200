"""One typed error hierarchy for every backend, and the normalisation of their error bodies.

::

    ProviderError                      root: status, backend, error_type, code, user_message, body,
    │                                  partial_response (what was received before the failure)
    ├── ProviderConnectionError        no HTTP answer (refused, reset before headers): retryable
    ├── ProviderTimeoutError           a time budget ran out (phase: connect/first_token/idle/total)
    ├── StreamInterruptedError         the stream broke after it started (EOF, reset): partial kept
    ├── InvalidResponseError           the server answered something that is not the protocol
    ├── ContextLengthExceededError     the prompt does not fit: terminal whatever the status
    └── ApiStatusError                 an HTTP error status, one subclass per caller action
        ├── AuthenticationError        401
        ├── PermissionDeniedError      403
        ├── ModelNotFoundError         404 naming the model (vLLM), or a model-id mismatch
        ├── InvalidRequestError        400, 404 (route), 409, 413, 422 …
        ├── RateLimitError             429 (retry_after)
        ├── BackendUnavailableError    502, 503 (model loading, overloaded), 504
        └── ServerError                500 and other 5xx

Bodies come in five shapes (research/wire.md §4): nested ``{"error": {...}}`` (llama.cpp, vLLM,
OpenAI), flat ``{"object": "error", ...}`` (SGLang, vLLM < 0.10.1), bare ``{"error": "text"}``
(vLLM/SGLang 401), FastAPI ``{"detail": ...}``, and non-JSON (an HTML page from a proxy, of which
a short excerpt is kept). Errors never carry prompt or completion text in their messages.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from providers.chat_response import ChatResponse

__all__ = [
    "ApiStatusError",
    "AuthenticationError",
    "BackendUnavailableError",
    "ContextLengthExceededError",
    "ErrorBody",
    "InvalidRequestError",
    "InvalidResponseError",
    "ModelNotFoundError",
    "PermissionDeniedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RateLimitError",
    "ServerError",
    "StreamInterruptedError",
    "error_from_response",
    "error_from_stream_event",
    "parse_error_body",
]

_EXCERPT = 300


class ProviderError(Exception):
    """Root of every error this library raises about a backend."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        backend: str | None = None,
        error_type: str | None = None,
        code: str | int | None = None,
        param: str | None = None,
        user_message: str | None = None,
        body: str | None = None,
        partial_response: ChatResponse | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.backend = backend
        self.error_type = error_type
        self.code = code
        self.param = param
        self.user_message = user_message or _default_user_message(status)
        self.body = body
        self.partial_response = partial_response

    @property
    def technical_message(self) -> str:
        return str(self)


class ProviderConnectionError(ProviderError):
    """The server could not be reached, or closed the connection before answering."""


class ProviderTimeoutError(ProviderError):
    """A time budget ran out; ``phase`` says which (connect, first_token, idle, total)."""

    def __init__(self, message: str, *, phase: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.phase = phase


class StreamInterruptedError(ProviderError):
    """The stream ended before its end (EOF without a finish, a reset mid-stream).

    ``partial_response`` holds everything received; the request is not retried automatically
    because output already reached the caller.
    """


class InvalidResponseError(ProviderError):
    """The server broke the protocol (a non-JSON ``data:`` line, a body without ``choices``)."""


class ContextLengthExceededError(ProviderError):
    """The prompt (or prompt + max_tokens) does not fit the context window. Never retried as is."""

    def __init__(
        self,
        message: str,
        *,
        prompt_tokens: int | None = None,
        context_window: int | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        self.prompt_tokens = prompt_tokens
        self.context_window = context_window


class ApiStatusError(ProviderError):
    """The server answered with an HTTP error status."""


class AuthenticationError(ApiStatusError):
    pass


class PermissionDeniedError(ApiStatusError):
    pass


class ModelNotFoundError(ApiStatusError):
    pass


class InvalidRequestError(ApiStatusError):
    pass


class RateLimitError(ApiStatusError):
    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class BackendUnavailableError(ApiStatusError):
    pass


class ServerError(ApiStatusError):
    pass


def _default_user_message(status: int | None) -> str:
    if status in (401, 403):
        return "The model server rejected the credentials; check the API key."
    if status == 429:
        return "The model server is rate-limiting requests; try again shortly."
    if status is not None and status >= 500:
        return f"The model server failed (HTTP {status}); try again shortly."
    if status is not None:
        return f"The model server rejected the request (HTTP {status})."
    return "The model server could not be used."


@dataclass(slots=True)
class ErrorBody:
    """The fields of an error body, whatever envelope carried them."""

    message: str
    error_type: str | None = None
    code: str | int | None = None
    param: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def parse_error_body(body: bytes | str | Mapping[str, Any] | None) -> ErrorBody:
    """Read any of the five envelopes; never raises."""
    if body is None:
        return ErrorBody("")
    payload: Any = body
    if isinstance(body, bytes | str):
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        try:
            payload = json.loads(text)
        except ValueError:
            return ErrorBody(_excerpt(text))
    if not isinstance(payload, Mapping):
        return ErrorBody(_excerpt(json.dumps(payload, ensure_ascii=False)))
    error = payload.get("error")
    if isinstance(error, Mapping):
        return _from_fields(error)
    if isinstance(error, str):
        return ErrorBody(error)
    if payload.get("object") == "error" or "message" in payload:
        return _from_fields(payload)
    detail = payload.get("detail")
    if detail is not None:
        return ErrorBody(detail if isinstance(detail, str) else json.dumps(detail))
    return ErrorBody(_excerpt(json.dumps(payload, ensure_ascii=False)))


def _from_fields(fields: Mapping[str, Any]) -> ErrorBody:
    known = {"message", "type", "code", "param", "object"}
    code = fields.get("code")
    param = fields.get("param")
    return ErrorBody(
        message=str(fields.get("message") or ""),
        error_type=_str_or_none(fields.get("type")),
        code=code if isinstance(code, str | int) else None,
        param=param if isinstance(param, str) else None,
        extra={k: v for k, v in fields.items() if k not in known},
    )


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _excerpt(text: str) -> str:
    """A short, single-line excerpt of a non-JSON body (an HTML error page, usually)."""
    stripped = re.sub(r"<[^>]*>", " ", text)
    collapsed = " ".join(stripped.split())
    return collapsed[:_EXCERPT] + ("…" if len(collapsed) > _EXCERPT else "")


# Context overflow, recognised by structured type first, then by each server's wording
# (research/wire.md §4). Each pattern's groups are (context window) or (prompt tokens).
_OVERFLOW_TYPES = {"exceed_context_size_error", "context_length_exceeded"}
_OVERFLOW_TEXT = re.compile(
    r"maximum context length|exceeds the available context size|context length is only"
    r"|longer than the model's context length|requested token count exceeds"
    r"|longer than the maximum model length|prompt is too long",
    re.IGNORECASE,
)
_CONTEXT_WINDOW = [
    re.compile(r"maximum context length (?:is|of) (\d+)", re.IGNORECASE),
    re.compile(r"available context size \((\d+) tokens\)", re.IGNORECASE),
    re.compile(r"model's context length \((\d+) tokens\)", re.IGNORECASE),
    re.compile(r"context length is only (\d+)", re.IGNORECASE),
    re.compile(r"maximum model length of (\d+)", re.IGNORECASE),
]
_PROMPT_TOKENS = [
    re.compile(r"prompt contains (?:at least )?(\d+) input tokens", re.IGNORECASE),
    re.compile(r"request \((\d+) tokens\)", re.IGNORECASE),
    re.compile(r"the input \((\d+) tokens\)", re.IGNORECASE),
    re.compile(r"(\d+) tokens from the input messages", re.IGNORECASE),
    re.compile(r"\((\d+) in the messages", re.IGNORECASE),
    re.compile(r"decoder prompt \(length (\d+)\)", re.IGNORECASE),
]
# Messages that mention length but are about request structure, not prompt size.
_STRUCTURAL = re.compile(
    r"system message must be at the beginning|must alternate|invalid role", re.IGNORECASE
)


def _first_int(patterns: list[re.Pattern[str]], text: str) -> int | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _status_from(code: Any, error_type: str | None) -> int | None:
    """In-stream errors carry their status as ``code`` or as an HTTP status name (SGLang)."""
    if isinstance(code, int) and 100 <= code <= 599:
        return code
    if isinstance(code, str) and code.isdigit():
        return int(code)
    for candidate in (error_type, code):
        if isinstance(candidate, str):
            name = candidate.upper().replace(" ", "_")
            if name in HTTPStatus.__members__:
                return int(HTTPStatus[name])
    return None


def _classify(
    status: int | None,
    parsed: ErrorBody,
    *,
    backend: str | None,
    body: str | None,
    retry_after: float | None,
    prefix: str,
) -> ProviderError:
    message = f"{prefix}: {parsed.message}" if parsed.message else prefix
    common: dict[str, Any] = {
        "status": status,
        "backend": backend,
        "error_type": parsed.error_type,
        "code": parsed.code,
        "param": parsed.param,
        "body": body,
    }
    kind = (parsed.error_type or "").lower()
    code_text = str(parsed.code or "").lower()
    if (
        kind in _OVERFLOW_TYPES
        or code_text in _OVERFLOW_TYPES
        or status == 413
        or (_OVERFLOW_TEXT.search(parsed.message) and not _STRUCTURAL.search(parsed.message))
    ):
        return ContextLengthExceededError(
            message,
            prompt_tokens=_positive_int(parsed.extra.get("n_prompt_tokens"))
            or _first_int(_PROMPT_TOKENS, parsed.message),
            context_window=_positive_int(parsed.extra.get("n_ctx"))
            or _first_int(_CONTEXT_WINDOW, parsed.message),
            user_message="The conversation is too long for the model's context window.",
            **common,
        )
    cls: type[ApiStatusError]
    if status == 401:
        cls = AuthenticationError
    elif status == 403:
        cls = PermissionDeniedError
    elif status == 404 and (parsed.param == "model" or "model" in parsed.message.lower()):
        cls = ModelNotFoundError
    elif status == 429:
        return RateLimitError(message, retry_after=retry_after, **common)
    elif status in (502, 503, 504):
        cls = BackendUnavailableError
    elif status is not None and status >= 500:
        cls = ServerError
    elif status is None:
        cls = ServerError  # an in-stream error that states no status: the server failed
    else:
        cls = InvalidRequestError
    return cls(message, **common)


def error_from_response(
    status: int,
    body: bytes | str | None,
    *,
    backend: str | None = None,
    retry_after: float | None = None,
) -> ProviderError:
    """The typed error for an HTTP error answer."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    parsed = parse_error_body(text)
    return _classify(
        status,
        parsed,
        backend=backend,
        body=text,
        retry_after=retry_after,
        prefix=f"HTTP {status} from {backend or 'the server'}",
    )


def error_from_stream_event(
    payload: Mapping[str, Any], *, backend: str | None = None
) -> ProviderError:
    """The typed error for a ``data: {"error": …}`` event received after a 200."""
    parsed = parse_error_body(payload)
    status = _status_from(parsed.code, parsed.error_type)
    return _classify(
        status,
        parsed,
        backend=backend,
        body=json.dumps(payload, ensure_ascii=False),
        retry_after=None,
        prefix=f"error event in the stream from {backend or 'the server'}",
    )

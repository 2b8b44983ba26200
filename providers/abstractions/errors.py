"""One typed error hierarchy for every backend, and the normalisation of their error bodies.

Branches follow what the caller does next::

    ProviderError                    root: status, backend, error_type, code, param, user_message,
    │                                body (raw), retry_after, partial_response, retry_attempts
    ├── ConfigurationError           misuse of this library (also a ValueError): fix the code
    ├── ProviderConnectionError      transport: refused, or closed before any event arrived;
    │                                nothing to duplicate, so retryable
    ├── ProviderTimeoutError         a time budget ran out (also the builtin TimeoutError);
    │                                phase: connect (retryable) | first_token | idle | total
    ├── StreamInterruptedError       transport: the stream broke after it started (reset, EOF
    │                                without finish or [DONE]); partial kept; retryable only
    │                                while no output has reached the caller
    ├── InvalidResponseError         protocol: the server answered something that is not the
    │                                protocol (a non-JSON event, a body without choices)
    ├── ContextLengthExceededError   the prompt does not fit: terminal whatever the status;
    │                                prompt_tokens, context_window when the server said them
    └── ApiStatusError               an HTTP error status (or an error event in a stream);
        │                            408, 409 and unlisted statuses stay at this class
        ├── AuthenticationError      401: fix the key
        ├── PermissionDeniedError    403: the key may not do this
        ├── ModelNotFoundError       404 naming the model: fix the model id
        ├── InvalidRequestError      400, 404 (route), 422 …: fix the request
        ├── RateLimitError           429: wait retry_after
        ├── BackendUnavailableError  502, 503 (loading, overloaded), 504: wait, it may come back
        └── ServerError              500 and other 5xx, or an in-stream error without a status

``TimeoutError`` is the issue's name for ``ProviderTimeoutError``. It is not defined here as an
alias: a module-level ``TimeoutError`` would shadow the builtin for anyone star-importing this
module (and ruff's A001 forbids it). Instead ``ProviderTimeoutError`` *subclasses* the builtin
``TimeoutError``, so ``except TimeoutError`` catches it exactly as the issue's name suggests.

Bodies come in five shapes (docs/wire.md §4.1): nested ``{"error": {...}}`` (llama.cpp, vLLM,
OpenAI), flat ``{"object": "error", ...}`` (SGLang, vLLM < 0.10.1), bare ``{"error": "text"}``
(vLLM/SGLang 401), FastAPI ``{"detail": ...}``, and non-JSON (an HTML page from a proxy, of which a
short excerpt is kept); a stream may carry the first three as ``data: {"error": ...}``.

Messages never carry prompt or completion text. The server's message is quoted, but bounded, and
with what servers are known to echo removed: pydantic's ``'input': …`` (SGLang, FastAPI validation
errors repeat the offending request value), nlohmann's ``last read: '…'`` and llama.cpp's ``Failed
to parse input at pos N: …`` (both quote text), and everything after the first line of an error
that arrived mid-stream (llama.cpp's "Invalid diff" quotes the tool call being generated). The
untouched body is kept in ``body`` for whoever needs it.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from providers.abstractions.chat_response import ChatResponse

__all__ = [
    "ApiStatusError",
    "AuthenticationError",
    "BackendUnavailableError",
    "ConfigurationError",
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
    "TimeoutPhase",
    "error_from_response",
    "error_from_stream_event",
    "parse_error_body",
    "retry_after_from_headers",
]

_EXCERPT = 300  # characters kept of a non-JSON body
_MESSAGE_LIMIT = 1000  # characters of the server's message quoted in an exception's message

TimeoutPhase = Literal["connect", "first_token", "idle", "total"]


class ProviderError(Exception):
    """Root of every error this library raises.

    ``str(error)`` is the technical message (for logs); ``user_message`` is safe to show an end
    user. ``body`` is the raw error body, ``partial_response`` what a stream delivered before it
    failed, ``retry_attempts`` how many retries the retry layer made before giving up.
    """

    retry_attempts: int | None = None

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
        retry_after: float | None = None,
        partial_response: ChatResponse | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.backend = backend
        self.error_type = error_type
        self.code = code
        self.param = param
        self.body = body
        self.retry_after = retry_after
        self.partial_response = partial_response
        self.user_message = user_message or self._default_user_message()

    def _default_user_message(self) -> str:
        return "The model server could not be used."

    @property
    def technical_message(self) -> str:
        return str(self)

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only constructor arguments defeat the default exception pickling.
        return (_rebuild, (type(self), self.args), self.__dict__)


def _rebuild(cls: type[ProviderError], args: tuple[Any, ...]) -> ProviderError:
    error = cls.__new__(cls, *args)
    Exception.__init__(error, *args)
    return error


class ConfigurationError(ProviderError, ValueError):
    """An argument to this library is invalid (a negative budget, zero attempts…)."""

    def _default_user_message(self) -> str:
        return "The model client is misconfigured."


class ProviderConnectionError(ProviderError):
    """The server could not be reached, or closed the connection before answering."""

    def _default_user_message(self) -> str:
        return "The model server could not be reached; check that it is running."


class ProviderTimeoutError(ProviderError, TimeoutError):
    """A time budget ran out; ``phase`` says which, ``budget`` its length in seconds.

    Only ``connect`` is safe to retry: in every other phase the server has the request and may
    have spent minutes on its prefill, which a retry would repeat.
    """

    def __init__(
        self, message: str, *, phase: TimeoutPhase, budget: float | None = None, **kwargs: Any
    ) -> None:
        self.phase: TimeoutPhase = phase
        self.budget = budget
        super().__init__(message, **kwargs)

    def _default_user_message(self) -> str:
        return _TIMEOUT_USER_MESSAGES[self.phase]


_TIMEOUT_USER_MESSAGES: dict[str, str] = {
    "connect": "The model server did not accept the connection in time.",
    "first_token": "The model server took too long to start answering.",
    "idle": "The model server stopped sending its answer.",
    "total": "The answer took longer than the request's time limit.",
}


class StreamInterruptedError(ProviderError):
    """The stream ended before its end (a reset mid-stream, EOF without a finish or [DONE]).

    ``partial_response`` holds everything received. Once output has reached the caller the
    request is not retried: a second answer would repeat the first one's beginning.
    """

    def _default_user_message(self) -> str:
        return "The model server's answer was cut off before it finished."


class InvalidResponseError(ProviderError):
    """The server broke the protocol (a non-JSON ``data:`` line, a body without ``choices``)."""

    def _default_user_message(self) -> str:
        return "The model server sent an answer this client cannot read."


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

    def _default_user_message(self) -> str:
        return "The conversation is too long for the model's context window."


class ApiStatusError(ProviderError):
    """The server answered with an HTTP error status; 408, 409 and unlisted ones stay here."""

    def _default_user_message(self) -> str:
        if self.status is None:
            return "The model server reported an error."
        return f"The model server answered with an error (HTTP {self.status})."


class AuthenticationError(ApiStatusError):
    def _default_user_message(self) -> str:
        return "The model server rejected the credentials; check the API key."


class PermissionDeniedError(ApiStatusError):
    def _default_user_message(self) -> str:
        return "The model server refused this request for these credentials."


class ModelNotFoundError(ApiStatusError):
    def _default_user_message(self) -> str:
        return "The model server does not serve the requested model."


class InvalidRequestError(ApiStatusError):
    def _default_user_message(self) -> str:
        suffix = f" (HTTP {self.status})" if self.status is not None else ""
        return f"The model server rejected the request{suffix}."


class RateLimitError(ApiStatusError):
    def _default_user_message(self) -> str:
        return "The model server is rate-limiting requests; try again shortly."


class BackendUnavailableError(ApiStatusError):
    def _default_user_message(self) -> str:
        return "The model server is unavailable or still loading the model; try again shortly."


class ServerError(ApiStatusError):
    def _default_user_message(self) -> str:
        suffix = f" (HTTP {self.status})" if self.status is not None else ""
        return f"The model server failed{suffix}; try again shortly."


# --- bodies ------------------------------------------------------------------------------------


@dataclass(slots=True)
class ErrorBody:
    """The fields of an error body, whatever envelope carried them.

    ``message`` is the server's, with echoed request values redacted (see the module docstring).
    """

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
    if isinstance(payload, list) and len(payload) == 1 and isinstance(payload[0], Mapping):
        payload = payload[0]  # some gateways wrap the envelope in a list
    if not isinstance(payload, Mapping):
        return ErrorBody(_json_excerpt(payload))
    error = payload.get("error")
    if isinstance(error, Mapping):
        return _from_fields(error)
    if isinstance(error, str):
        return ErrorBody(_redact(error))
    if payload.get("object") == "error" or "message" in payload:
        return _from_fields(payload)
    detail = payload.get("detail")
    if detail is not None:
        return ErrorBody(_detail_text(detail))
    return ErrorBody(_json_excerpt(payload))


def _from_fields(fields: Mapping[str, Any]) -> ErrorBody:
    known = {"message", "type", "code", "param", "object"}
    code = fields.get("code")
    param = fields.get("param")
    message = fields.get("message")
    return ErrorBody(
        message=_redact(message if isinstance(message, str) else str(message or "")),
        error_type=_str_or_none(fields.get("type")),
        code=code if isinstance(code, str | int) and not isinstance(code, bool) else None,
        param=param if isinstance(param, str) else None,
        extra={k: v for k, v in fields.items() if k not in known},
    )


def _detail_text(detail: Any) -> str:
    """FastAPI's ``detail``: a string, or validation items whose ``input`` is the request's."""
    if isinstance(detail, str):
        return _redact(detail)
    if isinstance(detail, list) and all(isinstance(d, Mapping) and "msg" in d for d in detail):
        parts = []
        for item in detail:
            loc = item.get("loc")
            where = ".".join(str(p) for p in loc) if isinstance(loc, list | tuple) else ""
            parts.append(f"{where}: {item['msg']}" if where else str(item["msg"]))
        return "; ".join(parts)
    return _redact(json.dumps(detail, ensure_ascii=False))


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


_HIDDEN_TAG = re.compile(r"<(/?)(script|style)\b", re.IGNORECASE)
_TAG = re.compile(r"<[^<>]*>")  # no "<" inside: each attempt stops at the next one (linear)


def _excerpt(text: str) -> str:
    """A short, single-line excerpt of a non-JSON body (an HTML error page, usually).

    Only the first 64 KiB are looked at: the excerpt is 300 characters, and nothing here may
    cost more than linear time on a hostile page.
    """
    visible = _TAG.sub(" ", _without_hidden(text[:65536]))
    import html  # error pages only: kept off `import providers`

    collapsed = " ".join(html.unescape(visible).split())
    return collapsed[:_EXCERPT] + ("…" if len(collapsed) > _EXCERPT else "")


def _json_excerpt(payload: Any) -> str:
    """An unrecognised JSON body, as short text (echoed ``input`` values redacted)."""
    text = " ".join(_redact(json.dumps(payload, ensure_ascii=False)).split())
    return text[:_EXCERPT] + ("…" if len(text) > _EXCERPT else "")


def _without_hidden(text: str) -> str:
    """The page without ``<script>`` and ``<style>`` contents, in one pass over their tags."""
    pieces: list[str] = []
    pos = 0
    hiding: str | None = None
    for match in _HIDDEN_TAG.finditer(text):
        closing, name = match.group(1), match.group(2).lower()
        if hiding is None and not closing:
            pieces.append(text[pos : match.start()])
            hiding = name
        elif hiding == name and closing:
            end = text.find(">", match.end())
            pos = len(text) if end == -1 else end + 1
            hiding = None
    if hiding is None:
        pieces.append(text[pos:])
    return " ".join(pieces)


# --- echoed request and completion text ---------------------------------------------------------

_ECHO_KEY = re.compile(r"""['"]input['"]\s*:\s*""")
_LAST_READ = re.compile(r"last read: '.*?'(?=; |;$|$)", re.DOTALL)
_PARSE_AT_POS = re.compile(r"(Failed to parse input at pos \d+:).*", re.DOTALL)
_REDACTED = "<redacted>"
_CLOSERS = {"[": "]", "(": ")", "{": "}"}


def _redact(message: str) -> str:
    """Remove the request and output text servers are known to quote in error messages."""
    if "input" in message:
        message = _redact_echoed_inputs(message)
    if "last read: '" in message:
        message = _LAST_READ.sub(f"last read: {_REDACTED}", message)
    if "Failed to parse input at pos" in message:
        message = _PARSE_AT_POS.sub(rf"\1 {_REDACTED}", message)
    return message


def _redact_echoed_inputs(message: str) -> str:
    pieces: list[str] = []
    pos = 0
    for match in _ECHO_KEY.finditer(message):
        if match.start() < pos:
            continue  # inside a value already redacted
        pieces.append(message[pos : match.end()])
        pieces.append(_REDACTED)
        pos = _skip_literal(message, match.end())
    if not pieces:
        return message
    pieces.append(message[pos:])
    return "".join(pieces)


def _skip_literal(text: str, start: int) -> int:
    """The end of the Python or JSON literal starting at ``start`` (a repr, best effort)."""
    end = len(text)
    if start >= end:
        return start
    opening = text[start]
    if opening in "'\"":
        return _skip_string(text, start)
    if opening in _CLOSERS:
        stack = [_CLOSERS[opening]]
        i = start + 1
        while i < end and stack:
            char = text[i]
            if char in "'\"":
                i = _skip_string(text, i)
                continue
            if char in _CLOSERS:
                stack.append(_CLOSERS[char])
            elif char == stack[-1]:
                stack.pop()
            i += 1
        return i
    i = start
    while i < end and text[i] not in ",)]}\n":
        i += 1
    return i


def _skip_string(text: str, start: int) -> int:
    quote = text[start]
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    return i


def _bounded(message: str) -> str:
    if len(message) <= _MESSAGE_LIMIT:
        return message
    return message[:_MESSAGE_LIMIT] + f"… ({len(message)} characters)"


# --- context overflow ------------------------------------------------------------------------

# Recognised by structured type first, then by each server's wording (docs/wire.md §4.2). Each
# pattern's group is the context window or the prompt's token count.
_OVERFLOW_TYPES = {"exceed_context_size_error", "context_length_exceeded"}
_OVERFLOW_TEXT = re.compile(
    r"maximum context length|exceeds the available context size|context length is only"
    r"|longer than the model's context length|requested token count exceeds"
    r"|longer than the maximum model length|is larger than the max context size"
    r"|prompt is too long",
    re.IGNORECASE,
)
_CONTEXT_WINDOW = [
    re.compile(r"maximum context length (?:is|of) (\d+)", re.IGNORECASE),
    re.compile(r"available context size \((\d+) tokens\)", re.IGNORECASE),
    re.compile(r"model's context length \((\d+) tokens\)", re.IGNORECASE),
    re.compile(r"context length is only (\d+)", re.IGNORECASE),
    re.compile(r"maximum model length of (\d+)", re.IGNORECASE),
    re.compile(r"max context size \((\d+) tokens\)", re.IGNORECASE),
]
_PROMPT_TOKENS = [
    re.compile(r"prompt contains (?:at least )?(\d+) input tokens", re.IGNORECASE),
    re.compile(r"you passed (\d+) input tokens", re.IGNORECASE),  # vLLM >= 0.16
    re.compile(r"request \((\d+) tokens\)", re.IGNORECASE),
    re.compile(r"the input \((\d+) tokens\)", re.IGNORECASE),
    re.compile(r"\binput \((\d+) tokens\) is larger", re.IGNORECASE),
    re.compile(r"(\d+) tokens from the input messages", re.IGNORECASE),
    re.compile(r"\((\d+) in the messages", re.IGNORECASE),
    re.compile(r"decoder prompt \(length (\d+)\)", re.IGNORECASE),
    re.compile(r"parameter=input_tokens, value=(\d+)", re.IGNORECASE),
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
    if isinstance(code, int) and not isinstance(code, bool) and 100 <= code <= 599:
        return code
    if isinstance(code, str) and code.isdigit() and 100 <= int(code) <= 599:
        return int(code)
    for candidate in (error_type, code):
        if isinstance(candidate, str):
            name = candidate.upper().replace(" ", "_")
            from http import HTTPStatus

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
    quoted: str,
) -> ProviderError:
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
        cls = RateLimitError
    elif status in (408, 409):
        cls = ApiStatusError  # "try again" statuses: the request itself is fine
    elif status in (502, 503, 504):
        cls = BackendUnavailableError
    elif status is None or status >= 500:
        cls = ServerError  # an in-stream error that states no status: the server failed
    elif status >= 400:
        cls = InvalidRequestError
    else:
        cls = ApiStatusError
    return cls(message, **common)


def error_from_response(
    status: int,
    body: bytes | str | None,
    *,
    backend: str | None = None,
    retry_after: float | None = None,
) -> ProviderError:
    """The typed error for an HTTP error answer (``retry_after``: ``retry_after_from_headers``)."""
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
    parsed = parse_error_body(payload)
    status = _status_from(parsed.code, parsed.error_type)
    first_line, _, rest = parsed.message.strip().partition("\n")
    return _classify(
        status,
        parsed,
        backend=backend,
        body=json.dumps(payload, ensure_ascii=False),
        retry_after=None,
        prefix=f"error event in the stream from {backend or 'the server'}",
        quoted=first_line + (" […]" if rest.strip() else ""),
    )


def retry_after_from_headers(
    headers: Mapping[str, str], *, now: float | None = None
) -> float | None:
    """Seconds the server asked to wait, in openai-python's order: ``retry-after-ms``, then
    ``Retry-After`` as seconds, then as an HTTP-date (relative to ``now``, default
    ``time.time()``). ``None`` when absent or unreadable; a date in the past gives ``0.0``.
    """
    lowered = {key.lower(): value for key, value in headers.items()}
    value = lowered.get("retry-after-ms")
    if value:
        seconds = _finite(value)
        if seconds is not None:
            return max(0.0, seconds / 1000.0)
    value = lowered.get("retry-after")
    if not value:
        return None
    seconds = _finite(value)
    if seconds is not None:
        return max(0.0, seconds)
    try:
        import email.utils  # HTTP-dates are rare; email costs ~15 ms of `import providers`
        from datetime import UTC

        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)  # asctime and "-0000" forms: HTTP-dates are always GMT
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _finite(value: str) -> float | None:
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None

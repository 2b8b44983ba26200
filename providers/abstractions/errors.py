"""One typed error hierarchy for every backend: the exceptions callers catch.

Branches follow what the caller does next::

    ProviderError                    root: status, backend, error_type, code, param, user_message,
    │                                body (raw), retry_after, partial_response, retry_attempts
    ├── ConfigurationError           misuse of this library (also a ValueError): fix the code
    │   └── ConfigurationTypeError   an argument of the wrong type (also a TypeError)
    ├── EventLoopError               a client asked to serve an event loop it cannot (also a
    │                                RuntimeError): a borrowed http client, a closed sync client
    ├── ProviderConnectionError      transport: refused, or closed before any event arrived;
    │                                nothing to duplicate, so retryable
    ├── ProviderTimeoutError         a time budget ran out (also the builtin TimeoutError);
    │                                phase: connect (retryable) | first_token | idle | total
    ├── StreamInterruptedError       transport: the stream broke after it started (reset, EOF
    │                                without finish or [DONE]); partial kept; retryable only
    │                                while no output has reached the caller
    ├── InvalidResponseError         protocol: the server answered something that is not the
    │   │                            protocol (a non-JSON event, a body without choices)
    │   └── ResponseTooLargeError    past one of the client's Limits (limit: which one)
    ├── ContextLengthExceededError   the prompt does not fit: terminal whatever the status;
    │                                prompt_tokens, context_window when the server said them
    ├── StructuredOutputError        get_response_as: the answer is not JSON of the requested
    │                                type; text (raw), response, reason, problems
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

Only the classes live here. Which class an error body or an in-stream error event becomes is
decided where the bytes arrive, in ``providers.transport.error_classification`` (with the
envelope reading in ``providers.transport.error_bodies``), so this package stays free of wire
formats.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from providers.abstractions.chat_response import ChatResponse

__all__ = [
    "ApiStatusError",
    "AuthenticationError",
    "BackendUnavailableError",
    "ConfigurationError",
    "ConfigurationTypeError",
    "ContextLengthExceededError",
    "EventLoopError",
    "InvalidRequestError",
    "InvalidResponseError",
    "ModelNotFoundError",
    "PermissionDeniedError",
    "ProviderConnectionError",
    "ProviderError",
    "ProviderTimeoutError",
    "RateLimitError",
    "ResponseTooLargeError",
    "ServerError",
    "StreamInterruptedError",
    "StructuredOutputError",
    "TimeoutPhase",
]

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


class ConfigurationTypeError(ConfigurationError, TypeError):
    """An argument has the wrong type (an int ``ChatOptions.conversation_id``, a str where a
    list goes), found where the value is given rather than as an untyped error deep in a
    request. Also a ``TypeError``, what Python raises for the same mistake, so code that caught
    that keeps working. The message names the argument and the type given, never the value."""


class EventLoopError(ProviderError, RuntimeError):
    """The client cannot serve the event loop (or thread) that called it: an ``http_client`` the
    caller passed in is bound to the loop that first used it, a ``SyncChatClient`` was used after
    ``close()`` or from its own loop thread. Also a ``RuntimeError``, which is what asyncio raises
    for the same misuse, so code that caught that keeps working."""

    def _default_user_message(self) -> str:
        return "The model client was used from an event loop it cannot serve."


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


class ResponseTooLargeError(InvalidResponseError):
    """What the server sent passed one of the client's ``Limits`` (``limit`` names the field):
    a line, a body, a tool call or held text larger than any healthy server sends."""

    def __init__(self, message: str, *, limit: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.limit = limit


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


class StructuredOutputError(ProviderError):
    """``get_response_as``: the model's answer is not a value of the requested type.

    ``reason`` is ``invalid_json`` (no JSON, or JSON cut short: a ``length`` finish) or
    ``schema_mismatch`` (JSON the type rejects); ``problems`` lists what the type rejected, one
    line each, without the values. Nothing is lost: ``text`` is the raw answer as parsed,
    ``response`` (also ``partial_response``) the whole ``ChatResponse`` with its usage, so a
    caller can log it, repair it or ask again. The message names the type, never the text.
    """

    def __init__(
        self,
        message: str,
        *,
        text: str,
        response: ChatResponse,
        reason: Literal["invalid_json", "schema_mismatch"],
        problems: tuple[str, ...] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(message, partial_response=response, **kwargs)
        self.text = text
        self.response = response
        self.reason = reason
        self.problems = problems

    def _default_user_message(self) -> str:
        return "The model's answer did not have the expected structure."


class UnsupportedOptionError(ConfigurationError):
    """An option this backend, or this model family on it, cannot honour: refused before
    anything is sent (a regex on llama.cpp, ``effort=NONE`` on a model that always thinks, a
    JSON Schema and a grammar together).

    ``option`` names the option (``reasoning.effort``, ``response_format.regex``), ``backend``
    the server's row, ``family`` the model family when the verdict depends on it (``None``:
    the backend alone decides). ``reason`` says why, and what to do instead. A client's
    ``unsupported_options`` setting can turn this into a warning or nothing.
    """

    def __init__(
        self,
        message: str,
        *,
        option: str,
        backend: str,
        family: str | None = None,
        reason: str = "",
        **kwargs: Any,
    ) -> None:
        super().__init__(message, backend=backend, param=option, **kwargs)
        self.option = option
        self.family = family
        self.reason = reason

    def _default_user_message(self) -> str:
        return "The model server cannot honour one of the requested options."


class ConstraintViolationError(ProviderError):
    """The answer does not obey the constraint that was asked for (a JSON Schema, a regular
    expression, a list of choices): the server ignored or lost it, and an unconstrained answer
    is never passed off as a constrained one.

    ``constraint`` is the format's kind (``json_schema``, ``regex``, ``choice``), ``problem``
    what is wrong without quoting the answer. Nothing is lost: ``response`` (also
    ``partial_response``) is the whole answer with its usage.
    """

    def __init__(
        self,
        message: str,
        *,
        constraint: str,
        problem: str,
        response: ChatResponse,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, partial_response=response, **kwargs)
        self.constraint = constraint
        self.problem = problem
        self.response = response

    def _default_user_message(self) -> str:
        return "The model's answer did not follow the requested format."


class ApiStatusError(ProviderError):
    """The server answered with an HTTP error status; 408, 409 and unlisted ones stay here."""

    def _default_user_message(self) -> str:
        if self.status is None:
            return "The model server reported an error."
        return f"The model server answered with an error (HTTP {self.status})."


class AuthenticationError(ApiStatusError):
    """401: the server did not accept the credentials. Never retried (the same key fails
    again); fix ``api_key``. The CLI adds which variable was unset when no key was sent."""

    def _default_user_message(self) -> str:
        return "The model server rejected the credentials; check the API key."


class PermissionDeniedError(ApiStatusError):
    """403: the credentials are valid but may not do this (a model or route outside the key's
    scope). Never retried; a fallback with its own key may still answer."""

    def _default_user_message(self) -> str:
        return "The model server refused this request for these credentials."


class ModelNotFoundError(ApiStatusError):
    """404 that names the model: the id is not served. Kept apart from a missing route
    (``InvalidRequestError``) because the fix differs; ``capabilities.model_not_found_error``
    adds the served ids and the closest one."""

    def _default_user_message(self) -> str:
        return "The model server does not serve the requested model."


class InvalidRequestError(ApiStatusError):
    """400, 422, a 404 for a route, …: the server refused this request as written. Retrying the
    same body cannot help, so it is terminal; ``param`` names the field when the server did."""

    def _default_user_message(self) -> str:
        suffix = f" (HTTP {self.status})" if self.status is not None else ""
        return f"The model server rejected the request{suffix}."


class RateLimitError(ApiStatusError):
    """429: the server asks the caller to slow down. Retried after ``retry_after`` (the
    server's ``Retry-After``) when that is within the retry policy's bounds."""

    def _default_user_message(self) -> str:
        return "The model server is rate-limiting requests; try again shortly."


class BackendUnavailableError(ApiStatusError):
    """502, 503, 504: the server (or the proxy before it) cannot answer now, often a model
    still loading. Transient, so retried; a role's fallback answers once the retries are spent."""

    def _default_user_message(self) -> str:
        return "The model server is unavailable or still loading the model; try again shortly."


class ServerError(ApiStatusError):
    """500 and other 5xx, or an error event in a stream without a status: the server failed
    while handling a valid request. Retried (as 500 when it has no status)."""

    def _default_user_message(self) -> str:
        suffix = f" (HTTP {self.status})" if self.status is not None else ""
        return f"The model server failed{suffix}; try again shortly."

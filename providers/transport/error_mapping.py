"""The one place transport failures become ``ProviderError``s.

Every streaming client (chat completions, Responses) wraps its request in a
``TransportErrorMapping`` so an httpx exception, a watchdog expiry, a cut connection or a payload
of a shape the normaliser cannot read (``providers.transport.json_guard.MALFORMED``) reaches the
caller as the same typed error, with everything received so far attached.
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Protocol

import httpx

from providers.abstractions.chat_response import ChatResponseBuilder
from providers.abstractions.errors import (
    InvalidResponseError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    StreamInterruptedError,
    TimeoutPhase,
)
from providers.transport.error_redaction import scrub_secrets
from providers.transport.json_guard import MALFORMED, malformed
from providers.transport.timeouts import Watchdog, budget_error

__all__ = ["PartialStream", "TransportErrorMapping"]


class PartialStream(Protocol):
    """What a stream has received so far, as the error mapping needs it."""

    @property
    def partial(self) -> ChatResponseBuilder: ...

    def has_token(self) -> bool: ...

    def attach_partial(self, error: ProviderError) -> None: ...


class TransportErrorMapping:
    """The one place transport failures become ``ProviderError``s (``raise … from exc``).

    A ``ProviderError`` passes through with the partial response attached; httpx exceptions are
    mapped (connection vs. interrupted depends on whether anything was received); a
    ``CancelledError`` that the watchdog caused becomes its ``ProviderTimeoutError``, any other
    cancellation propagates untouched.
    """

    __slots__ = ("_backend", "_connect_budget", "_secrets", "_state", "_url", "_watch")

    def __init__(
        self,
        *,
        backend: str,
        url: str,
        connect_budget: float | None,
        state: PartialStream | None = None,
        watch: Watchdog | None = None,
        secrets: tuple[str, ...] = (),
    ) -> None:
        self._backend = backend
        self._secrets = secrets
        self._url = url
        self._connect_budget = connect_budget
        self._state = state
        self._watch = watch

    def __enter__(self) -> TransportErrorMapping:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            return
        error = self.mapped(exc)
        if error is not None and error is not exc:
            raise error from exc

    def mapped(self, exc: BaseException) -> ProviderError | None:
        """The error ``exc`` stands for, with the partial response attached (``exc`` itself
        when it is already one); ``None`` when it must propagate untouched. For a caller that
        makes the mapping only once something failed, instead of entering it up front."""
        error = self._map(exc)
        if error is not None:
            scrub_secrets(error, self._secrets)  # a key echoed in an in-stream error event
        if error is not None and self._state is not None:
            try:
                self._state.attach_partial(error)
            except MALFORMED:  # (a tool call still being assembled breaks it too)
                if error.partial_response is None:
                    error.partial_response = self._state.partial.build()
        return error

    def _map(self, exc: BaseException) -> ProviderError | None:
        if isinstance(exc, ProviderError):
            if exc.backend is None:  # raised by a part that knows no backend (SseDecoder)
                exc.backend = self._backend
            return exc
        backend = self._backend
        if isinstance(exc, asyncio.CancelledError):
            watch = self._watch
            return watch.expiry_error() if watch is not None else None
        if isinstance(exc, httpx.TimeoutException):
            # Only connect can fire (read, write and pool are the watchdog's): the rest is
            # mapped for a transport that enforces its own.
            if isinstance(exc, httpx.ConnectTimeout | httpx.PoolTimeout):
                return budget_error("connect", self._connect_budget, backend)
            started = self._state is not None and self._state.has_token()
            phase: TimeoutPhase = "idle" if started else "first_token"
            return ProviderTimeoutError(f"{phase} timeout: {exc!r}", phase=phase, backend=backend)
        if isinstance(exc, httpx.TransportError):
            if self._state is not None and self._state.partial.count:
                return StreamInterruptedError(
                    f"the connection broke mid-stream: {exc!r}", backend=backend
                )
            return ProviderConnectionError(
                f"could not reach {self._url} or it closed the connection "
                f"before answering: {exc!r}",
                backend=backend,
            )
        if isinstance(exc, httpx.DecodingError):
            return InvalidResponseError(f"the body could not be decoded: {exc!r}", backend=backend)
        if isinstance(exc, httpx.RequestError):
            return ProviderConnectionError(f"the request failed: {exc!r}", backend=backend)
        if isinstance(exc, MALFORMED):
            return malformed(exc, backend)
        return None

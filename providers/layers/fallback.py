"""``FallbackChatClient``: a second backend for when the first one fails before answering.

Failover follows the same rule as retry (``providers.layers.retry``): a request may move to another
backend only while the caller has seen no output. A stream is therefore read up to its first
substantive update (text, reasoning or a tool call; 64 updates into a long tool call, see
``providers.layers.stream_head.read_head``) before anything is released; if the main
backend fails first, its held-back updates are dropped and the fallback's stream is released
instead, so the caller sees exactly one backend's answer. Once output has started an error
surfaces with its partial response, as it would without this layer: mixing the opening of one
model's answer with the rest of another's would be worse than the error.

Each layer keeps its own job: put a ``RetryingChatClient`` *inside* each backend (as
``providers.config.client_for`` does) so transient errors are retried on the main backend before
failing over, and telemetry inside too, so each backend's timings are its own.

Per-request credentials stay at home: ``ChatOptions.headers`` that carry a credential
(``Authorization``, ``Cookie``, ``X-Api-Key``…, and the names either backend's
``sensitive_headers`` adds; ``providers.transport.credentials``) were given for the main
backend, so they are dropped from the fallback's request when the two backends are at different
origins (scheme, host, port), or when either origin cannot be told (a client of the caller's own
without a wire client under it); the fallback authenticates with its own configured key, and a
warning (``oaicompat.request.credentials_dropped``) names the dropped headers, never their values.
Other per-request headers (a trace id, a routing key) go to the fallback unchanged.

The answer says who gave it: ``additional_properties["answered_by"]`` holds the backend's name on
the response (on the first update of a stream), and ``"fallback_reason"`` the main backend's
error class when the fallback answered. A fallback is also logged (``oaicompat.request.fallback``,
warning).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Self, TypeVar

from providers.abstractions.chat_client import ChatClient, ChatInput
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.delegating import close_stream
from providers.abstractions.errors import ConfigurationError, ProviderError
from providers.abstractions.event_names import REQUEST_CREDENTIALS_DROPPED, REQUEST_FALLBACK
from providers.abstractions.limits import DEFAULT_LIMITS, Limits
from providers.abstractions.options import ChatOptions
from providers.abstractions.properties import set_property
from providers.abstractions.services import capabilities_of, service_of
from providers.abstractions.sync_client import SyncChatClient
from providers.layers.stream_head import Head, read_head, replayable
from providers.transport.credentials import credential_names, origin_of

if TYPE_CHECKING:
    from providers.abstractions.logs import EventSink
    from providers.abstractions.structured_output import StructuredResponse

_Service = TypeVar("_Service")
_Value = TypeVar("_Value")

__all__ = [
    "ANSWERED_BY",
    "CREDENTIALS_DROPPED_EVENT",
    "FALLBACK_EVENT",
    "FALLBACK_REASON",
    "FallbackChatClient",
    "falls_back_on",
]

ANSWERED_BY = "answered_by"
"""``additional_properties`` key: the name of the backend that produced the answer."""

FALLBACK_REASON = "fallback_reason"
"""``additional_properties`` key, set only when the fallback answered: the main error's class."""

FALLBACK_EVENT = REQUEST_FALLBACK

CREDENTIALS_DROPPED_EVENT = REQUEST_CREDENTIALS_DROPPED
"""Logged (warning) when per-request credentials were kept from the fallback's origin."""


def falls_back_on(error: ProviderError) -> bool:
    """The default decision: every backend failure, but not a local configuration mistake.

    Deliberately broad. Besides outages (connection, timeout, 5xx, 429) a backend-specific 400
    such as vLLM's "auto tool choice requires --enable-auto-tool-choice", an unknown model id or
    a context window too small for the prompt are all problems another backend may not have. A
    ``ConfigurationError`` is raised before any request and would be the same on both.
    """
    return not isinstance(error, ConfigurationError)


def _credential_rule(main: ChatClient, fallback: ChatClient) -> tuple[bool, frozenset[str]]:
    """Whether ``main`` and ``fallback`` are at one origin (known for both), and the header
    names either wire client's configuration marks as credentials."""
    # deferred: the wire clients' base, which a stack of the caller's own clients never needs
    from providers.chat_completions.http_client_base import HttpClientBase

    wires = [service_of(client, HttpClientBase) for client in (main, fallback)]
    origins = [None if wire is None else origin_of(wire.endpoint.api_base) for wire in wires]
    sensitive = frozenset().union(*(wire.sensitive_headers for wire in wires if wire is not None))
    return origins[0] is not None and origins[0] == origins[1], sensitive


class FallbackChatClient:
    """Sends each request to ``main``; if it fails before answering, to ``fallback``.

    ``should_fall_back`` narrows which ``ProviderError``s switch backends (default
    ``falls_back_on``). When both fail, the fallback's error is raised with a note naming the
    main backend's error. Cancellation and programming errors are never caught. Closing this
    client closes both backends. ``limits.max_held_updates`` bounds what a stream's head may
    hold before its first token (``providers.layers.stream_head.read_head``).
    """

    def __init__(
        self,
        main: ChatClient,
        fallback: ChatClient,
        *,
        main_name: str = "main",
        fallback_name: str = "fallback",
        should_fall_back: Callable[[ProviderError], bool] = falls_back_on,
        logger: EventSink | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.main = main
        self.fallback = fallback
        self.main_name = main_name
        self.fallback_name = fallback_name
        self._should_fall_back = should_fall_back
        self._logger = logger
        self._max_held = (limits or DEFAULT_LIMITS).max_held_updates
        self._credential_rule: tuple[bool, frozenset[str]] | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(main={self.main_name!r}, fallback={self.fallback_name!r})"

    def _switching(self, error: ProviderError) -> bool:
        if not self._should_fall_back(error):
            return False
        self._log().warning(
            FALLBACK_EVENT,
            main=self.main_name,
            fallback=self.fallback_name,
            error=type(error).__name__,
            status=getattr(error, "status", None),
            backend=error.backend,
        )
        return True

    def _log(self) -> Any:
        if self._logger is None:
            # deferred: structlog costs 50 ms at import, and only a failover logs
            from providers.abstractions.logs import get_logger

            self._logger = get_logger(__name__)
        return self._logger

    def _fallback_options(self, options: ChatOptions | None) -> ChatOptions | None:
        """``options`` for the fallback: without the per-request credentials when it is at
        another origin than the main backend (see the module docstring)."""
        if options is None or not options.headers:
            return options
        if self._credential_rule is None:
            self._credential_rule = _credential_rule(self.main, self.fallback)
        same_origin, sensitive = self._credential_rule
        if same_origin:
            return options
        dropped = credential_names(options.headers, sensitive)
        if not dropped:
            return options
        kept = {k: v for k, v in options.headers.items() if k not in dropped}
        self._log().warning(
            CREDENTIALS_DROPPED_EVENT,
            main=self.main_name,
            fallback=self.fallback_name,
            headers=sorted(dropped),
        )
        return replace(options, headers=kept or None)

    def _both_failed(self, main_error: ProviderError, error: ProviderError) -> None:
        error.add_note(
            f"the fallback {self.fallback_name!r} was tried because the main backend "
            f"{self.main_name!r} failed first: {type(main_error).__name__}: {main_error}"
        )

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        messages = replayable(messages)
        try:
            response = await self.main.get_response(messages, options)
        except ProviderError as main_error:
            if not self._switching(main_error):
                raise
            try:
                response = await self.fallback.get_response(
                    messages, self._fallback_options(options)
                )
            except ProviderError as error:
                self._both_failed(main_error, error)
                raise
            response.additional_properties[ANSWERED_BY] = self.fallback_name
            response.additional_properties[FALLBACK_REASON] = type(main_error).__name__
            return response
        response.additional_properties[ANSWERED_BY] = self.main_name
        return response

    async def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        messages = replayable(messages)
        stream: AsyncIterator[ChatResponseUpdate] | None = None
        failed: BaseException | None = None
        try:
            stream = self.main.get_streaming_response(messages, options)
            head, more = await read_head(stream, self._max_held)
        except BaseException as exc:  # (no yield in the try: never the caller's GeneratorExit)
            failed = exc
        if failed is not None:
            stream, (head, more) = await self._failed_over(failed, messages, options)
        if head:
            if failed is None:
                set_property(head[0], ANSWERED_BY, self.main_name)
            else:
                set_property(head[0], ANSWERED_BY, self.fallback_name)
                set_property(head[0], FALLBACK_REASON, type(failed).__name__)
        if not more:  # it ended within its head: give the connection back before replaying
            await close_stream(stream)
        try:
            for update in head:
                yield update
            head = []  # (not kept for the rest of the stream)
            if more:
                assert stream is not None
                async for update in stream:
                    yield update
        finally:
            await close_stream(stream)

    async def _failed_over(
        self, failed: BaseException, messages: ChatInput, options: ChatOptions | None
    ) -> tuple[AsyncIterator[ChatResponseUpdate], Head]:
        """The fallback's stream and its head, after the main one failed in its head with
        ``failed`` (its stream already closed); or the error that ends the request."""
        if not isinstance(failed, ProviderError) or not self._switching(failed):
            raise failed
        stream = self.fallback.get_streaming_response(messages, self._fallback_options(options))
        try:
            return stream, await read_head(stream, self._max_held)
        except ProviderError as error:
            self._both_failed(failed, error)
            raise

    async def get_response_as(
        self, output_type: type[_Value], messages: ChatInput, options: ChatOptions | None = None
    ) -> StructuredResponse[_Value]:
        """``get_response`` asked for a value of ``output_type`` (as on every client): the
        fallback answers the same request if the main backend fails; the answer is then read
        and validated once, whoever gave it."""
        # deferred: pydantic's cold import (~65 ms), paid only by structured output
        from providers.abstractions.structured_output import get_response_as

        return await get_response_as(self, output_type, messages, options)

    def get_service(self, service_type: type[_Service]) -> _Service | None:
        """This client, or what the main backend's stack offers (the fallback answers only
        when the main one fails, so it describes nothing by default)."""
        if isinstance(self, service_type):
            return self
        return service_of(self.main, service_type)

    async def get_capabilities(self, *, refresh: bool = False) -> Any:
        """The main backend's capabilities."""
        return await capabilities_of(self.main, refresh=refresh)

    def as_sync(self) -> SyncChatClient:
        """This client behind a blocking API (``SyncChatClient``), on a private loop thread."""
        return SyncChatClient(self)

    async def aclose(self) -> None:
        try:
            await self.main.aclose()
        finally:
            await self.fallback.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

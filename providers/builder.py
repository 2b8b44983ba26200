"""Composable client layers, in the Microsoft.Extensions.AI style.

A cross-cutting concern (text recovery, retry, telemetry, failover) is one ``DelegatingChatClient``
subclass that overrides only what it changes. ``ChatClientBuilder(inner).use(...).build()`` makes
the first ``use`` the outermost layer, as MEAI's builder does, so reading the builder top to
bottom follows a request from the caller inwards.

On a stream, each layer is an async generator over the stream of the layer inside it, as MEAI's
layers are async iterators over theirs: an update goes from the wire client's SSE loop through
each layer's ``async for`` to the caller's, in call order, and a reader can follow it there. A
caller's ``break`` closes the layers from the outside in (each closes its inner stream in
``finally``), down to the HTTP response. A client of the caller's own that returns any async
iterator composes the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING, Any

from providers.abstractions.chat_client import ChatClient
from providers.abstractions.errors import ConfigurationError
from providers.layers.extra_body import ExtraBodyChatClient
from providers.layers.retry import RetryingChatClient, RetryPolicy
from providers.layers.text_recovery import TextRecoveryChatClient
from telemetry.telemetry_client import TelemetryChatClient

if TYPE_CHECKING:
    from providers.layers.anonymous import GetResponse, GetStreamingResponse
    from providers.layers.session_affinity import SessionAffinity

__all__ = ["ChatClientBuilder"]


LayerFactory = Callable[[ChatClient], ChatClient]


class ChatClientBuilder:
    """Collects layer factories; ``build()`` applies them so the first added is outermost.

    The ``use_*`` methods add the library's own layers (OpenTelemetry itself is imported only
    when an ``OpenTelemetryChatClient`` is made). The standard order
    (``providers.factory.create_chat_client``) reads::

        ChatClientBuilder(client).use_telemetry().use_retry().use_text_recovery().build()

    ``use`` adds a layer of the caller's own: a factory (``inner -> client``, a
    ``DelegatingChatClient`` subclass is one), or, for one-off middleware, the functions that
    stand for its methods (``AnonymousDelegatingChatClient``, as MEAI's ``Use`` overload).
    """

    def __init__(self, inner: ChatClient) -> None:
        self._inner = inner
        self._factories: list[LayerFactory] = []

    def use(
        self,
        factory: LayerFactory | None = None,
        *,
        get_response: GetResponse | None = None,
        get_streaming_response: GetStreamingResponse | None = None,
    ) -> ChatClientBuilder:
        """Add a layer: ``factory(inner)``, or one made of ``get_response(messages, options,
        inner)`` and ``get_streaming_response(messages, options, inner)``. Either function may
        be given alone; the other is then derived from it, as MEAI derives it (a whole answer
        from the stream; a stream from the whole answer, so streamed calls wait for it:
        ``providers.layers.anonymous``). Raises ``ConfigurationError`` for none of them, or
        for a factory with functions."""
        if get_response is not None or get_streaming_response is not None:
            if factory is not None:
                raise ConfigurationError("use: pass a layer factory or functions, not both")
            # deferred: one-off middleware is rare; not loaded for a first request
            from providers.layers.anonymous import AnonymousDelegatingChatClient

            factory = partial(
                AnonymousDelegatingChatClient,
                get_response=get_response,
                get_streaming_response=get_streaming_response,
            )
        elif factory is None:
            raise ConfigurationError(
                "use: pass a layer factory, get_response, get_streaming_response or both"
            )
        self._factories.append(factory)
        return self

    def build(self) -> ChatClient:
        client = self._inner
        for factory in reversed(self._factories):
            client = factory(client)
        return client

    def use_retry(self, policy: RetryPolicy | None = None, **kwargs: Any) -> ChatClientBuilder:
        """``RetryingChatClient(inner, policy, **kwargs)``; ``None`` is ``RetryPolicy()``."""
        return self.use(lambda inner: RetryingChatClient(inner, policy, **kwargs))

    def use_telemetry(self, **kwargs: Any) -> ChatClientBuilder:
        """``TelemetryChatClient(inner, **kwargs)``: timings, cache figures, structlog events."""
        return self.use(lambda inner: TelemetryChatClient(inner, **kwargs))

    def use_opentelemetry(self, **kwargs: Any) -> ChatClientBuilder:
        """``OpenTelemetryChatClient(inner, **kwargs)`` (needs the ``otel`` extra)."""
        # deferred: not in the standard pipeline; ~3 ms of a first request's cold start
        from telemetry.otel import OpenTelemetryChatClient

        return self.use(lambda inner: OpenTelemetryChatClient(inner, **kwargs))

    def use_text_recovery(
        self, text_tool_calls: str = "auto", *, reasoning_tags: str = "auto", **kwargs: Any
    ) -> ChatClientBuilder:
        """``TextRecoveryChatClient``: tool calls and ``<think>`` tags left in text become
        structured contents. One layer does both because both scan the same text; pass
        ``reasoning_tags="off"`` for tool calls only."""
        return self.use(
            lambda inner: TextRecoveryChatClient(
                inner, reasoning_tags=reasoning_tags, text_tool_calls=text_tool_calls, **kwargs
            )
        )

    use_text_tool_calls = use_text_recovery
    """The former name of ``use_text_recovery`` (before MEAI's ``UseX`` / ``XChatClient``
    pairing was followed), kept as an alias so existing code keeps working."""

    def use_extra_body(self, extra_body: Mapping[str, Any]) -> ChatClientBuilder:
        """``ExtraBodyChatClient``: configured body keys on every request, never overriding
        the caller's."""
        body = dict(extra_body)
        return self.use(lambda inner: ExtraBodyChatClient(inner, body))

    def use_function_invocation(self, **kwargs: Any) -> ChatClientBuilder:
        """``FunctionInvokingChatClient(inner, **kwargs)``: runs the ``AIFunction`` calls the
        model makes and asks again. Add it first, so it sees the calls text recovery finds and
        every round goes through the layers inside it (each request retried, each traced)."""
        # deferred: a layer the standard pipeline leaves out; not loaded for a first request
        from providers.layers.function_invocation import FunctionInvokingChatClient

        return self.use(lambda inner: FunctionInvokingChatClient(inner, **kwargs))

    def use_session_affinity(
        self, affinity: SessionAffinity | str | None = None, **kwargs: Any
    ) -> ChatClientBuilder:
        """``SessionAffinityChatClient``: one stable routing key per conversation, so a
        cache-aware router keeps it on one replica. ``affinity`` is a ``SessionAffinity`` or
        its mode (``vllm-router``, ``smg``, ``header``, ``echo``) with the other fields as
        ``kwargs``; ``None`` is ``SessionAffinity()`` (vllm-router). Add it outside retry and
        fallback, as the standard pipeline does, so that each call's key is fixed once."""
        # deferred: off by default; ~1.5 ms of a first request's cold start (-X importtime)
        from providers.layers.session_affinity import SessionAffinity, SessionAffinityChatClient

        if affinity is None or isinstance(affinity, str):
            affinity = SessionAffinity(affinity or "vllm-router", **kwargs)
        elif kwargs:
            raise TypeError("use_session_affinity: pass a SessionAffinity or keywords, not both")
        chosen = affinity
        return self.use(lambda inner: SessionAffinityChatClient(inner, chosen))

    def use_fallback(self, fallback: ChatClient, **kwargs: Any) -> ChatClientBuilder:
        """``FallbackChatClient(inner, fallback, **kwargs)``: the built pipeline so far, from
        this layer inwards, is the main backend."""
        # deferred: a layer the standard pipeline leaves out; not loaded for a first request
        from providers.layers.fallback import FallbackChatClient

        return self.use(lambda inner: FallbackChatClient(inner, fallback, **kwargs))

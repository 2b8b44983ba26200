"""Composable client layers, in the Microsoft.Extensions.AI style.

A cross-cutting concern (text recovery, retry, telemetry, failover) is one ``DelegatingChatClient``
subclass that overrides only what it changes. ``ChatClientBuilder(inner).use(...).build()`` makes
the first ``use`` the outermost layer, as MEAI's builder does, so reading the builder top to
bottom follows a request from the caller inwards.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from types import TracebackType

from providers.chat_client import ChatClient, ChatInput
from providers.chat_response import ChatResponse, ChatResponseUpdate
from providers.options import ChatOptions

__all__ = ["ChatClientBuilder", "DelegatingChatClient"]


class DelegatingChatClient:
    """Forwards every call to ``inner``; subclasses override what their concern changes."""

    def __init__(self, inner: ChatClient) -> None:
        self.inner = inner

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        return await self.inner.get_response(messages, options)

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        return self.inner.get_streaming_response(messages, options)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> DelegatingChatClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


LayerFactory = Callable[[ChatClient], ChatClient]


class ChatClientBuilder:
    """Collects layer factories; ``build()`` applies them so the first added is outermost."""

    def __init__(self, inner: ChatClient) -> None:
        self._inner = inner
        self._factories: list[LayerFactory] = []

    def use(self, factory: LayerFactory) -> ChatClientBuilder:
        self._factories.append(factory)
        return self

    def build(self) -> ChatClient:
        client = self._inner
        for factory in reversed(self._factories):
            client = factory(client)
        return client

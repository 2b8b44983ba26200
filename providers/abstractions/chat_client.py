"""The ``ChatClient`` protocol: what every client and every delegating layer implements.

As in MEAI's ``IChatClient``, the surface is tiny, so a retry, telemetry or failover layer can
wrap any client (ours, a fake in a test, a user's) without knowing what is inside.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable
from typing import Protocol, runtime_checkable

from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.messages import ChatMessage
from providers.abstractions.options import ChatOptions

__all__ = ["ChatClient", "ChatInput"]

ChatInput = str | ChatMessage | Iterable[ChatMessage]
"""A bare prompt, one message, or a conversation."""


@runtime_checkable
class ChatClient(Protocol):
    """What every client and layer is: the wire clients, each layer over an inner client, and
    the framework adapters' inner client. A ``Protocol`` rather than a base class, so a test
    double or an application's own client needs no import from here to fit a pipeline."""

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        """The whole answer at once."""
        ...

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        """The answer as it is generated; ``ChatResponse.from_updates`` coalesces it."""
        ...

    async def aclose(self) -> None:
        """Release connections. Clients are also async context managers."""
        ...

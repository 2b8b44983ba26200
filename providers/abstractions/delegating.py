"""``DelegatingChatClient``: the base of every layer, as MEAI's ``DelegatingChatClient`` is.

A cross-cutting concern (text recovery, retry, telemetry, failover) is one subclass that overrides
only what it changes and forwards the rest to ``inner``. The contract is MEAI's: a layer that
changes the stream overrides ``get_streaming_response``, one that changes whole answers
``get_response``, and nothing else. A layer that works on a stream is an async generator over
the inner one, and closes it in ``finally`` (``close_stream``): a caller's ``break`` then
reaches the wire client at once and releases its connection.

The library's own layers also pass each other runs of updates through a private channel
(``_streaming_runs``, ``providers.abstractions.update_runs``), for speed; it is derived from
``get_streaming_response`` and never bypasses a layer that overrides only that.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

from providers.abstractions.chat_client import ChatClient, ChatInput
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.options import ChatOptions
from providers.abstractions.update_runs import UpdateRuns, close_stream, runs_of

if TYPE_CHECKING:
    from providers.abstractions.structured_output import StructuredResponse
    from providers.abstractions.sync_client import SyncChatClient

_T = TypeVar("_T")

__all__ = ["DelegatingChatClient", "close_stream"]  # (close_stream: where layers import it)


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

    def _streaming_runs(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> UpdateRuns:
        """Private: the stream as runs (``update_runs``), for the library's layers only: the
        inner client's, read through its ``get_streaming_response`` unless the library vouches
        for its runs (``runs_of``)."""
        return runs_of(self.inner, messages, options)

    async def get_response_as(
        self, output_type: type[_T], messages: ChatInput, options: ChatOptions | None = None
    ) -> StructuredResponse[_T]:
        """``get_response`` asked for JSON of ``output_type`` (``ChatResponseFormat.for_type``),
        read back as a validated value: ``.value``, with the whole ``.response``. Raises
        ``StructuredOutputError`` (raw text and response kept) when the answer is not one."""
        # deferred: pydantic's cold import (~65 ms), paid only by structured output
        from providers.abstractions.structured_output import get_response_as

        return await get_response_as(self, output_type, messages, options)

    def get_service(self, service_type: type[_T]) -> _T | None:
        """This layer, or whatever the layers inside it offer (``service_of``)."""
        if isinstance(self, service_type):
            return self
        # deferred: keeps ChatClientMetadata's dataclass out of a chat's cold start (~1 ms)
        from providers.abstractions.services import service_of

        return service_of(self.inner, service_type)

    async def get_capabilities(self, *, refresh: bool = False) -> Any:
        """The wire client's ``get_capabilities()``, through every layer in between."""
        # deferred: keeps ChatClientMetadata's dataclass out of a chat's cold start (~1 ms)
        from providers.abstractions.services import capabilities_of

        return await capabilities_of(self.inner, refresh=refresh)

    def as_sync(self) -> SyncChatClient:
        """This client behind a blocking API (``SyncChatClient``), on a private loop thread."""
        # deferred: asyncio's cold import (~30 ms), which `import providers` need not pay
        from providers.abstractions.sync_client import SyncChatClient

        return SyncChatClient(self)

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

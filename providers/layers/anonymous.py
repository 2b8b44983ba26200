"""``AnonymousDelegatingChatClient``: one-off middleware from plain functions, as MEAI's is.

``ChatClientBuilder.use(get_response=..., get_streaming_response=...)`` makes one. Each function
takes the call's ``messages`` and ``options`` and the ``inner`` client, and answers as the
method it stands for would: ``get_response`` is awaited for a ``ChatResponse``,
``get_streaming_response`` returns an async iterator of updates (an ``async def`` with
``yield`` is one).

Either may be given alone. The other is then derived from it, as MEAI's
``AnonymousDelegatingChatClient`` does, so the function sees every call of either kind:

* only ``get_streaming_response``: a whole answer is the function's stream, coalesced with
  ``ChatResponse.from_updates`` (MEAI: ``ToChatResponseAsync``);
* only ``get_response``: a stream is the function's whole answer handed out as updates, one per
  message, usage on the last (MEAI: ``ToChatResponseUpdates``). The caller then gets no output
  until the whole answer is in: a function that edits whole answers has nothing to hand out
  sooner. Give ``get_streaming_response`` too if streamed calls should stay incremental.

Being a layer of the caller's own in everything but its module, it is read update by update by
the library's layers (``providers.abstractions.update_runs``), never as runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeAlias

from providers.abstractions.chat_client import ChatClient, ChatInput
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.delegating import DelegatingChatClient, close_stream
from providers.abstractions.errors import ConfigurationError
from providers.abstractions.options import ChatOptions
from providers.abstractions.update_runs import response_updates

__all__ = ["AnonymousDelegatingChatClient", "GetResponse", "GetStreamingResponse"]

GetResponse: TypeAlias = Callable[
    [ChatInput, "ChatOptions | None", ChatClient], Awaitable[ChatResponse]
]
"""``get_response(messages, options, inner)``: the whole answer."""
GetStreamingResponse: TypeAlias = Callable[
    [ChatInput, "ChatOptions | None", ChatClient], AsyncIterator[ChatResponseUpdate]
]
"""``get_streaming_response(messages, options, inner)``: the answer's updates."""


class AnonymousDelegatingChatClient(DelegatingChatClient):
    """A layer whose two methods are the functions given; see the module docstring."""

    def __init__(
        self,
        inner: ChatClient,
        get_response: GetResponse | None = None,
        get_streaming_response: GetStreamingResponse | None = None,
    ) -> None:
        if get_response is None and get_streaming_response is None:
            raise ConfigurationError(
                "AnonymousDelegatingChatClient: give get_response, get_streaming_response or both"
            )
        super().__init__(inner)
        self._get_response = get_response
        self._get_streaming_response = get_streaming_response

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        if self._get_response is not None:
            return await self._get_response(messages, options, self.inner)
        assert self._get_streaming_response is not None
        stream = self._get_streaming_response(messages, options, self.inner)
        try:
            return ChatResponse.from_updates([update async for update in stream])
        finally:
            await close_stream(stream)

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        if self._get_streaming_response is not None:
            return self._get_streaming_response(messages, options, self.inner)
        return self._streamed_whole(messages, options)

    async def _streamed_whole(
        self, messages: ChatInput, options: ChatOptions | None
    ) -> AsyncIterator[ChatResponseUpdate]:
        for update in response_updates(await self.get_response(messages, options)):
            yield update

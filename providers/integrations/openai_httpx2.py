"""``OaicompatHttpx2Transport``: ``OaicompatTransport`` for an ``httpx2.AsyncClient``.

openai-python 3, pydantic-ai and openai-agents are built on ``httpx2``, a separate package
whose classes are not httpx's; a framework that makes its own ``httpx2.AsyncClient`` takes
this transport. Behaviour is ``OaicompatTransport``'s, byte for byte: both hand the request
to the same endpoint (``providers.integrations._chat_endpoint``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from providers.abstractions.chat_client import ChatClient
from providers.abstractions.embeddings import EmbeddingGenerator
from providers.integrations._extras import missing_extra
from providers.integrations.openai import TransportCore

try:
    import httpx2
except ModuleNotFoundError as error:
    raise missing_extra(error, "providers.integrations.openai_httpx2", "openai") from error

__all__ = ["OaicompatHttpx2Transport"]


class _Events(httpx2.AsyncByteStream):
    def __init__(self, events: AsyncIterator[bytes]) -> None:
        self._events = events

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for event in self._events:
            yield event

    async def aclose(self) -> None:
        close = getattr(self._events, "aclose", None)
        if close is not None:
            await close()


class OaicompatHttpx2Transport(TransportCore, httpx2.AsyncBaseTransport):
    """An ``httpx2.AsyncBaseTransport`` answering chat completions (and, given ``embeddings``,
    embeddings) with oaicompat pipelines; the arguments are ``OaicompatTransport``'s
    (``passthrough`` an httpx2 transport)."""

    def __init__(
        self,
        client: ChatClient,
        *,
        passthrough: httpx2.AsyncBaseTransport | None = None,
        request_model: bool = False,
        owns_client: bool = False,
        embeddings: EmbeddingGenerator | None = None,
    ) -> None:
        super().__init__(
            client, request_model=request_model, owns_client=owns_client, embeddings=embeddings
        )
        self._passthrough = passthrough or httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        path = request.url.path
        if not self._handles(request.method, path):
            return await self._passthrough.handle_async_request(request)
        answer = await self._answer(await request.aread(), request.headers.multi_items(), path)
        if isinstance(answer.body, bytes):
            return httpx2.Response(answer.status, headers=answer.headers, content=answer.body)
        return httpx2.Response(answer.status, headers=answer.headers, stream=_Events(answer.body))

    async def aclose(self) -> None:
        try:
            await self._passthrough.aclose()
        finally:
            await self._close_client()

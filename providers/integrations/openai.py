"""``OaicompatTransport``: the oaicompat pipeline behind any OpenAI-SDK client, no adapter.

``AsyncOpenAI(http_client=httpx.AsyncClient(transport=OaicompatTransport(client)))`` and every
framework class built on an ``AsyncOpenAI`` (LangChain's ``ChatOpenAI``, pydantic-ai's
``OpenAIChatModel``, agent-framework's and openai-agents' chat-completions clients) send their
``POST …/chat/completions`` into the pipeline instead of the network, and read back clean
OpenAI answers (``providers.integrations._chat_endpoint``): reasoning in
``reasoning_content``, llama.cpp's ``<tool_call>`` text as real tool calls, usage, ``[DONE]``.
Given an embedding pipeline (``embeddings=``, or ``from_config`` with a role that embeds), its
``POST …/embeddings`` go into that pipeline too, answered in OpenAI's shape
(``providers.integrations._embeddings_endpoint``: base64 when the SDK asked base64, whatever the
backend sent). Every other request (``GET /models``…) goes to ``passthrough``, a real
transport, unchanged.

openai-python 3 is built on ``httpx2``, and accepts an ``httpx`` client as well;
``OaicompatHttpx2Transport`` (``providers.integrations.openai_httpx2``) is the same transport
for an ``httpx2.AsyncClient``, which pydantic-ai and openai-agents create themselves.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncIterator, Coroutine, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Self, TypeVar

import httpx

from providers.abstractions.chat_client import ChatClient
from providers.abstractions.embeddings import EmbeddingGenerator
from providers.config import client_for, create_embedding_generator, load_config
from providers.config.clients import EMBEDDINGS_ROLE
from providers.config.schema import OaicompatConfig
from providers.integrations._chat_endpoint import ChatCompletionsEndpoint, EndpointAnswer

if TYPE_CHECKING:
    from providers.integrations._embeddings_endpoint import EmbeddingsEndpoint

__all__ = [
    "OaicompatSyncTransport",
    "OaicompatTransport",
    "TransportCore",
    "is_chat_completions",
    "is_embeddings",
]


def is_chat_completions(method: str, path: str) -> bool:
    """Whether a request is the SDK's chat call (any API prefix: ``/v1``, ``/openai/v1``…)."""
    return method.upper() == "POST" and path.rstrip("/").endswith("/chat/completions")


def is_embeddings(method: str, path: str) -> bool:
    """Whether a request is the SDK's embeddings call (any API prefix)."""
    return method.upper() == "POST" and path.rstrip("/").endswith("/embeddings")


class TransportCore:
    """What the httpx and httpx2 transports share: the endpoints, construction, closing."""

    def __init__(
        self,
        client: ChatClient,
        *,
        request_model: bool = False,
        owns_client: bool = False,
        embeddings: EmbeddingGenerator | None = None,
    ) -> None:
        self.client = client
        """The pipeline that answers chat requests."""
        self.embeddings = embeddings
        """The embedding pipeline that answers embeddings requests (``None``: they pass through)."""
        self._endpoint = ChatCompletionsEndpoint(client, request_model=request_model)
        self._embeddings_endpoint: EmbeddingsEndpoint | None = None
        if embeddings is not None:
            # deferred: the embeddings endpoint and layers, which chat-only transports never load
            from providers.integrations._embeddings_endpoint import EmbeddingsEndpoint

            self._embeddings_endpoint = EmbeddingsEndpoint(embeddings, request_model=request_model)
        self._owns_client = owns_client

    @classmethod
    def from_config(
        cls,
        path: str | os.PathLike[str] = "oaicompat.yaml",
        role: str = "main",
        *,
        telemetry: bool = False,
        request_model: bool = False,
        embeddings: str | bool | None = None,
        **options: Any,
    ) -> Self:
        """A transport over the configured role's standard pipeline, which it owns (closing
        the transport closes it). oaicompat's telemetry is off unless asked for: the SDK and
        the frameworks on it instrument the call already. ``options`` go to the transport's
        constructor (``passthrough``) or else to ``client_for`` (``http_client``…).

        ``embeddings``: the role (or backend) whose embedding pipeline answers embeddings
        requests; ``None`` (default): the ``embeddings`` role when the file has one (written
        in ``roles`` or a backend declaring ``embeddings:``); ``False``: none, they pass
        through."""
        own = {key: options.pop(key) for key in cls._own_options() if key in options}
        config = load_config(path)
        client = client_for(config, role, telemetry=telemetry, **options)
        embedding_role = _embedding_role(config, embeddings)
        generator = None
        if embedding_role is not None:
            generator = create_embedding_generator(config, embedding_role, telemetry=telemetry)
        return cls(
            client, request_model=request_model, owns_client=True, embeddings=generator, **own
        )

    @classmethod
    def _own_options(cls) -> tuple[str, ...]:
        return ("passthrough",)

    def _handles(self, method: str, path: str) -> bool:
        """Whether the request is answered here rather than passed through."""
        if is_chat_completions(method, path):
            return True
        return self._embeddings_endpoint is not None and is_embeddings(method, path)

    async def _answer(
        self, body: bytes, headers: Iterable[tuple[str, str]], path: str = "/chat/completions"
    ) -> EndpointAnswer:
        if self._embeddings_endpoint is not None and is_embeddings("POST", path):
            return await self._embeddings_endpoint.answer(body)
        return await self._endpoint.answer(body, headers)

    async def _close_client(self) -> None:
        if self._owns_client:
            try:
                await self.client.aclose()
            finally:
                if self.embeddings is not None:
                    await self.embeddings.aclose()


def _embedding_role(config: OaicompatConfig, embeddings: str | bool | None) -> str | None:
    if embeddings is False:
        return None
    if isinstance(embeddings, str):
        return embeddings
    declared = any(entry.embeddings is not None for entry in config.backends.values())
    return EMBEDDINGS_ROLE if EMBEDDINGS_ROLE in config.roles or declared else None


class _Events(httpx.AsyncByteStream):
    """The answer's event stream; ``aclose`` (the SDK closing the response) closes it, and the
    upstream request with it."""

    def __init__(self, events: AsyncIterator[bytes]) -> None:
        self._events = events

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for event in self._events:
            yield event

    async def aclose(self) -> None:
        close = getattr(self._events, "aclose", None)
        if close is not None:
            await close()


class OaicompatTransport(TransportCore, httpx.AsyncBaseTransport):
    """An ``httpx.AsyncBaseTransport`` answering chat completions with an oaicompat pipeline.

    ``client``: the pipeline (``create_chat_client``, ``client_for``…), or use
    ``OaicompatTransport.from_config("oaicompat.yaml", role="main")``. ``passthrough``: the
    transport for every other request (default: a new ``httpx.AsyncHTTPTransport``).
    ``request_model``: send the request's ``model`` on instead of the configured one.
    ``embeddings``: an embedding pipeline (``create_embedding_generator``) that answers
    ``POST …/embeddings`` (else they pass through); closed with the transport only when the
    transport owns its pipelines (``from_config``).
    """

    def __init__(
        self,
        client: ChatClient,
        *,
        passthrough: httpx.AsyncBaseTransport | None = None,
        request_model: bool = False,
        owns_client: bool = False,
        embeddings: EmbeddingGenerator | None = None,
    ) -> None:
        super().__init__(
            client, request_model=request_model, owns_client=owns_client, embeddings=embeddings
        )
        self._passthrough = passthrough or httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if not self._handles(request.method, path):
            return await self._passthrough.handle_async_request(request)
        answer = await self._answer(await request.aread(), request.headers.multi_items(), path)
        if isinstance(answer.body, bytes):
            return httpx.Response(answer.status, headers=answer.headers, content=answer.body)
        return httpx.Response(answer.status, headers=answer.headers, stream=_Events(answer.body))

    async def aclose(self) -> None:
        try:
            await self._passthrough.aclose()
        finally:
            await self._close_client()


_T = TypeVar("_T")


class OaicompatSyncTransport(TransportCore, httpx.BaseTransport):
    """``OaicompatTransport`` for a blocking client (``OpenAI(http_client=httpx.Client(...))``,
    LangChain's ``ChatOpenAI(http_client=...)``): the pipeline runs on a private loop thread,
    started on first use and ended by ``close``. ``passthrough``: an ``httpx.BaseTransport``."""

    def __init__(
        self,
        client: ChatClient,
        *,
        passthrough: httpx.BaseTransport | None = None,
        request_model: bool = False,
        owns_client: bool = False,
        embeddings: EmbeddingGenerator | None = None,
    ) -> None:
        super().__init__(
            client, request_model=request_model, owns_client=owns_client, embeddings=embeddings
        )
        self._passthrough = passthrough or httpx.HTTPTransport()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _run(self, work: Coroutine[Any, Any, _T]) -> _T:
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(
                    target=self._loop.run_forever, name="oaicompat-transport", daemon=True
                )
                self._thread.start()
            loop = self._loop
        return asyncio.run_coroutine_threadsafe(work, loop).result()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if not self._handles(request.method, path):
            return self._passthrough.handle_request(request)
        answer = self._run(self._answer(request.read(), request.headers.multi_items(), path))
        if isinstance(answer.body, bytes):
            return httpx.Response(answer.status, headers=answer.headers, content=answer.body)
        stream = _SyncEvents(answer.body, self._run)
        return httpx.Response(answer.status, headers=answer.headers, stream=stream)

    def close(self) -> None:
        """Closes the passthrough, the pipeline when the transport owns it, and the loop thread.

        The pipeline is closed on the loop thread, started for it when no request ever did:
        ``close`` may be called from a coroutine (an async application that built a blocking
        client), where ``asyncio.run`` would refuse to start a loop and leave the pipeline
        open."""
        try:
            self._passthrough.close()
        finally:
            try:
                if self._owns_client:
                    self._run(self._close_client())
            finally:
                with self._lock:
                    loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
                if loop is not None:
                    loop.call_soon_threadsafe(loop.stop)
                    if thread is not None:
                        thread.join()
                    loop.close()


class _SyncEvents(httpx.SyncByteStream):
    """The event stream pulled one event at a time from the loop thread; ``close`` closes it
    there, and the upstream request with it."""

    def __init__(self, events: AsyncIterator[bytes], run: Any) -> None:
        self._events = events
        self._run = run

    def __iter__(self) -> Iterator[bytes]:
        while True:
            event = self._run(_next(self._events))
            if event is None:
                return
            yield event

    def close(self) -> None:
        self._run(_close(self._events))


async def _next(events: AsyncIterator[bytes]) -> bytes | None:
    return await anext(events, None)


async def _close(events: AsyncIterator[bytes]) -> None:
    close = getattr(events, "aclose", None)
    if close is not None:
        await close()

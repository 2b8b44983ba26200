"""``OaicompatTransport``: the oaicompat pipeline behind any OpenAI-SDK client, no adapter.

``AsyncOpenAI(http_client=httpx.AsyncClient(transport=OaicompatTransport(client)))`` and every
framework class built on an ``AsyncOpenAI`` (LangChain's ``ChatOpenAI``, pydantic-ai's
``OpenAIChatModel``, agent-framework's and openai-agents' chat-completions clients) send their
``POST …/chat/completions`` into the pipeline instead of the network, and read back clean
OpenAI answers (``providers.integrations._chat_endpoint``): reasoning in
``reasoning_content``, llama.cpp's ``<tool_call>`` text as real tool calls, usage, ``[DONE]``.
Every other request (``GET /models``…) goes to ``passthrough``, a real transport, unchanged.

openai-python 3 is built on ``httpx2``, and accepts an ``httpx`` client as well;
``OaicompatHttpx2Transport`` (``providers.integrations.openai_httpx2``) is the same transport
for an ``httpx2.AsyncClient``, which pydantic-ai and openai-agents create themselves.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any, Self

import httpx

from providers.abstractions.chat_client import ChatClient
from providers.config import client_for, load_config
from providers.integrations._chat_endpoint import ChatCompletionsEndpoint, EndpointAnswer

__all__ = ["OaicompatTransport", "TransportCore", "is_chat_completions"]


def is_chat_completions(method: str, path: str) -> bool:
    """Whether a request is the SDK's chat call (any API prefix: ``/v1``, ``/openai/v1``…)."""
    return method.upper() == "POST" and path.rstrip("/").endswith("/chat/completions")


class TransportCore:
    """What the httpx and httpx2 transports share: the endpoint, construction, closing."""

    def __init__(
        self, client: ChatClient, *, request_model: bool = False, owns_client: bool = False
    ) -> None:
        self.client = client
        """The pipeline that answers chat requests."""
        self._endpoint = ChatCompletionsEndpoint(client, request_model=request_model)
        self._owns_client = owns_client

    @classmethod
    def from_config(
        cls,
        path: str | os.PathLike[str] = "oaicompat.yaml",
        *,
        role: str = "main",
        telemetry: bool = False,
        request_model: bool = False,
        **options: Any,
    ) -> Self:
        """A transport over the configured role's standard pipeline, which it owns (closing
        the transport closes it). oaicompat's telemetry is off unless asked for: the SDK and
        the frameworks on it instrument the call already. ``options`` go to the transport's
        constructor (``passthrough``) or else to ``client_for`` (``http_client``…)."""
        own = {key: options.pop(key) for key in cls._own_options() if key in options}
        client = client_for(load_config(path), role, telemetry=telemetry, **options)
        return cls(client, request_model=request_model, owns_client=True, **own)

    @classmethod
    def _own_options(cls) -> tuple[str, ...]:
        return ("passthrough",)

    async def _answer(self, body: bytes) -> EndpointAnswer:
        return await self._endpoint.answer(body)

    async def _close_client(self) -> None:
        if self._owns_client:
            await self.client.aclose()


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
    """

    def __init__(
        self,
        client: ChatClient,
        *,
        passthrough: httpx.AsyncBaseTransport | None = None,
        request_model: bool = False,
        owns_client: bool = False,
    ) -> None:
        super().__init__(client, request_model=request_model, owns_client=owns_client)
        self._passthrough = passthrough or httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if not is_chat_completions(request.method, request.url.path):
            return await self._passthrough.handle_async_request(request)
        answer = await self._answer(await request.aread())
        if isinstance(answer.body, bytes):
            return httpx.Response(answer.status, headers=answer.headers, content=answer.body)
        return httpx.Response(answer.status, headers=answer.headers, stream=_Events(answer.body))

    async def aclose(self) -> None:
        try:
            await self._passthrough.aclose()
        finally:
            await self._close_client()

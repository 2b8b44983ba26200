"""One pipeline per name a client may send, built on first use and closed with the gateway.

Each configured role and backend gets the standard pipeline (``client_for``: recovery, reasoning
split, retry, fallback, session affinity) under one ``TelemetryChatClient`` whose observer feeds
``/metrics``, and an OpenTelemetry layer when ``serve.opentelemetry`` asks for it. Affinity keys
come from each request (its ``prompt_cache_key``, or the layer's derivation from the messages),
never from gateway state, so any replica can answer any request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

from providers.abstractions.chat_client import ChatClient
from providers.config.clients import client_for
from providers.config.schema import OaicompatConfig
from providers.gateway.metrics import GatewayMetrics
from providers.gateway.model_table import ModelEntry, ModelTable
from providers.gateway.request_checks import check_chat_body
from providers.integrations._chat_endpoint import ChatCompletionsEndpoint, EndpointAnswer
from telemetry.telemetry_client import TelemetryChatClient

__all__ = ["GatewayEntries"]


class GatewayEntries:
    def __init__(
        self,
        config: OaicompatConfig,
        metrics: GatewayMetrics,
        client_kwargs: Mapping[str, Any],
        otel_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        """``otel_kwargs`` reach each ``OpenTelemetryChatClient`` (``tracer_provider``,
        ``meter_provider``; default: the global ones the application configured)."""
        self.table = ModelTable(config)
        self._otel = dict(otel_kwargs or {})
        self._config = config
        self._metrics = metrics
        self._kwargs = dict(client_kwargs)
        self._clients: dict[str, ChatClient] = {}
        self._chat: dict[str, ChatCompletionsEndpoint] = {}
        self._responses: dict[str, Any] = {}
        self._embeddings: dict[str, Any] = {}

    def client(self, entry: ModelEntry) -> ChatClient:
        """The entry's pipeline (built once, on its first request)."""
        client = self._clients.get(entry.name)
        if client is None:
            kwargs = {"telemetry": False, **self._kwargs}
            pipeline = client_for(self._config, entry.target, **kwargs)
            client = TelemetryChatClient(
                pipeline,
                observers=[self._metrics.observer(entry.name, entry.backend)],
                attach_timings=False,
            )
            if self._config.serve.opentelemetry:
                # deferred: the otel extra is optional
                from telemetry.otel import OpenTelemetryChatClient

                client = OpenTelemetryChatClient(client, **self._otel)
            self._clients[entry.name] = client
        return client

    async def answer(
        self,
        kind: str,
        entry: ModelEntry,
        request: Any,
        body: bytes,
        headers: Iterable[tuple[str, str]],
    ) -> EndpointAnswer:
        """The entry's answer to a request of ``kind`` (``chat`` or ``responses``), parsed
        (``request``) and as sent (``body``)."""
        if kind == "chat":
            check_chat_body(request)
            chat = self._chat.get(entry.name)
            if chat is None:
                chat = ChatCompletionsEndpoint(self.client(entry), reasoning_alias=True)
                self._chat[entry.name] = chat
            return await chat.answer_request(request, headers)
        if kind == "embeddings":
            vectors: EndpointAnswer = await self._embeddings_endpoint(entry).answer(body)
            return vectors
        responses = self._responses.get(entry.name)
        if responses is None:
            # deferred: the Responses writer loads only for a gateway that is asked for it
            from providers.gateway.responses_endpoint import ResponsesEndpoint

            model = self._config.backends[entry.backend].model_id or entry.name
            responses = ResponsesEndpoint(self.client(entry), model=model)
            self._responses[entry.name] = responses
        answer: EndpointAnswer = await responses.answer(body, headers)
        return answer

    def _embeddings_endpoint(self, entry: ModelEntry) -> Any:
        """The entry's embedding pipeline (``create_embedding_generator``: the backend's
        ``embeddings:`` settings; a role's fallback is not used, since another model's vectors
        do not compare with the stored ones) behind the OpenAI transport's endpoint."""
        endpoint = self._embeddings.get(entry.name)
        if endpoint is None:
            # deferred: the embeddings pipeline loads only for a gateway asked for vectors
            from providers.config.clients import create_embedding_generator

            # deferred: as above, its endpoint
            from providers.integrations._embeddings_endpoint import EmbeddingsEndpoint

            kwargs = {"telemetry": False, **self._kwargs}
            generator = create_embedding_generator(self._config, entry.target, **kwargs)
            endpoint = EmbeddingsEndpoint(generator)
            self._embeddings[entry.name] = endpoint
        return endpoint

    async def aclose(self) -> None:
        clients: list[Any] = [*self._clients.values()]
        clients += [endpoint.generator for endpoint in self._embeddings.values()]
        self._clients = {}
        self._chat.clear()
        self._responses.clear()
        self._embeddings.clear()
        await asyncio.gather(*(client.aclose() for client in clients), return_exceptions=True)

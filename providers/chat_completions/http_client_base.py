"""What every wire client (chat completions, Responses) has in common besides its endpoint.

Both own or borrow one ``httpx.AsyncClient``, send the same headers with the API key kept out of
reprs, enforce the same ``Timeouts``, probe capabilities the same way and fetch a non-streamed
answer the same way. Written once here, so a fix to credentials, budgets or probing reaches both
clients; each subclass adds only its endpoint's request and response shapes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import httpx

from providers.abstractions.errors import ProviderError
from providers.abstractions.limits import DEFAULT_LIMITS, Limits
from providers.transport.bodies import ACCEPT_ENCODING, read_whole
from providers.transport.endpoint import Endpoint
from providers.transport.error_mapping import TransportErrorMapping
from providers.transport.stale_connections import new_http_client
from providers.transport.timeouts import Timeouts, budget_error

if TYPE_CHECKING:
    from capabilities import ModelCapabilities, OpenAiCompatibleCapabilityResolver

__all__ = ["DEFAULT_TIMEOUT", "HttpClientBase", "fetch_whole", "url_for_errors"]

DEFAULT_TIMEOUT = httpx.Timeout(connect=10.0, read=600.0, write=60.0, pool=30.0)
"""The owned ``httpx.AsyncClient``'s defaults. Requests override them with their ``Timeouts``;
passing ``timeout=`` without ``timeouts=`` is read as ``Timeouts.from_httpx(timeout)``."""


def url_for_errors(url: str) -> str:
    """Error messages name the URL; never with credentials someone put in it."""
    return str(httpx.URL(url).copy_with(username=None, password=None))


class HttpClientBase:
    """Connection, credentials, time budgets and capability probing of one backend."""

    def __init__(
        self,
        base_url: str,
        model_id: str | None,
        api_key: str | None,
        *,
        http_client: httpx.AsyncClient | None,
        timeout: httpx.Timeout | float | None,
        timeouts: Timeouts | None,
        headers: Mapping[str, str] | None,
        capability_overrides: Mapping[str, Any] | None,
        limits: Limits | None = None,
    ) -> None:
        self.endpoint = Endpoint.from_base_url(base_url)
        self.model_id = model_id
        self.limits = limits or DEFAULT_LIMITS
        """What one request may make the client hold (``Limits``)."""
        request_headers = {
            "Accept": "application/json, text/event-stream",
            "Accept-Encoding": ACCEPT_ENCODING,
        }
        request_headers.update(headers or {})
        if api_key and api_key.strip():
            request_headers["Authorization"] = f"Bearer {api_key.strip()}"
        self._headers = request_headers
        self._api_key = api_key
        self._owns_http = http_client is None
        self._http = http_client or new_http_client(timeout)
        if timeouts is None:
            timeouts = Timeouts() if timeout is DEFAULT_TIMEOUT else Timeouts.from_httpx(timeout)
        self.timeouts = timeouts
        self._request_extensions = timeouts.request_extensions()
        self._capability_overrides = capability_overrides
        self._resolver: OpenAiCompatibleCapabilityResolver | None = None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def get_capabilities(self, *, refresh: bool = False) -> ModelCapabilities:
        """What the server says about the model (context window, modalities, backend, served
        ids), each value with its source; probed once per client and cached."""
        if self._resolver is None:
            # deferred: -X importtime: pydantic and the parsers, +120 ms on the client's ~130 ms
            from capabilities.resolver import OpenAiCompatibleCapabilityResolver

            self._resolver = OpenAiCompatibleCapabilityResolver(
                self.endpoint,
                http_client=self._http,
                api_key=self._api_key,
                overrides=self._capability_overrides,
                headers={k: v for k, v in self._headers.items() if k != "Authorization"},
            )
        if refresh:
            self._resolver.invalidate()
        return await self._resolver.resolve(self.model_id)


async def fetch_whole(
    http: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    body: Any,
    headers: Mapping[str, str],
    extensions: dict[str, Any],
    total: float | None,
    backend: str,
    mapping: TransportErrorMapping,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[httpx.Response, bytes, dict[str, float]]:
    """One non-streamed exchange: the response, its body (``read_whole``: bounded by
    ``limits``) and the transport timestamps.

    Only the ``connect`` and ``total`` budgets apply: no byte flows until the answer is
    complete, so there is no first token or gap to time.
    """
    stamps = {"request_sent": time.monotonic()}
    with mapping:
        try:
            async with (
                asyncio.timeout(total),
                http.stream(
                    method, url, json=body, headers=headers, extensions=extensions
                ) as reply,
            ):
                stamps["response_headers"] = time.monotonic()
                content = await read_whole(reply, limits, backend=backend, stamps=stamps)
                stamps["response_end"] = time.monotonic()
        except TimeoutError as exc:
            if isinstance(exc, ProviderError):
                raise
            raise budget_error("total", total, backend) from None
    return reply, content, stamps

"""An ``httpx2.AsyncClient`` given as ``http_client``: the wire clients send through it.

openai-python 3, pydantic-ai and openai-agents are built on ``httpx2``, a separate package
whose classes are not httpx's, and an application built on them has its ``httpx2`` client
configured already (proxies, TLS, limits, event hooks). Rather than teach every part of the
wire clients (error mapping, timeouts, stale connections) a second library, the caller's
client is wrapped in an ``httpx.AsyncClient`` whose transport sends each request through it:
bodies pass as raw bytes both ways (httpx decodes the content encoding, once), the request's
timeout extension goes along, and httpx2's exceptions come back as httpx's of the same name,
so the error mapping reads them as it reads its own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, TypeAlias

import httpx

if TYPE_CHECKING:
    import httpx2

    AsyncHttpClient: TypeAlias = httpx.AsyncClient | httpx2.AsyncClient
    """What a wire client takes as ``http_client``: httpx's client or httpx2's (where httpx2
    is not installed, type checkers read the second as ``Any``)."""

__all__ = ["is_httpx2_client", "through_httpx2"]


def is_httpx2_client(client: object) -> bool:
    """Whether ``client`` is an ``httpx2.AsyncClient`` (without importing httpx2 when it is
    not installed: then nothing can be one)."""
    return any(
        cls.__module__.split(".")[0] == "httpx2" and cls.__name__ == "AsyncClient"
        for cls in type(client).__mro__
    )


def through_httpx2(client: Any) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` that sends every request through ``client`` (an
    ``httpx2.AsyncClient``), with ``client``'s default timeout. Closing it leaves ``client``
    open: a client passed in is the caller's to close."""
    timeout = httpx.Timeout(**client.timeout.as_dict())
    return httpx.AsyncClient(transport=_Httpx2Transport(client), timeout=timeout)


class _Httpx2Transport(httpx.AsyncBaseTransport):
    def __init__(self, client: Any) -> None:
        self._client = client

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        outgoing = self._client.build_request(
            request.method,
            str(request.url),
            headers=request.headers.multi_items(),
            content=body,
            extensions=dict(request.extensions),
        )
        try:
            # (redirects are the httpx client's to follow or not: the library's never does)
            response = await self._client.send(outgoing, stream=True, follow_redirects=False)
        except Exception as exc:
            raise _as_httpx(exc, request) from exc
        return httpx.Response(
            response.status_code,
            headers=response.headers.multi_items(),
            stream=_Body(response, request),
            extensions={"http_version": response.http_version.encode("ascii", "replace")},
        )


class _Body(httpx.AsyncByteStream):
    def __init__(self, response: Any, request: httpx.Request) -> None:
        self._response = response
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.aiter_raw():
                yield chunk
        except Exception as exc:
            raise _as_httpx(exc, self._request) from exc

    async def aclose(self) -> None:
        await self._response.aclose()


def _as_httpx(exc: Exception, request: httpx.Request) -> Exception:
    """httpx's exception of the same name (or of the nearest base that httpx has), for an
    httpx2 transport error; anything else unchanged."""
    if type(exc).__module__.split(".")[0] != "httpx2":
        return exc
    for cls in type(exc).__mro__:
        twin = getattr(httpx, cls.__name__, None)
        if isinstance(twin, type) and issubclass(twin, httpx.TransportError):
            return twin(str(exc), request=request)
        if twin is httpx.DecodingError:
            return httpx.DecodingError(str(exc), request=request)
    return exc

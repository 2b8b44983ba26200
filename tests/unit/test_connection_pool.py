"""The client's own connection pool fits a batch server: no queueing below 1000 concurrent
requests by default (issue 21), and the pool follows ``Limits`` (``limits:`` in YAML)."""

from __future__ import annotations

from typing import Any

import httpx

from providers import Limits, OpenAiCompatibleChatClient
from providers.transport.stale_connections import new_http_client


def _pool(client: httpx.AsyncClient) -> tuple[int | None, int | None]:
    """The limits of the connection pool that actually carries the requests."""
    transport: Any = client._transport  # (the library's resend transport wraps httpx's own)
    pool = getattr(transport, "_inner", transport)._pool
    return pool._max_connections, pool._max_keepalive_connections


async def test_the_default_pool_does_not_queue_below_a_thousand_requests() -> None:
    async with new_http_client() as client:
        assert _pool(client) == (1000, 100)


async def test_the_wire_clients_pool_follows_its_limits() -> None:
    limits = Limits(max_connections=7, max_keepalive_connections=3)
    async with OpenAiCompatibleChatClient("http://127.0.0.1:9", limits=limits) as client:
        assert _pool(client._http) == (7, 3)

"""The client's own connection pool fits a batch server: no queueing below 1000 concurrent
requests by default (issue 21), and the pool follows ``Limits`` (``limits:`` in YAML)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from providers import Limits, OpenAiCompatibleChatClient
from providers.transport.stale_connections import new_http_client


def _pool(client: httpx.AsyncClient, scheme: str) -> tuple[int | None, int | None]:
    """The limits of the connection pool that actually carries ``scheme``'s requests."""
    transport: Any = client._transport  # (the library's resend transport wraps its own)
    pool = transport._inner.pool_for(scheme)._pool
    return pool._max_connections, pool._max_keepalive_connections


@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_the_default_pool_does_not_queue_below_a_thousand_requests(scheme: str) -> None:
    async with new_http_client() as client:
        assert _pool(client, scheme) == (1000, 100)


@pytest.mark.parametrize("scheme", ["http", "https"])
async def test_the_wire_clients_pool_follows_its_limits(scheme: str) -> None:
    limits = Limits(max_connections=7, max_keepalive_connections=3)
    async with OpenAiCompatibleChatClient("http://127.0.0.1:9", limits=limits) as client:
        assert _pool(client._http, scheme) == (7, 3)

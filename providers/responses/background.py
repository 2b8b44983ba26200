"""Background responses: created with ``background: true``, then read until they finish.

A background response is stored by the server and generated without a connection held open,
so the client polls it (``poll_until_done``) within the request's ``total`` budget. A caller who
asked for a stream still gets one: the finished response as one update per message
(``response_updates``), so every layer above sees the shape it always does.
"""

from __future__ import annotations

import asyncio
from typing import Any

from providers.abstractions.errors import ProviderError
from providers.chat_completions.http_client_base import RequestHeaders
from providers.responses.transport import ResponsesTransport
from providers.transport.timeouts import budget_error

__all__ = ["poll_until_done"]

_RUNNING = ("queued", "in_progress")


async def poll_until_done(
    transport: ResponsesTransport,
    url: str,
    payload: dict[str, Any],
    *,
    poll_interval: float,
    total: float | None,
    backend: str,
    headers: RequestHeaders | None = None,
) -> dict[str, Any]:
    """Read a background response again every ``poll_interval`` s until it is done, within
    the ``total`` budget; with the creating request's ``headers`` (a routing key must reach
    the replica that stores the response)."""
    response_id = payload.get("id")
    if not isinstance(response_id, str):
        return payload
    try:
        async with asyncio.timeout(total):
            while payload.get("status") in _RUNNING:
                await asyncio.sleep(poll_interval)
                url_of = f"{url}/{response_id}"
                payload, _ = await transport.request_json("GET", url_of, headers=headers)
    except TimeoutError as exc:
        if isinstance(exc, ProviderError):
            raise
        raise budget_error("total", total, backend) from None
    return payload

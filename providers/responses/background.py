"""Background responses: created with ``background: true``, then read until they finish.

A background response is stored by the server and generated without a connection held open,
so the client polls it (``poll_until_done``) within the request's ``total`` budget. A caller who
asked for a stream still gets one: the finished response as one update per message
(``updates_of``), so every layer above sees the shape it always does.
"""

from __future__ import annotations

import asyncio
from typing import Any

from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.contents import UsageContent
from providers.abstractions.errors import ProviderError
from providers.chat_completions.http_client_base import RequestHeaders
from providers.responses.transport import ResponsesTransport
from providers.transport.timeouts import budget_error

__all__ = ["poll_until_done", "updates_of"]

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


def updates_of(result: ChatResponse) -> list[ChatResponseUpdate]:
    """A finished response as one update per message (the background path's stream)."""
    updates = []
    for index, message in enumerate(result.messages):
        updates.append(
            ChatResponseUpdate(
                list(message.contents),
                message.role,
                result.finish_reason,
                result.response_id,
                result.model_id,
                result.created_at,
                index,
                dict(result.additional_properties),
                result.raw,
            )
        )
    if updates and result.usage is not None:
        updates[-1].contents.append(UsageContent(result.usage))
    return updates

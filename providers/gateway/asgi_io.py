"""The ASGI side of one exchange: reading a bounded body, sending an ``EndpointAnswer``, and
noticing that the client left.

A client that disconnects mid-answer must free the backend at once, not when the next token
would have been written: ``until_disconnected`` runs the answer as a task and cancels it when
the server reports ``http.disconnect``; the answer's event stream is closed on the way out,
which closes the pipeline's stream and, through it, the backend request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, MutableMapping
from typing import Any

from providers.abstractions.errors import InvalidRequestError
from providers.integrations._chat_endpoint import EndpointAnswer

__all__ = [
    "Receive",
    "RequestTooLarge",
    "Scope",
    "Send",
    "json_answer",
    "read_body",
    "send_answer",
    "until_disconnected",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_JSON = ("content-type", "application/json")


class RequestTooLarge(InvalidRequestError):
    """The body is over ``serve.max_body_bytes``: a 413."""


class ClientGone(Exception):
    """The client disconnected before its request was read."""


async def read_body(receive: Receive, limit: int, declared: int | None) -> bytes:
    """The whole body, refused as soon as it passes ``limit`` (or declares it will), so a
    client cannot make the gateway hold more than ``limit`` bytes for it."""
    if declared is not None and declared > limit:
        raise _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise _too_large(limit)
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _too_large(limit: int) -> RequestTooLarge:
    return RequestTooLarge(
        f"the request body is larger than this server accepts ({limit} bytes)",
        status=413,
        error_type="invalid_request_error",
        code="request_too_large",
    )


def json_answer(status: int, body: Any, *headers: tuple[str, str]) -> EndpointAnswer:
    return EndpointAnswer(status, [_JSON, *headers], json.dumps(body).encode())


async def send_answer(send: Send, answer: EndpointAnswer) -> int:
    """Sends ``answer``; returns the bytes of body sent. The event stream is closed whatever
    happens (a cancelled send included), which closes the backend request behind it."""
    headers = [(name.encode("latin-1"), value.encode("latin-1")) for name, value in answer.headers]
    await send({"type": "http.response.start", "status": answer.status, "headers": headers})
    body = answer.body
    if isinstance(body, bytes):
        await send({"type": "http.response.body", "body": body})
        return len(body)
    return await _send_events(send, body)


async def _send_events(send: Send, events: AsyncIterator[bytes]) -> int:
    """Hot path: one ``send`` per event."""
    sent = 0
    try:
        async for event in events:
            sent += len(event)
            await send({"type": "http.response.body", "body": event, "more_body": True})
    finally:
        close = getattr(events, "aclose", None)
        if close is not None:
            await close()
    await send({"type": "http.response.body", "body": b""})
    return sent


async def until_disconnected(receive: Receive, work: Coroutine[Any, Any, None]) -> bool:
    """Runs ``work`` (which answers the request) until it ends or the client disconnects;
    returns whether the client left first (``work`` is then cancelled and awaited)."""
    task = asyncio.ensure_future(work)
    watch = asyncio.ensure_future(_disconnect(receive))
    try:
        await asyncio.wait((task, watch), return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            left = True
        else:
            left = False
        watch.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watch
    if not left:
        task.result()  # the answer's own exception, if any
    return left


async def _disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass

"""Backends for the gateway's tests: a replaying one that records what it received, and one
that streams a first chunk and then waits, to see when the gateway lets go of it."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from providers.replay.server import ReceivedRequest, RecordedReply
from tests.unit.providers.gateway.serving import backend_chunks

__all__ = ["HangingBackend", "replying"]


def replying(
    *deltas: dict[str, Any], status: int = 200, error: dict[str, Any] | None = None
) -> Callable[[ReceivedRequest], RecordedReply]:
    """A ReplayServer handler: ``deltas`` streamed (or one whole answer of their text), or
    ``error`` as the body of ``status``."""

    def answer(request: ReceivedRequest) -> RecordedReply:
        if error is not None:
            return RecordedReply(
                status, json.dumps(error).encode(), {"Content-Type": "application/json"}
            )
        if json.loads(request.body).get("stream"):
            return RecordedReply(
                200, backend_chunks(*deltas), {"Content-Type": "text/event-stream"}
            )
        text = "".join(str(d.get("content") or "") for d in deltas)
        whole = {
            "id": "c1",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": text},
                }
            ],
            "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8},
        }
        return RecordedReply(200, json.dumps(whole).encode(), {"Content-Type": "application/json"})

    return answer


class HangingBackend:
    """Answers a stream's headers and first chunk, then holds the connection open; ``closed``
    is set when the gateway closes it."""

    def __init__(self) -> None:
        self.closed = asyncio.Event()
        self.requests = 0
        self._server: asyncio.Server | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}/v1"

    async def __aenter__(self) -> HangingBackend:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ),
            0,
        )
        await reader.readexactly(length)
        self.requests += 1
        chunk = b'data: {"choices":[{"index":0,"delta":{"content":"Hel"}}]}\n\n'
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n" + f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
        )
        await writer.drain()
        try:
            while await reader.read(1024):
                pass
        finally:
            self.closed.set()
            writer.close()

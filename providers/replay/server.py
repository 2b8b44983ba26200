"""A loopback HTTP/1.1 server that answers with recorded bytes, cut wherever a test wants.

It is a real TCP server (not a transport mock), so the client's whole stack — httpx, h11, our
SSE decoder — sees the body the way a network delivers it. Each piece the ``splitter`` returns is
written as its own HTTP chunk and flushed, so a cut inside a UTF-8 character or between ``\\r``
and ``\\n`` reaches the client as a cut, whatever TCP does with the segments. Used by
``oaicompat demo``, the transcript tests and the benchmarks; it sends traffic only to 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import field
from types import TracebackType

from providers.abstractions.records import value_class

__all__ = ["RecordedReply", "ReplayServer", "whole"]


@value_class()
class RecordedReply:
    """What the loopback server sends for one request: the recorded status, body and headers,
    or a cut-off stream (``truncate``), so a replay can play a server dying mid-stream."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    truncate: bool = False
    """Close the connection without the final chunk: a server dying mid-stream."""


@value_class()
class ReceivedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


def whole(body: bytes) -> list[bytes]:
    return [body]


Handler = Callable[[ReceivedRequest], RecordedReply]
Splitter = Callable[[bytes], list[bytes]]


class ReplayServer:
    """``async with ReplayServer(handler, splitter) as server: server.base_url``."""

    def __init__(self, handler: Handler, splitter: Splitter = whole) -> None:
        self._handler = handler
        self._splitter = splitter
        self._server: asyncio.Server | None = None
        self.requests: list[ReceivedRequest] = []
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> ReplayServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await _read_request(reader)
            if request is None:
                return
            self.requests.append(request)
            reply = self._handler(request)
            await self._write(writer, reply)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()

    async def _write(self, writer: asyncio.StreamWriter, reply: RecordedReply) -> None:
        headers = {"Content-Type": "application/json", **reply.headers}
        head = [f"HTTP/1.1 {reply.status} Recorded"]
        head += [f"{k}: {v}" for k, v in headers.items() if k.lower() not in _HOP_BY_HOP]
        head += ["Transfer-Encoding: chunked", "Connection: close", "", ""]
        writer.write("\r\n".join(head).encode("latin-1"))
        await writer.drain()
        for piece in self._splitter(reply.body):
            if piece:
                writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                await writer.drain()
        if not reply.truncate:
            writer.write(b"0\r\n\r\n")
            await writer.drain()


_HOP_BY_HOP = {"transfer-encoding", "content-length", "connection", "keep-alive"}


async def _read_request(reader: asyncio.StreamReader) -> ReceivedRequest | None:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) < 2:
        return None
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    body = await reader.readexactly(length) if length else b""
    return ReceivedRequest(parts[0], parts[1], headers, body)

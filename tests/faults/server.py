"""A misbehaving HTTP/1.1 server on 127.0.0.1 for fault-injection tests.

Each request gets the next ``Reply`` of a script (the last one repeats). A reply can be a clean
answer or a fault: a reset before the headers, a reset or a close after some chunks, a stall
(optionally with keepalive comments), a body without ``[DONE]``. ``GATE`` in a reply's pieces
makes the server wait until the test calls ``release()``: a test resets the connection only
after the client has *consumed* the first chunk, so no byte it already sent can be lost in the
client's kernel buffer and the assertion about what the caller saw is exact.

It is a real TCP server (not a transport mock), so httpx, h11 and the client see the failures a
network gives. Every wait is bounded (``limit`` seconds), it listens on loopback only, and
``async with`` tears down every connection it still holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Final, Literal

__all__ = ["GATE", "FaultServer", "Received", "Reply", "chunk", "raw_answer", "sse"]

GATE: Final = object()
"""In ``Reply.pieces``: wait for ``FaultServer.release()`` before sending what follows."""

End = Literal["complete", "close", "reset", "stall"]


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer.

    ``pieces`` are written one HTTP chunk each, flushed; a ``float`` piece pauses that many
    seconds, ``GATE`` waits for the test's ``release()``. ``end``: ``complete`` (the terminating
    chunk), ``close`` (FIN without it: an incomplete body), ``reset`` (RST), ``stall`` (keep the
    connection open and silent, or sending ``: ping`` every ``keepalive`` seconds, until
    teardown). ``reset_before_headers`` resets as soon as the request is read.
    """

    status: int = 200
    pieces: Sequence[bytes | object] = ()
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream"
    end: End = "complete"
    keepalive: float | None = None
    header_delay: float = 0.0
    reset_before_headers: bool = False
    raw: bytes | None = None
    """Written as is in place of the whole answer (status line, headers, body), in one write;
    the connection then takes the next request. For what a chunked answer cannot show: a
    ``Content-Length`` body and what follows it, a compressed body, a status without a body."""


@dataclass(frozen=True, slots=True)
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class FaultServer:
    """``async with FaultServer([Reply(503), Reply(pieces=[...])]) as server: server.base_url``."""

    def __init__(self, script: Sequence[Reply], *, limit: float = 10.0) -> None:
        if not script:
            raise ValueError("the script needs at least one reply")
        self._script = list(script)
        self._limit = limit
        self._gate = asyncio.Event()
        self._stop = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self.requests: list[Received] = []
        self.connections = 0  # accepted so far
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def attempts(self) -> int:
        return len(self.requests)

    def release(self) -> None:
        """Let a reply waiting at (or about to reach) its next ``GATE`` go on."""
        self._gate.set()

    async def __aenter__(self) -> FaultServer:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._gate.set()
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()  # handlers blocked on a read or write see it and return
        if self._handlers:
            _, stragglers = await asyncio.wait(self._handlers, timeout=self._limit)
            for task in stragglers:
                task.cancel()
        if self._server is not None:
            await self._server.wait_closed()

    # ---------------------------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self._writers.add(writer)
        self.connections += 1
        try:
            while not self._stop.is_set():
                request = await self._read_request(reader)
                if request is None:
                    break
                self.requests.append(request)
                reply = self._script[min(len(self.requests), len(self._script)) - 1]
                if not await self._answer(reply, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass
        finally:
            self._writers.discard(writer)
            self._handlers.discard(task)
            writer.transport.abort()

    async def _read_request(self, reader: asyncio.StreamReader) -> Received | None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self._limit)
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        body = await asyncio.wait_for(reader.readexactly(length), self._limit) if length else b""
        return Received(method, path, headers, body)

    async def _answer(self, reply: Reply, writer: asyncio.StreamWriter) -> bool:
        """Send ``reply``; whether the connection can take another request."""
        if reply.reset_before_headers:
            _reset(writer)
            return False
        if reply.header_delay:
            await asyncio.sleep(reply.header_delay)
        if reply.raw is not None:
            writer.write(reply.raw)
            await writer.drain()
            return True
        head = [f"HTTP/1.1 {reply.status} Scripted", f"Content-Type: {reply.content_type}"]
        head += [f"{name}: {value}" for name, value in reply.headers.items()]
        head += ["Transfer-Encoding: chunked", "", ""]
        writer.write("\r\n".join(head).encode("latin-1"))
        await writer.drain()
        for piece in reply.pieces:
            if piece is GATE:
                await asyncio.wait_for(self._gate.wait(), self._limit)
                self._gate.clear()  # the next GATE waits for a release of its own
                continue
            if isinstance(piece, float):
                await asyncio.sleep(piece)
                continue
            assert isinstance(piece, bytes)
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
        if reply.end == "complete":
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        if reply.end == "reset":
            _reset(writer)
        elif reply.end == "close":
            writer.close()
        else:
            await self._stall(reply, writer)
        return False

    async def _stall(self, reply: Reply, writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._limit
        while not self._stop.is_set() and loop.time() < deadline:
            if reply.keepalive is None:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), deadline - loop.time())
                return
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), reply.keepalive)
            if not self._stop.is_set():
                writer.write(b"8\r\n: ping\n\n\r\n")
                await writer.drain()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with RST, not FIN: SO_LINGER with a zero timeout, then abort."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


# --- bodies ------------------------------------------------------------------------------------


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fault",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def sse(payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {data}\n\n".encode()


def raw_answer(
    status: int,
    body: bytes = b"",
    *,
    content_type: str | None = "application/json",
    length: int | None = None,
    headers: dict[str, str] | None = None,
) -> bytes:
    """An HTTP/1.1 answer with a ``Content-Length`` (``length``, else the body's), for
    ``Reply(raw=...)``."""
    head = [f"HTTP/1.1 {status} Scripted"]
    if content_type is not None:
        head.append(f"Content-Type: {content_type}")
    head += [f"{name}: {value}" for name, value in (headers or {}).items()]
    head += [f"Content-Length: {len(body) if length is None else length}", "", ""]
    return "\r\n".join(head).encode("latin-1") + body

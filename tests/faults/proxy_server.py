"""A tiny HTTP proxy on 127.0.0.1 that counts what goes through it.

Two ways through, as a corporate proxy offers them: ``CONNECT host:port`` opens a tunnel (for
``https``: the TLS handshake then runs end to end, so the client must still verify the origin's
certificate), and an absolute-form request (``POST http://host:port/path``) is forwarded, one
request per connection (the answer goes back with ``Connection: close``). Each request is noted
with the ``Proxy-Authorization`` it carried. Loopback only, every wait bounded, and ``async with``
closes every connection it still holds.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from types import TracebackType

__all__ = ["LoopbackProxy", "ProxiedRequest"]

_LIMIT = 10.0


@dataclass(frozen=True, slots=True)
class ProxiedRequest:
    method: str
    target: str
    """``host:port`` for ``CONNECT``, the absolute URL otherwise."""
    proxy_authorization: str | None


class LoopbackProxy:
    """``async with LoopbackProxy() as proxy: proxy.url``; ``proxy.requests`` once used."""

    def __init__(self) -> None:
        self.requests: list[ProxiedRequest] = []
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> LoopbackProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        self._writers.add(writer)
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), _LIMIT)
            lines = head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                if line:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
            self.requests.append(ProxiedRequest(method, target, headers.get("proxy-authorization")))
            if method == "CONNECT":
                await self._tunnel(target, reader, writer)
            else:
                await self._forward(f"{method} {target}", lines[1:], headers, reader, writer)
        except (OSError, asyncio.IncompleteReadError, TimeoutError, ValueError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()
            self._tasks.discard(task)

    async def _tunnel(
        self, target: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        host, _, port = target.rpartition(":")
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        self._writers.add(up_writer)
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            self._writers.discard(up_writer)
            up_writer.close()

    async def _forward(
        self,
        request_line: str,
        lines: list[str],
        headers: dict[str, str],
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        method, _, target = request_line.partition(" ")
        if not target.startswith("http://"):
            writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            return
        authority, _, path = target[len("http://") :].partition("/")
        host, _, port = authority.rpartition(":")
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        kept = [
            line
            for line in lines
            if line
            and line.partition(":")[0].strip().lower()
            not in ("connection", "proxy-authorization", "proxy-connection", "keep-alive")
        ]
        request = "\r\n".join([f"{method} /{path} HTTP/1.1", *kept, "Connection: close", "", ""])
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        self._writers.add(up_writer)
        try:
            up_writer.write(request.encode("latin-1") + body)
            await up_writer.drain()
            status, _, rest = (await up_reader.readuntil(b"\r\n")).partition(b"\r\n")
            writer.write(status + b"\r\nConnection: close\r\n" + rest)
            head = await up_reader.readuntil(b"\r\n\r\n")
            writer.write(
                b"".join(
                    line + b"\r\n"
                    for line in head.split(b"\r\n")[:-2]
                    if not line.lower().startswith(b"connection:")
                )
                + b"\r\n"
            )
            await _pipe(up_reader, writer)
        finally:
            self._writers.discard(up_writer)
            up_writer.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            if writer.can_write_eof():
                writer.write_eof()

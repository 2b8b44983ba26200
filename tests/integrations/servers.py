"""Loopback servers for the error and cancellation tests.

``serve_recording`` answers every request with one recorded exchange (an error body with its
status, a stream that breaks mid-way). ``StallingServer`` sends the head of a recorded stream,
then sends nothing more and waits for the client to hang up: ``hung_up`` is set when the
connection closes, which is what a cancelled framework stream must cause upstream.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, Protocol, TypeVar

from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from tests.integrations.replay_turns import TRANSCRIPTS

__all__ = ["InThread", "StallingServer", "serve_recording"]


class _AsyncServer(Protocol):
    async def __aenter__(self) -> Any: ...
    async def __aexit__(self, *exc_info: Any) -> None: ...


_Server = TypeVar("_Server", bound=_AsyncServer)


def serve_recording(backend: str, scenario: str) -> ReplayServer:
    sidecar = json.loads((TRANSCRIPTS / backend / f"{scenario}.json").read_text())
    path = TRANSCRIPTS / backend / f"{scenario}.sse"
    if not path.exists():
        path = path.with_suffix(".raw")
    body = path.read_bytes()
    status = int(sidecar["response"]["status"])
    kind = str(sidecar["response"].get("content_type") or "application/json")

    def reply(request: ReceivedRequest) -> RecordedReply:
        return RecordedReply(status, body, {"Content-Type": kind})

    return ReplayServer(reply)


class StallingServer:
    """Sends the first ``events`` events of ``recording`` (an ``.sse`` file), then stalls."""

    def __init__(self, recording: Path, events: int = 3, stall: float = 30.0) -> None:
        pieces = recording.read_bytes().split(b"\n\n")
        self._head = b"".join(piece + b"\n\n" for piece in pieces[:events] if piece.strip())
        self._stall = stall
        self._server: asyncio.Server | None = None
        self.hung_up = asyncio.Event()
        self.requests = 0
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> StallingServer:
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
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.decode("latin-1").split("\r\n"):
                if line.lower().startswith("content-length:"):
                    length = int(line.split(":", 1)[1])
            await reader.readexactly(length)
            self.requests += 1
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n"
                + b"%x\r\n%s\r\n"
                % (len(self._head), self._head)
            )
            await writer.drain()
            # Nothing more is sent: the client's hanging up is the only way this ends early.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(reader.read(), self._stall)
                self.hung_up.set()
        except (ConnectionError, asyncio.IncompleteReadError):
            self.hung_up.set()
        finally:
            writer.close()


class InThread(Generic[_Server]):
    """An async server on its own loop thread, for tests of blocking code (which would block
    a server on the caller's loop): ``with InThread(TwoTurnServer(s)) as server: ...``."""

    def __init__(self, server: _Server) -> None:
        self.server = server
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> _Server:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.__aenter__(), self._loop).result(10)
        return self.server

    def __exit__(self, *exc_info: object) -> None:
        closing = self.server.__aexit__(None, None, None)
        asyncio.run_coroutine_threadsafe(closing, self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

"""The loopback SSE server the benchmarks stream from, run in its own process.

``POST /<backend>/<kind>-<n>/v1/chat/completions`` answers the generated scenario (see
``scenarios``) as chunked HTTP/1.1 ``text/event-stream``. Frames are encoded once per scenario
and cached; each response is written in blocks of about ``BLOCK_BYTES`` (one HTTP chunk per
block), so the server costs little and the client, not the server, is what is measured. Keep-alive
is honoured, so a client that drains its response reuses its connection.

**Paced mode** (``/paced/<backend>/<kind>-<n>/…``, the concurrency phase): a real LLM server
writes tokens as it generates them, so its streams overlap in time, and a client must share its
event loop between them. The response head goes out at once, the first piece after
``PACE_FIRST_SECONDS`` (prefill), then ``PACE_EVENTS`` events at a time (one HTTP chunk each)
every ``PACE_SECONDS`` (decode steps). A 500-chunk stream then lasts about two seconds however
fast the client reads, and 200 of them run side by side. Unpaced, the server writes
a whole stream at once, and a client reading a socket that always has data never yields to its
other streams: requests go out one after another, and pool queueing cannot show.

Its own process: the client's CPU time (``time.process_time``) then excludes the server. It binds
127.0.0.1 only, and ``ServerProcess`` stops it by its process id.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

from benchmarks.scenarios import Scenario, generate

__all__ = [
    "BLOCK_BYTES",
    "PACED_PREFIX",
    "PACE_EVENTS",
    "PACE_FIRST_SECONDS",
    "PACE_SECONDS",
    "ServerProcess",
    "child_env",
    "encode_paced",
    "encode_response",
    "paced",
    "pin_to_cpu",
    "serve",
]

BLOCK_BYTES = 32 * 1024
PACED_PREFIX = "/paced"
PACE_FIRST_SECONDS = 1.0
"""Paced mode's time to first token: a batch server that receives 200 requests at once
prefills them all before it decodes. It is also what lets a client open its 200 connections
before data competes for its CPU: opening them takes this harness's httpx clients 0.3-0.6 s
of CPU on a loaded 2-core machine (httpcore's pool bookkeeping grows with the square of the
connections), and with 0.5 s here every client, the floor included, read 67-85 % in some
runs instead of 12-22 %."""
PACE_EVENTS = 20
"""Events per piece after it: a few KiB, one read for the client. (One event per write, as a
server decoding one token per step does, would cost this server 100,000 writes and timers
per 200-stream run, and its own CPU would then set the pace; 20 keeps it at 5,000.)"""
PACE_SECONDS = 0.04
"""The sleep before each later piece: a 500-chunk stream lasts 1 s + 25 x 40 ms, about 2 s,
and a 200-stream run about 3-6 s. Time is compressed about 20 times against a real decoder
(a token per stream every ~40 ms), so the client's CPU, not the server, still sets the pace
once all streams are open."""
_ROOT = Path(__file__).resolve().parent.parent
_SUFFIX = "/v1/chat/completions"
_HEAD = (
    b"HTTP/1.1 200 OK\r\n"
    b"content-type: text/event-stream; charset=utf-8\r\n"
    b"cache-control: no-cache\r\n"
    b"transfer-encoding: chunked\r\n"
    b"\r\n"
)
_NOT_FOUND = b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"


def encode_response(events: list[bytes], block_bytes: int = BLOCK_BYTES) -> list[bytes]:
    """The whole response (head, chunked body, terminator) as a few pre-encoded writes."""
    blocks: list[bytes] = []
    pending: list[bytes] = []
    size = 0
    for event in events:
        pending.append(event)
        size += len(event)
        if size >= block_bytes:
            blocks.append(_chunked(pending, size))
            pending, size = [], 0
    if pending:
        blocks.append(_chunked(pending, size))
    blocks[0] = _HEAD + blocks[0]
    blocks[-1] += b"0\r\n\r\n"
    return blocks


def encode_paced(events: list[bytes], per_piece: int = PACE_EVENTS) -> list[bytes]:
    """Paced mode's writes: the head alone, then ``per_piece`` events per HTTP chunk; the
    server sleeps ``PACE_FIRST_SECONDS`` before the first piece, ``PACE_SECONDS`` before each
    later one."""
    blocks = [_HEAD]
    for start in range(0, len(events), per_piece):
        piece = events[start : start + per_piece]
        blocks.append(_chunked(piece, sum(map(len, piece))))
    blocks[-1] += b"0\r\n\r\n"
    return blocks


def paced(base: str) -> str:
    """The base URL under which the server of ``base`` paces its answers (``PACED_PREFIX``)."""
    return base + PACED_PREFIX


def _chunked(pieces: list[bytes], size: int) -> bytes:
    return b"%x\r\n" % size + b"".join(pieces) + b"\r\n"


class _Responses:
    def __init__(self) -> None:
        self._cache: dict[str, list[bytes]] = {}

    def get(self, path: str, pace: bool) -> list[bytes] | None:
        """``path`` less any ``PACED_PREFIX``; ``pace`` says whether it had one."""
        key = PACED_PREFIX + path if pace else path
        cached = self._cache.get(key)
        if cached is None and path.startswith("/") and path.endswith(_SUFFIX):
            try:
                scenario = Scenario.parse(path[1 : -len(_SUFFIX)])
            except ValueError:
                return None
            events = generate(scenario).events
            encoded = encode_paced(events) if pace else encode_response(events)
            cached = self._cache[key] = encoded
        return cached


_ARRIVALS_PATH = "/_arrivals"
_MAX_ARRIVALS = 100_000


class _Arrivals:
    """When each request's head arrived (``time.monotonic``, one clock for every process on
    the machine): whether a client queues requests in its own pool shows only at the server.
    ``GET /_arrivals`` answers the list and starts a new one."""

    def __init__(self) -> None:
        self.times: list[float] = []

    def note(self) -> None:
        if len(self.times) < _MAX_ARRIVALS:
            self.times.append(time.monotonic())

    def answer(self) -> bytes:
        body = json.dumps(self.times).encode()
        self.times = []
        head = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
        return head % len(body) + body


async def _handle(
    responses: _Responses,
    arrivals: _Arrivals,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            request_line, *header_lines = head.split(b"\r\n")
            path = request_line.split(b" ")[1].decode("latin-1")
            length = 0
            for line in header_lines:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if length:
                await reader.readexactly(length)
            pace = path.startswith(PACED_PREFIX + "/")
            if pace:
                path = path[len(PACED_PREFIX) :]
            if path == _ARRIVALS_PATH:
                writer.write(arrivals.answer())
                await writer.drain()
                continue
            arrivals.note()
            blocks = responses.get(path, pace)
            if blocks is None:
                writer.write(_NOT_FOUND)
                await writer.drain()
                continue
            for index, block in enumerate(blocks):
                if pace and index:
                    await asyncio.sleep(PACE_FIRST_SECONDS if index == 1 else PACE_SECONDS)
                writer.write(block)
                await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass  # the client closed its connection (at the end, or early after [DONE])
    finally:
        writer.close()


async def serve(port: int = 0) -> None:
    """Serve until killed; print ``PORT <n>`` on stdout once listening."""
    responses = _Responses()
    arrivals = _Arrivals()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _handle(responses, arrivals, reader, writer)

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024)
    bound = server.sockets[0].getsockname()[1]
    sys.stdout.write(f"PORT {bound}\n")
    sys.stdout.flush()
    async with server:
        await server.serve_forever()


class ServerProcess:
    """``with ServerProcess() as base: …``: the server in a child process, stopped on exit.

    ``base`` is ``http://127.0.0.1:<port>``; a scenario's OpenAI base URL is
    ``f"{base}/{scenario.id}/v1"``. ``cpu`` pins the child to one CPU (on a 2-core machine the
    server and the measured client then do not share a core).
    """

    def __init__(self, cpu: int | None = None) -> None:
        self._cpu = cpu
        self._process: subprocess.Popen[str] | None = None
        self.base = ""

    def __enter__(self) -> str:
        command = [sys.executable, "-m", "benchmarks.sse_server"]
        if self._cpu is not None:
            command += ["--cpu", str(self._cpu)]
        self._process = subprocess.Popen(
            command, cwd=_ROOT, stdout=subprocess.PIPE, text=True, env=child_env()
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line.startswith("PORT "):
            self._stop()
            raise RuntimeError(f"the benchmark server did not start (said {line!r})")
        self.base = f"http://127.0.0.1:{int(line.split()[1])}"
        return self.base

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop()

    def _stop(self) -> None:
        process = self._process
        if process is None:
            return
        self._process = None
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def child_env() -> dict[str, str]:
    """The parent's environment with the repository root importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_ROOT), env.get("PYTHONPATH", "")]))
    return env


def pin_to_cpu(cpu: int | None) -> None:
    """Best effort: keep this process on one CPU when there are at least two."""
    if cpu is None or not hasattr(os, "sched_setaffinity"):
        return
    available = sorted(os.sched_getaffinity(0))
    if len(available) >= 2:
        os.sched_setaffinity(0, {available[cpu % len(available)]})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--cpu", type=int, default=None)
    args = parser.parse_args(argv)
    pin_to_cpu(args.cpu)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.port))


if __name__ == "__main__":
    main()

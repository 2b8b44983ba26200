"""The gateway benchmark's client: raw HTTP/1.1 streaming over asyncio, and its load generator.

A raw client, not httpx: on 2 cores the load generator shares the CPU with the proxy it drives,
and the less it spends per chunk, the less it disturbs the proxy's timing. One connection per
request (``connection: close``), so no client pool can queue a stream behind another: when the
last request reaches the backend then depends on the proxy alone.

Every stream is checked, not sampled: HTTP 200, the text assembled from ``delta.content``
equal to the backend's, ``data: [DONE]``, and the usage chunk that the request asks for. The
number of content chunks is recorded (the report shows it per target), not judged.

``python -m benchmarks.gateway_client --port P --streams N …`` (the load generator, its own
process, so its CPU is not counted as the proxy's) imports everything, prints ``READY``, waits
for a line on stdin (the parent reads the proxy's CPU counters meanwhile), opens all streams at
once and prints one JSON object (``LoadResult.to_json``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.gateway_backend import expected_text

try:
    import orjson

    _loads: Callable[[bytes], Any] = orjson.loads
except ImportError:  # pragma: no cover - orjson is a dependency of the library
    _loads = json.loads

__all__ = ["Endpoint", "LoadResult", "StreamRecord", "chat_body", "run_load", "stream_once"]

_MAX_HEAD = 64 * 1024
_MAX_ERROR_BODY = 4 * 1024
_MAX_EVENT = 1 << 20


@dataclass(slots=True)
class StreamRecord:
    sent: float
    """``time.monotonic()`` before connecting."""
    ttft: float | None = None
    """Seconds from ``sent`` to the first chunk with non-empty ``delta.content``."""
    total: float = 0.0
    chunks: int = 0
    error: str | None = None

    def to_json(self) -> list[Any]:
        return [self.sent, self.ttft, self.total, self.chunks, self.error]

    @classmethod
    def from_json(cls, row: list[Any]) -> StreamRecord:
        return cls(*row)


@dataclass(slots=True)
class _Reading:
    """What one stream's events said, checked once the stream ends."""

    text: list[str] = field(default_factory=list)
    chunks: int = 0
    first: float | None = None
    done: bool = False
    usage: bool = False
    error: str | None = None


def chat_body(model: str, max_tokens: int | None = None) -> bytes:
    """A streamed chat request that asks for usage; ``max_tokens`` shortens the answer."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [{"role": "user", "content": "Tell me about the weather."}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    return json.dumps(body).encode()


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where a target takes chat requests, and the key it wants (``None``: no header)."""

    port: int
    path: str = "/v1/chat/completions"
    api_key: str | None = None
    host: str = "127.0.0.1"

    def request(self, body: bytes) -> bytes:
        auth = f"authorization: Bearer {self.api_key}\r\n" if self.api_key else ""
        head = (
            f"POST {self.path} HTTP/1.1\r\nhost: {self.host}:{self.port}\r\n"
            "content-type: application/json\r\naccept: text/event-stream\r\n"
            f"{auth}connection: close\r\ncontent-length: {len(body)}\r\n\r\n"
        )
        return head.encode() + body


def _feed(reading: _Reading, event: bytes) -> None:
    for line in event.split(b"\n"):
        if not line.startswith(b"data:"):
            continue
        payload = line[5:].strip()
        if payload == b"[DONE]":
            reading.done = True
            continue
        try:
            chunk = _loads(payload)
        except ValueError:
            reading.error = reading.error or f"not JSON: {payload[:80]!r}"
            continue
        if chunk.get("usage"):
            reading.usage = True
        for choice in chunk.get("choices") or ():
            content = (choice.get("delta") or {}).get("content")
            if content:
                if reading.first is None:
                    reading.first = time.monotonic()
                reading.chunks += 1
                reading.text.append(content)


async def _body_pieces(reader: asyncio.StreamReader, head: bytes) -> AsyncIterator[bytes]:
    """The response body as it arrives: chunked transfer decoded, or read to EOF."""
    if b"transfer-encoding: chunked" in head.lower():
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                return
            data = await reader.readexactly(size + 2)
            yield data[:-2]
    else:
        while data := await reader.read(65536):
            yield data


async def _read_stream(reader: asyncio.StreamReader, reading: _Reading) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    status = head.split(b" ", 2)[1]
    if status != b"200":
        body = await reader.read(_MAX_ERROR_BODY)
        reading.error = f"HTTP {status.decode()}: {body[:200]!r}"
        return
    pending = b""
    async for data in _body_pieces(reader, head):
        pending += data.replace(b"\r\n", b"\n") if b"\r" in data else data
        if b"\n\n" in pending:
            *events, pending = pending.split(b"\n\n")
            for event in events:
                _feed(reading, event)
        elif len(pending) > _MAX_EVENT:
            reading.error = "an event over 1 MiB"
            return
    if pending.strip():
        _feed(reading, pending)


def _verdict(reading: _Reading, expected: str) -> str | None:
    """The first thing wrong with a stream. Its number of content chunks is recorded, not
    judged: the pipeline may hold a whitespace-only delta and send it with the next one."""
    if reading.error is not None:
        return reading.error
    text = "".join(reading.text)
    if text != expected:
        at = next((i for i, (a, b) in enumerate(zip(text, expected, strict=False)) if a != b), None)
        return f"wrong text ({len(text)} chars, {len(expected)} expected, first difference at {at})"
    if not reading.done:
        return "no data: [DONE]"
    if not reading.usage:
        return "no usage chunk although the request asked for one"
    return None


async def stream_once(endpoint: Endpoint, body: bytes, expected: str) -> StreamRecord:
    """One streamed request on a fresh connection, timed and checked."""
    record = StreamRecord(sent=time.monotonic())
    reading = _Reading()
    writer: asyncio.StreamWriter | None = None
    try:
        reader, writer = await asyncio.open_connection(
            endpoint.host, endpoint.port, limit=_MAX_HEAD
        )
        writer.write(endpoint.request(body))
        await _read_stream(reader, reading)
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
        reading.error = reading.error or f"{type(exc).__name__}: {exc}"
    finally:
        if writer is not None:
            writer.close()
    record.total = time.monotonic() - record.sent
    record.ttft = None if reading.first is None else reading.first - record.sent
    record.chunks = reading.chunks
    record.error = _verdict(reading, expected)
    return record


@dataclass(slots=True)
class LoadResult:
    started: float
    """``time.monotonic()`` when the first request was opened."""
    wall: float
    """Seconds from ``started`` to the end of the last stream."""
    cpu: float
    """The load generator's own CPU seconds over the run (for the record, not a result)."""
    records: list[StreamRecord]

    def to_json(self) -> dict[str, Any]:
        return {
            "started": self.started,
            "wall": self.wall,
            "cpu": self.cpu,
            "records": [r.to_json() for r in self.records],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LoadResult:
        records = [StreamRecord.from_json(row) for row in data["records"]]
        return cls(data["started"], data["wall"], data["cpu"], records)


async def run_load(endpoint: Endpoint, model: str, streams: int, chunks: int) -> LoadResult:
    """``streams`` concurrent streams of ``chunks`` chunks, all opened at once."""
    body = chat_body(model, chunks)
    expected = expected_text(chunks)
    cpu = time.process_time()
    started = time.monotonic()
    records = await asyncio.gather(*(stream_once(endpoint, body, expected) for _ in range(streams)))
    wall = time.monotonic() - started
    return LoadResult(started, wall, time.process_time() - cpu, list(records))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="the gateway benchmark's load generator")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--path", default="/v1/chat/completions")
    parser.add_argument("--model", required=True)
    parser.add_argument("--api-key-env", default=None, help="the variable holding the key")
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=500)
    args = parser.parse_args(argv)
    expected = expected_text(args.chunks)  # the imports and generation, before READY
    assert expected
    sys.stdout.write("READY\n")
    sys.stdout.flush()
    sys.stdin.readline()
    key = os.environ.get(args.api_key_env) if args.api_key_env else None
    endpoint = Endpoint(args.port, args.path, key)
    result = asyncio.run(run_load(endpoint, args.model, args.streams, args.chunks))
    sys.stdout.write(json.dumps(result.to_json()) + "\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

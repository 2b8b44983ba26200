"""The loopback OpenAI backend of the gateway benchmark (``gateway.py``), in its own process.

``POST …/chat/completions`` streams a vLLM-shaped ``text`` scenario (``scenarios``): the role
chunk, one chunk per token, the ``finish_reason`` chunk, the usage chunk when the body asks for it
(``stream_options.include_usage``, as vLLM does) and ``data: [DONE]``. ``max_tokens`` sets the
number of token chunks (default ``--chunks``), so a probe can ask for a short answer through
any proxy. A body without ``"stream": true`` gets the same text as one ``chat.completion``.
``GET …/models`` lists the one model; ``GET /_arrivals`` answers the arrival times of the chat
requests since the last call (``time.monotonic``, one clock for every process of the machine) and
starts a new list: when the last request of a run reached the backend shows whether a proxy
queued streams behind others.

The answer is paced like a decoding server, so 200 streams overlap: the first token chunk after
``--first-delay`` (prefill), then ``--per-piece`` events per write every ``--pace`` seconds,
on deadlines counted from the request (a slow write does not push every later one back).
Frames are built once per length and cached; the server does little but sleep and write, so on
2 cores it leaves the CPU to the proxy being measured. It binds 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import time
from dataclasses import dataclass, field

from benchmarks.scenarios import Scenario, generate
from benchmarks.sse_server import pin_to_cpu

__all__ = ["MODEL_ID", "Pacing", "StreamFrames", "expected_text", "frames_for", "serve"]

MODEL_ID = "bench"
_MAX_BODY = 1 << 20
_MAX_ARRIVALS = 100_000
_MAX_CACHED_LENGTHS = 64
_HEAD = (
    b"HTTP/1.1 200 OK\r\n"
    b"content-type: text/event-stream; charset=utf-8\r\n"
    b"cache-control: no-cache\r\n"
    b"transfer-encoding: chunked\r\n"
    b"\r\n"
)


@dataclass(frozen=True, slots=True)
class Pacing:
    first_delay: float = 0.2
    """Seconds from the request to the first token chunk (the role chunk goes out at once)."""
    pace: float = 0.05
    """Seconds between writes after the first; 0 writes the whole answer at once."""
    per_piece: int = 5
    """Events per write: 5 every 50 ms is 100 tokens/s per stream."""


@dataclass(frozen=True, slots=True)
class StreamFrames:
    """One answer's writes: ``pieces[0]`` (head + role chunk) at once, the rest paced."""

    pieces: tuple[bytes, ...]
    text: str
    events: int


def _chunked(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def frames_for(chunks: int, usage: bool, per_piece: int) -> StreamFrames:
    """The chunked HTTP writes of a ``chunks``-token vLLM stream, the usage chunk if asked."""
    stream = generate(Scenario("vllm", "text", chunks))
    events = list(stream.events)
    if not usage:
        del events[-2]  # the usage chunk sits before [DONE]
    pieces = [_HEAD + _chunked(events[0])]
    rest = events[1:]
    for start in range(0, len(rest), max(per_piece, 1)):
        pieces.append(_chunked(b"".join(rest[start : start + per_piece])))
    pieces[-1] += b"0\r\n\r\n"
    return StreamFrames(tuple(pieces), stream.wire.text, len(events))


def expected_text(chunks: int) -> str:
    """The text a client must assemble from a ``chunks``-token answer."""
    return generate(Scenario("vllm", "text", chunks)).wire.text


def _json_response(status: str, payload: object) -> bytes:
    body = json.dumps(payload).encode()
    head = f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
    return f"{head}content-length: {len(body)}\r\n\r\n".encode() + body


@dataclass(slots=True)
class _State:
    pacing: Pacing
    default_chunks: int
    arrivals: list[float] = field(default_factory=list)
    cache: dict[tuple[int, bool], StreamFrames] = field(default_factory=dict)

    def frames(self, chunks: int, usage: bool) -> StreamFrames:
        key = (chunks, usage)
        cached = self.cache.get(key)
        if cached is None:
            if len(self.cache) >= _MAX_CACHED_LENGTHS:
                self.cache.clear()
            cached = self.cache[key] = frames_for(chunks, usage, self.pacing.per_piece)
        return cached


def _chat_request(state: _State, body: bytes) -> tuple[int, bool, bool]:
    """(token chunks, stream, include usage) from a chat body; defaults where absent."""
    try:
        payload = json.loads(body) if body else {}
    except ValueError:
        payload = {}
    if not isinstance(payload, dict):
        payload = {}
    chunks = payload.get("max_tokens") or payload.get("max_completion_tokens")
    if not isinstance(chunks, int) or not 1 <= chunks <= state.default_chunks:
        chunks = state.default_chunks
    options = payload.get("stream_options")
    usage = isinstance(options, dict) and options.get("include_usage") is True
    return chunks, payload.get("stream") is True, usage


def _completion(text: str, chunks: int) -> bytes:
    return _json_response(
        "200 OK",
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 0,
            "model": MODEL_ID,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": 15,
                "completion_tokens": chunks,
                "total_tokens": 15 + chunks,
            },
        },
    )


async def _stream(writer: asyncio.StreamWriter, frames: StreamFrames, pacing: Pacing) -> None:
    loop = asyncio.get_running_loop()
    start = loop.time()
    for index, piece in enumerate(frames.pieces):
        if index:
            deadline = start + pacing.first_delay + (index - 1) * pacing.pace
            delay = deadline - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
        writer.write(piece)
        await writer.drain()


async def _answer(
    state: _State, method: bytes, path: str, body: bytes, writer: asyncio.StreamWriter
) -> None:
    if method == b"POST" and path.endswith("/chat/completions"):
        if len(state.arrivals) < _MAX_ARRIVALS:
            state.arrivals.append(time.monotonic())
        chunks, stream, usage = _chat_request(state, body)
        frames = state.frames(chunks, usage)
        if stream:
            await _stream(writer, frames, state.pacing)
        else:
            writer.write(_completion(frames.text, chunks))
    elif method == b"GET" and path.endswith("/models"):
        model = {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "bench"}
        writer.write(_json_response("200 OK", {"object": "list", "data": [model]}))
    elif method == b"GET" and path == "/_arrivals":
        arrivals, state.arrivals = state.arrivals, []
        writer.write(_json_response("200 OK", arrivals))
    else:
        writer.write(_json_response("404 Not Found", {"error": {"message": "not found"}}))
    await writer.drain()


async def _handle(
    state: _State, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            request_line, *header_lines = head.split(b"\r\n")
            method, target = request_line.split(b" ")[:2]
            length = 0
            for line in header_lines:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = min(int(value), _MAX_BODY)
            body = await reader.readexactly(length) if length else b""
            path = target.decode("latin-1").split("?", 1)[0]
            await _answer(state, method, path, body, writer)
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
        pass  # the peer closed its connection, or sent what this server does not speak
    finally:
        writer.close()


async def serve(pacing: Pacing, chunks: int, port: int = 0) -> None:
    """Serve until killed; print ``PORT <n>`` on stdout once listening."""
    state = _State(pacing, chunks)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _handle(state, reader, writer)

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=2048)
    sys.stdout.write(f"PORT {server.sockets[0].getsockname()[1]}\n")
    sys.stdout.flush()
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--chunks", type=int, default=500, help="token chunks per answer")
    defaults = Pacing()
    parser.add_argument("--first-delay", type=float, default=defaults.first_delay)
    parser.add_argument("--pace", type=float, default=defaults.pace)
    parser.add_argument("--per-piece", type=int, default=defaults.per_piece)
    parser.add_argument("--cpu", type=int, default=None, help="pin to this CPU")
    args = parser.parse_args(argv)
    pin_to_cpu(args.cpu)
    pacing = Pacing(args.first_delay, args.pace, args.per_piece)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(pacing, args.chunks, args.port))


if __name__ == "__main__":
    main()

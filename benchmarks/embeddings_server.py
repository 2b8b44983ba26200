"""The loopback ``/v1/embeddings`` server of the embeddings benchmark, run in its own process.

``POST /v1/embeddings`` answers a batch the way vLLM does: one item per input, in order, with
``index``, the vector in the form asked (``encoding_format: float`` or absent: a JSON list of
the float32 values written as doubles, as ``tensor.tolist()`` gives them, about 20 characters
each; ``base64``: the little-endian float32 bytes), the model and ``usage``. The vector of a
text is one of ``POOL`` precomputed deterministic vectors of ``DIMENSIONS`` values, chosen by
the text's CRC-32 (``vector_index``); a client process recomputes the one it needs
(``vector_bytes``) to check what it received, without holding the pool.

Each vector's two JSON fragments are encoded once at start, so an answer is one ``join``: the
server costs little, and it runs in another process (pinned to the other CPU), so the client's
``time.process_time`` excludes it. It binds 127.0.0.1 only; ``EmbeddingsServer`` stops it by
its process id.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import random
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from types import TracebackType

from benchmarks.sse_server import child_env, pin_to_cpu

__all__ = [
    "DIMENSIONS",
    "MODEL_ID",
    "POOL",
    "EmbeddingsServer",
    "answer_body",
    "token_count",
    "vector_bytes",
    "vector_index",
]

DIMENSIONS = 1024
POOL = 997
"""Distinct vectors (a prime, so neighbouring texts rarely share one)."""
MODEL_ID = "bench-embed-1024"
_PATH = b"/v1/embeddings"
_ROOT = Path(__file__).resolve().parent.parent


def vector_index(text: str) -> int:
    """Which pooled vector ``text`` gets."""
    return zlib.crc32(text.encode()) % POOL


def vector_bytes(index: int, dimensions: int = DIMENSIONS) -> bytes:
    """Pooled vector ``index`` as little-endian float32 bytes, of length about 1 (as an
    embedding model's normalised output)."""
    rng = random.Random(index)
    values = [rng.gauss(0.0, 1.0) for _ in range(dimensions)]
    scale = sum(v * v for v in values) ** -0.5
    return struct.pack(f"<{dimensions}f", *(v * scale for v in values))


def token_count(text: str) -> int:
    """The tokens ``usage`` reports for ``text``: words and punctuation, about a tokenizer's."""
    return len(text.split()) + text.count(",") + text.count(".")


class _Fragments:
    """Each pooled vector's ``embedding`` value, JSON-encoded once per form."""

    def __init__(self, dimensions: int = DIMENSIONS) -> None:
        self.float: list[bytes] = []
        self.base64: list[bytes] = []
        for index in range(POOL):
            raw = vector_bytes(index, dimensions)
            floats = struct.unpack(f"<{dimensions}f", raw)
            self.float.append(json.dumps(list(floats)).encode())
            self.base64.append(b'"' + base64.b64encode(raw) + b'"')


def answer_body(request: dict[str, object], fragments: _Fragments) -> bytes:
    """The JSON answer to one request body (``ValueError`` for one that is not an embeddings
    request of strings)."""
    texts = request.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
        raise ValueError("input must be a string or a list of strings")
    form = request.get("encoding_format") or "float"
    if form not in ("float", "base64"):
        raise ValueError(f"unknown encoding_format {form!r}")
    table = fragments.base64 if form == "base64" else fragments.float
    items = b",".join(
        b'{"object":"embedding","index":%d,"embedding":%s}' % (position, table[vector_index(text)])
        for position, text in enumerate(texts)
    )
    tokens = sum(token_count(text) for text in texts)
    usage = b'{"prompt_tokens":%d,"total_tokens":%d}' % (tokens, tokens)
    model = json.dumps(request.get("model") or MODEL_ID).encode()
    return b'{"object":"list","data":[%s],"model":%s,"usage":%s}' % (items, model, usage)


def _response(status: bytes, body: bytes) -> bytes:
    head = b"HTTP/1.1 %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
    return head % (status, len(body)) + body


async def _handle(
    fragments: _Fragments, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            request_line, *header_lines = head.split(b"\r\n")
            method, path = request_line.split(b" ")[:2]
            length = 0
            for line in header_lines:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            content = await reader.readexactly(length) if length else b""
            if method != b"POST" or path.split(b"?")[0] != _PATH:
                writer.write(_response(b"404 Not Found", b'{"error":"not found"}'))
            else:
                try:
                    body = answer_body(json.loads(content), fragments)
                except (ValueError, AttributeError) as exc:
                    error = json.dumps({"error": {"message": str(exc)}}).encode()
                    writer.write(_response(b"400 Bad Request", error))
                else:
                    writer.write(_response(b"200 OK", body))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass  # the client closed its connection
    finally:
        writer.close()


async def serve(port: int = 0, dimensions: int = DIMENSIONS) -> None:
    """Serve until killed; print ``PORT <n>`` on stdout once listening (after encoding)."""
    fragments = _Fragments(dimensions)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await _handle(fragments, reader, writer)

    server = await asyncio.start_server(handle, "127.0.0.1", port, limit=1 << 24)
    sys.stdout.write(f"PORT {server.sockets[0].getsockname()[1]}\n")
    sys.stdout.flush()
    async with server:
        await server.serve_forever()


class EmbeddingsServer:
    """``with EmbeddingsServer(cpu=1) as base: …``: the server in a child process; ``base`` is
    ``http://127.0.0.1:<port>`` (the OpenAI base URL is ``base + "/v1"``)."""

    def __init__(self, cpu: int | None = None, dimensions: int = DIMENSIONS) -> None:
        self._command = [sys.executable, "-m", "benchmarks.embeddings_server"]
        self._command += ["--dimensions", str(dimensions)]
        if cpu is not None:
            self._command += ["--cpu", str(cpu)]
        self._process: subprocess.Popen[str] | None = None

    def __enter__(self) -> str:
        self._process = subprocess.Popen(
            self._command, cwd=_ROOT, stdout=subprocess.PIPE, text=True, env=child_env()
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line.startswith("PORT "):
            self.__exit__(None, None, None)
            raise RuntimeError(f"the embeddings server did not start (said {line!r})")
        return f"http://127.0.0.1:{int(line.split()[1])}"

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--cpu", type=int, default=None)
    parser.add_argument("--dimensions", type=int, default=DIMENSIONS)
    args = parser.parse_args(argv)
    pin_to_cpu(args.cpu)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(args.port, args.dimensions))


if __name__ == "__main__":
    main()

"""Reading a body without holding more of it than ``Limits`` allows.

httpx inflates each network read whole (``zlib`` without an output bound), so one read of a
gzip bomb (a few KiB of zeros compressed a thousandfold) becomes megabytes before anyone can
count them, and a megabyte on the wire becomes a gibibyte. Here a compressed body is inflated
in pieces of at most ``PIECE`` bytes, so a reader that counts what it got stops within one piece
of its limit. Only ``gzip`` and ``deflate`` are inflated this way: the client asks for nothing
else (``Accept-Encoding``), and an encoding httpx cannot decode reaches the reader as is, as
it would through httpx.

``read_body`` is a whole answer (past its limit, ``ResponseTooLargeError``), ``read_prefix``
the start of one (an error body: what is kept on the exception), ``body_chunks`` the pieces as
they arrive, for a stream's reader, which counts them itself.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from contextlib import aclosing

import httpx

from providers.abstractions.errors import InvalidResponseError, ResponseTooLargeError
from providers.abstractions.limits import Limits

__all__ = [
    "ACCEPT_ENCODING",
    "PIECE",
    "body_chunks",
    "no_chunks",
    "read_body",
    "read_prefix",
    "read_whole",
    "too_large",
]

ACCEPT_ENCODING = "gzip, deflate"
"""What the clients ask for: the encodings inflated here in bounded pieces (httpx would also
offer ``br`` and ``zstd`` when their packages are installed, and inflate them unbounded)."""

PIECE = 64 * 1024
"""The most one inflation step produces: what a count may overshoot its limit by."""

_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}

Stage = Callable[[bytes], Iterator[bytes]]


def too_large(limit: str, value: int, what: str, backend: str | None) -> ResponseTooLargeError:
    """The error for passing ``Limits.<limit>`` (``value``); the caller attaches the partial."""
    return ResponseTooLargeError(
        f"{what} passed limits.{limit} ({value} bytes)", limit=limit, backend=backend
    )


class _Inflate:
    """One ``gzip`` or ``deflate`` layer, inflated in pieces of at most ``PIECE`` bytes.

    ``deflate`` is tried as zlib first and, if its first bytes are not, as raw deflate: servers
    send both under that name, and httpx accepts both.
    """

    __slots__ = ("_encoding", "_first", "_zlib")

    def __init__(self, encoding: str) -> None:
        self._encoding = encoding
        self._zlib = zlib.decompressobj(_WBITS[encoding])
        self._first = encoding == "deflate"

    def __call__(self, data: bytes) -> Iterator[bytes]:
        try:
            while True:
                piece = self._zlib.decompress(data, PIECE)
                self._first = False
                if piece:
                    yield piece
                data = self._zlib.unconsumed_tail
                # A full piece may leave output pending inside zlib with no input left.
                if not data and len(piece) < PIECE:
                    return
        except zlib.error as exc:
            if not self._first:
                raise InvalidResponseError(
                    f"the body is not valid {self._encoding} ({exc})"
                ) from exc
            self._first = False
            self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
            yield from self(data)


def _stages(response: httpx.Response) -> list[Stage]:
    """The inflation layers, in the order to apply them (the reverse of the header's)."""
    encodings = response.headers.get("content-encoding", "").lower().split(",")
    return [_Inflate(name) for e in reversed(encodings) if (name := e.strip()) in _WBITS]


def _through(stages: list[Stage], data: bytes) -> Iterator[bytes]:
    if not stages:
        yield data
        return
    first, rest = stages[0], stages[1:]
    for piece in first(data):
        yield from _through(rest, piece)


async def body_chunks(response: httpx.Response) -> AsyncGenerator[bytes, None]:
    """The body as it arrives, inflated in bounded pieces; a body already read (a mock
    transport's) in one piece, as httpx decoded it."""
    if response.is_stream_consumed:
        yield response.content
        return
    stages = _stages(response)
    async for chunk in response.aiter_raw():
        for piece in _through(stages, chunk):
            yield piece


async def no_chunks() -> AsyncIterator[bytes]:
    """The rest of a body already read whole: nothing."""
    return
    yield  # (an async generator)


async def read_body(
    response: httpx.Response,
    limit: int,
    *,
    name: str = "max_body_bytes",
    backend: str | None = None,
    stamps: dict[str, float] | None = None,
) -> bytes:
    """The whole body; past ``limit`` bytes, ``ResponseTooLargeError`` naming ``name``.

    ``stamps`` gets ``first_byte`` (the monotonic time the first piece arrived) when given.
    """
    pieces: list[bytes] = []
    size = 0
    async for piece in body_chunks(response):
        if stamps is not None and not pieces:
            stamps["first_byte"] = time.monotonic()
        size += len(piece)
        if size > limit:
            raise too_large(name, limit, "the body", backend)
        pieces.append(piece)
    return b"".join(pieces)


async def read_prefix(response: httpx.Response, limit: int) -> bytes:
    """At most ``limit`` bytes of the body; the rest is left unread (closing the response then
    closes its connection, which is what a body nobody wants to read deserves)."""
    pieces: list[bytes] = []
    size = 0
    async with aclosing(body_chunks(response)) as chunks:
        async for piece in chunks:
            pieces.append(piece[: limit - size])
            size += len(pieces[-1])
            if size >= limit:
                break
    return b"".join(pieces)


async def read_whole(
    response: httpx.Response, limits: Limits, *, backend: str, stamps: dict[str, float]
) -> bytes:
    """A non-streamed answer's body: whole up to ``max_body_bytes``, or for an error status its
    first ``max_error_body_bytes`` (what ``ProviderError.body`` keeps)."""
    if response.status_code >= 400:
        stamps["first_byte"] = time.monotonic()
        return await read_prefix(response, limits.max_error_body_bytes)
    return await read_body(response, limits.max_body_bytes, backend=backend, stamps=stamps)

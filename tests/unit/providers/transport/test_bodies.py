"""``providers.transport.bodies``: bodies read within a limit, inflated in bounded pieces."""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator

import httpx
import pytest

from providers.abstractions.errors import InvalidResponseError, ResponseTooLargeError
from providers.transport.bodies import PIECE, body_chunks, read_body, read_prefix


class _Reads(httpx.AsyncByteStream):
    def __init__(self, *reads: bytes) -> None:
        self._reads = reads

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for read in self._reads:
            yield read


def _response(*reads: bytes, encoding: str | None = None) -> httpx.Response:
    headers = {"content-encoding": encoding} if encoding is not None else {}
    return httpx.Response(200, headers=headers, stream=_Reads(*reads))


def _packed(data: bytes, wbits: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    return packer.compress(data) + packer.flush()


async def _pieces(response: httpx.Response) -> list[bytes]:
    return [piece async for piece in body_chunks(response)]


@pytest.mark.parametrize(
    ("encoding", "wbits"),
    [("gzip", 31), ("x-gzip", 31), ("deflate", 15), ("deflate", -15)],
    ids=["gzip", "x-gzip", "deflate-zlib", "deflate-raw"],
)
async def test_compressed_bodies_are_inflated_in_bounded_pieces(encoding: str, wbits: int) -> None:
    data = bytes(5 * PIECE + 123)
    packed = _packed(data, wbits)
    pieces = await _pieces(_response(packed[:10], packed[10:], encoding=encoding))
    assert b"".join(pieces) == data
    assert max(map(len, pieces)) <= PIECE


async def test_stacked_encodings_are_undone_in_reverse_order() -> None:
    data = b"hello " * 1000
    packed = _packed(_packed(data, 15), 31)  # deflate, then gzip
    assert b"".join(await _pieces(_response(packed, encoding="deflate, gzip"))) == data


async def test_an_unknown_encoding_passes_the_bytes_through() -> None:
    assert await _pieces(_response(b"abc", encoding="br")) == [b"abc"]


async def test_a_broken_gzip_body_is_invalid() -> None:
    with pytest.raises(InvalidResponseError, match="gzip"):
        await _pieces(_response(b"not gzip at all", encoding="gzip"))


async def test_read_body_stops_past_its_limit() -> None:
    bomb = _packed(bytes(64 * PIECE), 31)
    with pytest.raises(ResponseTooLargeError) as caught:
        await read_body(_response(bomb, encoding="gzip"), 2 * PIECE)
    assert caught.value.limit == "max_body_bytes"
    assert await read_body(_response(b"ab", b"cd"), 4) == b"abcd"


async def test_read_prefix_keeps_at_most_its_limit() -> None:
    assert await read_prefix(_response(b"abc", b"def", b"ghi"), 5) == b"abcde"
    assert await read_prefix(_response(b"ab"), 5) == b"ab"


async def test_a_body_already_read_is_one_piece() -> None:
    response = httpx.Response(200, content=b"whole")
    assert await _pieces(response) == [b"whole"]

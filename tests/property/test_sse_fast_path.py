"""``feed_bytes`` cuts a read of many events on ``\\n\\ndata: `` and hands each one-line piece
over as it stands (issue 21); every other read takes the line loop. The two must be one decoder:
for the same reads, the same data from every call, the same error at the same call, the same
state after (names, ids, what a later ``feed`` sees), whatever the stream holds (LF, CR, CRLF,
comments, fields, events of several lines, blank-line runs, a BOM, invalid UTF-8, no final
blank line) and whatever the limit.

The fast path is switched on for every read that has a cut (``always``) and off for all
(``never``), so the comparison does not depend on the production thresholds; the production
thresholds (``default``) must agree too."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers.abstractions.errors import ResponseTooLargeError
from providers.transport import sse
from providers.transport.sse import SseDecoder

SETTINGS = settings(max_examples=300, deadline=None)

_JSON = st.sampled_from(
    [
        b'{"choices":[{"delta":{"content":"hi"}}]}',
        b'{"choices":[{"delta":{"content":"caf\xc3\xa9 \xe2\x80\xa8"}}]}',
        b"[DONE]",
        b"",
        b" lead",
        b"\xff\xfe",
        b"data: inside",
        b":x",
    ]
)
# One line of an event (without its line end): mostly the shape every server sends.
_LINE = st.one_of(
    _JSON.map(lambda v: b"data: " + v),
    _JSON.map(lambda v: b"data: " + v),
    _JSON.map(lambda v: b"data:" + v),
    st.sampled_from(
        [
            b": ping",
            b":",
            b"event: delta",
            b"id: 7",
            b"id: a\x00b",
            b"retry: 30",
            b"x-y: z",
            b"data",
        ]
    ),
)
_EVENT = st.one_of(
    _LINE.filter(lambda line: line.startswith(b"data: ")).map(lambda line: [line]),
    st.lists(_LINE, min_size=1, max_size=4),
)


@st.composite
def streams(draw: st.DrawFn) -> bytes:
    events = draw(st.lists(_EVENT, max_size=30))
    crlike = draw(st.booleans())  # most streams: LF only, the fast path's case
    parts: list[bytes] = []
    for lines in events:
        for line in lines:
            parts.append(
                line + (draw(st.sampled_from([b"\n", b"\r", b"\r\n"])) if crlike else b"\n")
            )
        parts.append(b"\n" * draw(st.sampled_from([1, 1, 1, 2, 3])))  # blank lines: a run at times
    payload = b"".join(parts)
    if draw(st.booleans()):
        payload = payload.rstrip(b"\n")  # no final blank line, or no final line end at all
    if draw(st.booleans()):
        payload = b"\xef\xbb\xbf" + payload
    return payload


def cut(payload: bytes, offsets: list[int]) -> list[bytes]:
    points = sorted({o for o in offsets if 0 < o < len(payload)})
    bounds = [0, *points, len(payload)]
    return [payload[a:b] for a, b in pairwise(bounds)]


@contextmanager
def fast_path(mode: str) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        if mode == "always":
            patch.setattr(sse, "_WHOLE_EVENTS_MIN", 0)
            patch.setattr(sse, "_CUT_WITHIN", None)  # (find's end: the whole read)
        elif mode == "never":
            patch.setattr(sse, "_WHOLE_EVENTS_MIN", 1 << 62)
        yield


def run(mode: str, reads: list[bytes], limit: int, kinds: list[bool]) -> list[object]:
    """What each call gives, in order: the data of a ``feed_bytes`` (or ``feed``, where
    ``kinds`` says so) read, or the error it raised; then ``finish_bytes``, the last id and the
    name a later named event gets."""
    decoder = SseDecoder(limit)
    out: list[object] = []
    with fast_path(mode):
        for i, read in enumerate(reads):
            try:
                if i < len(kinds) and kinds[i]:
                    out.append([(e.data, e.event, e.id) for e in decoder.feed(read)])
                else:
                    out.append(decoder.feed_bytes(read))
            except ResponseTooLargeError:
                out.append("too large")
        try:
            out.append(decoder.finish_bytes())
        except ResponseTooLargeError:
            out.append("too large")
        out.append(decoder.last_event_id)
        try:  # no name left over from the fast path
            out.append(decoder.feed(b"data: after\n\n"))
        except ResponseTooLargeError:
            out.append("too large")
    return out


@SETTINGS
@given(
    payload=streams(),
    offsets=st.lists(st.integers(0, 4000), max_size=12),
    limit=st.sampled_from([1 << 24, 1 << 24, 40, 64, 300, 2000]),
    kinds=st.lists(st.booleans(), max_size=12),
)
def test_the_fast_path_and_the_line_loop_agree_on_every_read(
    payload: bytes, offsets: list[int], limit: int, kinds: list[bool]
) -> None:
    reads = cut(payload, offsets)
    reads_only = [False] * len(reads)
    expected = run("never", reads, limit, reads_only)
    assert run("always", reads, limit, reads_only) == expected
    assert run("default", reads, limit, reads_only) == expected
    assert run("always", reads, limit, kinds) == run("never", reads, limit, kinds)


@SETTINGS
@given(payload=streams(), step=st.integers(1, 600))
def test_the_fast_path_gives_what_byte_by_byte_reading_gives(payload: bytes, step: int) -> None:
    reads = [payload[i : i + step] for i in range(0, len(payload), step)]
    one_by_one = [payload[i : i + 1] for i in range(len(payload))]

    def data(mode: str, pieces: list[bytes]) -> list[bytes]:
        decoder = SseDecoder()
        with fast_path(mode):
            got = [raw for piece in pieces for raw in decoder.feed_bytes(piece)]
            return got + decoder.finish_bytes()

    assert data("always", reads) == data("never", one_by_one)


@pytest.mark.parametrize("mode", ["always", "default"])
def test_a_long_read_of_plain_events_is_cut_into_their_data(mode: str) -> None:
    events = [b'{"n":%d}' % i for i in range(200)]
    body = b"".join(b"data: " + e + b"\n\n" for e in events)
    decoder = SseDecoder()
    with fast_path(mode):
        got = decoder.feed_bytes(body[:3001]) + decoder.feed_bytes(body[3001:])
    assert got + decoder.finish_bytes() == events


@pytest.mark.parametrize("mode", ["always", "default"])
def test_a_named_event_in_a_cut_read_leaves_no_name_behind(mode: str) -> None:
    plain = b"".join(b'data: {"n":%d}\n\n' % i for i in range(60))
    decoder = SseDecoder()
    with fast_path(mode):
        got = decoder.feed_bytes(plain + b"event: delta\ndata: x\n\n" + plain)
        assert len(got) == 121
        (after,) = decoder.feed(b"data: y\n\n")
    assert after.event == "message"

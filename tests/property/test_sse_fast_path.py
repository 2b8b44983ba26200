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


def cut_points(payload: bytes, data: st.DataObject) -> list[int]:
    """Anywhere, and at line ends and event ends (the reads a server's writes give: whole
    events, or an event without its blank line, which then opens the next read), and after
    each ``data: `` (a read may then start with one that is inside a line)."""
    points = data.draw(st.lists(st.integers(0, len(payload)), max_size=6))
    for ending in (b"\n", b"\n\n", b"data: "):
        ends = [i + len(ending) for i in range(len(payload)) if payload.startswith(ending, i)]
        if ends:
            points += data.draw(st.lists(st.sampled_from(ends), max_size=len(ends)))
    return points


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
        yield


def run(mode: str, reads: list[bytes], limit: int, named: list[bool]) -> list[object]:
    """What each call gives, in order: the data of a read (``feed``'s events with their names
    and ids where ``named`` says so), or the error it raised; then the flush, the last id and
    the name a later event gets. ``lines`` reads with ``feed_data``, the others with
    ``feed_bytes``, decoded as ``feed_data`` decodes."""
    decoder = SseDecoder(limit)
    out: list[object] = []

    def text(raw: list[bytes]) -> list[str]:
        return [r.decode("utf-8", "replace") for r in raw]

    with fast_path(mode):
        for i, read in enumerate(reads):
            try:
                if i < len(named) and named[i]:
                    out.append([(e.data, e.event, e.id) for e in decoder.feed(read)])
                elif mode == "lines":
                    out.append(decoder.feed_data(read))
                else:
                    out.append(text(decoder.feed_bytes(read)))
            except ResponseTooLargeError:
                out.append("too large")
        try:
            out.append(decoder.finish_data() if mode == "lines" else text(decoder.finish_bytes()))
        except ResponseTooLargeError:
            out.append("too large")
        out.append(decoder.last_event_id)
        try:  # no name left over from a shortcut
            out.append(decoder.feed(b"data: after\n\n"))
        except ResponseTooLargeError:
            out.append("too large")
    return out


@SETTINGS
@given(
    payload=streams(),
    data=st.data(),
    limit=st.sampled_from([1 << 24, 1 << 24, 40, 64, 300, 2000]),
    named=st.lists(st.booleans(), max_size=12),
)
def test_the_shortcuts_and_the_line_loop_agree_on_every_read(
    payload: bytes, data: st.DataObject, limit: int, named: list[bool]
) -> None:
    reads = cut(payload, cut_points(payload, data))
    unnamed = [False] * len(reads)
    expected = run("lines", reads, limit, unnamed)
    assert run("always", reads, limit, unnamed) == expected
    assert run("default", reads, limit, unnamed) == expected
    assert run("always", reads, limit, named) == run("lines", reads, limit, named)


@SETTINGS
@given(payload=streams(), data=st.data())
def test_the_shortcuts_give_the_bytes_that_byte_by_byte_reading_gives(
    payload: bytes, data: st.DataObject
) -> None:
    reads = cut(payload, cut_points(payload, data))
    one_by_one = [payload[i : i + 1] for i in range(len(payload))]  # (no shortcut can apply)

    def data_of(mode: str, pieces: list[bytes]) -> list[bytes]:
        decoder = SseDecoder()
        with fast_path(mode):
            got = [raw for piece in pieces for raw in decoder.feed_bytes(piece)]
            return got + decoder.finish_bytes()

    expected = data_of("default", one_by_one)
    assert data_of("always", reads) == expected
    assert data_of("default", reads) == expected


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


def test_a_named_event_read_whole_leaves_no_name_behind() -> None:
    decoder = SseDecoder()
    assert decoder.feed_bytes(b"event: delta\n") == []
    assert decoder.feed_bytes(b"data: x\n\n") == [b"x"]  # one read, one event: the shortcut
    (after,) = decoder.feed(b"data: y\n\n")
    assert after.event == "message"


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        (b"data: a\n", b"data: b\n\n", [b"a\nb"]),  # the event's first line came before
        (b"data: ", b"data: x\n\n", [b"data: x"]),  # an unfinished line came before
        (b"event: e\n", b"data: x\n\n", [b"x"]),  # a name came before
        (b"data: a\n", b"\n", [b"a"]),
    ],
)
def test_a_read_shaped_as_one_event_continues_what_came_before(
    first: bytes, second: bytes, expected: list[bytes]
) -> None:
    decoder = SseDecoder()
    assert decoder.feed_bytes(first) + decoder.feed_bytes(second) == expected
    assert decoder.finish_bytes() == []


@pytest.mark.parametrize("mode", ["always", "default"])
def test_a_line_past_the_limit_across_reads_raises_in_a_cut_read(mode: str) -> None:
    decoder = SseDecoder(600)
    with fast_path(mode):
        assert decoder.feed_bytes(b"data: " + b"x" * 400) == []
        with pytest.raises(ResponseTooLargeError):  # the line: 606 bytes
            decoder.feed_bytes(b"y" * 200 + b"\n\n" + b"data: z\n\n" * 30)

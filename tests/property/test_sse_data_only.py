"""``SseDecoder.feed_data`` and ``feed_bytes`` (the chat client's path, undecoded) give exactly
the ``data`` of the events that ``feed`` gives, however the bytes are cut and whatever they hold:
any line ends, comments, ids, names, invalid UTF-8, a BOM, a missing final blank line."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from providers.transport.sse import SseDecoder

SETTINGS = settings(max_examples=300, deadline=None)

# Lines as the servers write them and as they should not: data with and without the space,
# comments, named events, ids, blank lines, non-ASCII and invalid UTF-8, stray CRs.
_PIECES = st.sampled_from(
    [
        b"data: ",
        b"data:",
        b'data: {"a": 1}',
        b"[DONE]",
        b": ping",
        b"event: error",
        b"id: 7",
        b"retry: 30",
        b"\n",
        b"\n\n",
        b"\r\n",
        b"\r",
        b"caf\xc3\xa9",
        b"\xe6\x9d\xb1",
        b"\xf0\x9f\x8c\xa7",
        b"\xe2\x80\xa8",
        b"\xff\xfe",
        b"\xe6\x9d",
        b"x",
        b" ",
        b"\xef\xbb\xbf",
    ]
)


def cut(payload: bytes, offsets: list[int]) -> list[bytes]:
    points = sorted({o for o in offsets if 0 < o < len(payload)})
    bounds = [0, *points, len(payload)]
    return [payload[a:b] for a, b in pairwise(bounds)]


def events_data(pieces: list[bytes]) -> list[str]:
    decoder = SseDecoder()
    data = [event.data for piece in pieces for event in decoder.feed(piece)]
    return data + [event.data for event in decoder.finish()]


def data_only(pieces: list[bytes]) -> list[str]:
    decoder = SseDecoder()
    data = [text for piece in pieces for text in decoder.feed_data(piece)]
    return data + decoder.finish_data()


def bytes_only(pieces: list[bytes]) -> list[str]:
    decoder = SseDecoder()
    data = [raw for piece in pieces for raw in decoder.feed_bytes(piece)]
    return [raw.decode("utf-8", "replace") for raw in data + decoder.finish_bytes()]


@SETTINGS
@given(parts=st.lists(_PIECES, max_size=40), data=st.data())
def test_data_only_equals_the_data_of_the_events(parts: list[bytes], data: st.DataObject) -> None:
    payload = b"".join(parts)
    offsets = data.draw(st.lists(st.integers(0, max(len(payload), 1)), max_size=12))
    expected = events_data([payload])
    assert data_only([payload]) == expected
    assert data_only(cut(payload, offsets)) == expected
    assert events_data(cut(payload, offsets)) == expected
    assert bytes_only([payload]) == expected
    assert bytes_only(cut(payload, offsets)) == expected


@SETTINGS
@given(parts=st.lists(_PIECES, max_size=30), switches=st.lists(st.booleans(), max_size=40))
def test_feed_and_feed_data_may_be_mixed(parts: list[bytes], switches: list[bool]) -> None:
    payload = b"".join(parts)
    pieces = [payload[i : i + 3] for i in range(0, len(payload), 3)]
    decoder = SseDecoder()
    got: list[str] = []
    for i, piece in enumerate(pieces):
        if i < len(switches) and switches[i]:
            got += [event.data for event in decoder.feed(piece)]
        else:
            got += decoder.feed_data(piece)
    got += decoder.finish_data()
    assert got == events_data([payload])


def test_names_and_ids_are_still_tracked_on_the_data_path() -> None:
    decoder = SseDecoder()
    assert decoder.feed_data(b"id: 41\nevent: x\ndata: a\n\ndata: b\n") == ["a"]
    assert decoder.last_event_id == "41"
    assert decoder.finish_data() == ["b"]

"""``max_event_bytes`` in the SSE decoder at its exact edges, on each of its paths (issue 20).

What an event costs: its data lines' values joined by LF, plus ``sse._LINE_COST`` (48) for each
line past the first; a line costs its length. Exactly the limit passes, one byte more raises,
whether the event comes in one read or many, with LF, CRLF or CR, read as bytes or text."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from providers.abstractions.errors import ResponseTooLargeError
from providers.transport.sse import SseDecoder

_ENDS = [b"\n", b"\r\n", b"\r"]
_STEPS = [1, 4, 9, 17, 10_000]


def _reads(body: bytes, step: int) -> list[bytes]:
    return [body[i : i + step] for i in range(0, len(body), step)]


def _reader(
    limit: int, as_bytes: bool
) -> tuple[Callable[[bytes], list[str]], Callable[[], list[str]]]:
    """``feed`` and ``finish`` of a decoder read by ``feed_bytes`` or ``feed_data``, as text."""
    decoder = SseDecoder(limit)
    if as_bytes:
        return (
            lambda read: [item.decode() for item in decoder.feed_bytes(read)],
            lambda: [item.decode() for item in decoder.finish_bytes()],
        )
    return decoder.feed_data, decoder.finish_data


def _run(limit: int, reads: Sequence[bytes], as_bytes: bool) -> list[str]:
    """Every event's data."""
    feed, finish = _reader(limit, as_bytes)
    out: list[str] = []
    for read in reads:
        out.extend(feed(read))
    return out + finish()


@pytest.mark.parametrize("as_bytes", [True, False], ids=["bytes", "text"])
@pytest.mark.parametrize("step", _STEPS)
@pytest.mark.parametrize("end", _ENDS, ids=["lf", "crlf", "cr"])
@pytest.mark.parametrize(("lines", "size"), [(2, 30), (3, 10), (5, 1)])
def test_an_event_costing_exactly_the_limit_passes_and_one_byte_less_of_limit_raises(
    lines: int, size: int, end: bytes, step: int, as_bytes: bool
) -> None:
    cost = lines * size + (lines - 1) * (1 + 48)
    values = [bytes([97 + i]) * size for i in range(lines)]
    body = b"".join(b"data: " + value + end for value in values) + end + b"data: z" + end + end
    reads = _reads(body, step)
    assert _run(cost, reads, as_bytes) == [b"\n".join(values).decode(), "z"]
    with pytest.raises(ResponseTooLargeError) as caught:
        _run(cost - 1, reads, as_bytes)
    assert caught.value.limit == "max_event_bytes"


@pytest.mark.parametrize("as_bytes", [True, False], ids=["bytes", "text"])
@pytest.mark.parametrize("step", _STEPS)
@pytest.mark.parametrize("end", _ENDS, ids=["lf", "crlf", "cr"])
def test_a_line_of_exactly_the_limit_passes_and_one_byte_more_raises(
    end: bytes, step: int, as_bytes: bool
) -> None:
    line = b"data: " + b"x" * 54  # 60 bytes
    body = b"data: a" + end + end + line + end + end
    assert _run(60, _reads(body, step), as_bytes) == ["a", "x" * 54]
    assert _run(60, _reads(body + line, step), as_bytes) == ["a", "x" * 54, "x" * 54]
    with pytest.raises(ResponseTooLargeError):
        _run(59, _reads(body, step), as_bytes)


@pytest.mark.parametrize("as_bytes", [True, False], ids=["bytes", "text"])
@pytest.mark.parametrize("first", [1, 10, 59])
def test_a_line_grown_over_reads_to_exactly_the_limit_passes(first: int, as_bytes: bool) -> None:
    line = b"data: " + b"x" * 54
    reads = [line[:first], line[first:], b"\n\n"]
    assert _run(60, reads, as_bytes) == ["x" * 54]
    with pytest.raises(ResponseTooLargeError):
        _run(60, [line[:first], line[first:] + b"x", b"\n\n"], as_bytes)
    with pytest.raises(ResponseTooLargeError):
        _run(60, [line[:first], line[first:] + b"x\n\n"], as_bytes)


@pytest.mark.parametrize("as_bytes", [True, False], ids=["bytes", "text"])
def test_a_line_ending_a_long_read_of_events_is_measured_to_the_byte(as_bytes: bool) -> None:
    # The read is longer than the limit, so its lines are measured one by one.
    head = b"data: a\n\n" * 20
    tail = b"data: " + b"x" * 94  # 100: the limit
    assert _run(100, [head + tail, b"\n\n"], as_bytes) == ["a"] * 20 + ["x" * 94]
    decoder = SseDecoder(100)
    assert decoder.feed_data(head + tail + b"x") == ["a"] * 20
    with pytest.raises(ResponseTooLargeError):
        decoder.feed_data(b"\n\n")


def _many(count: int, value: bytes = b"y" * 20) -> bytes:
    return (b"data: " + value + b"\n\n") * count


def test_a_line_ended_by_a_read_of_many_events_is_measured_with_what_came_before() -> None:
    # The second read is one that ``feed_bytes`` cuts on ``\n\ndata: ``; its first line ends
    # the 496 bytes the first read left open.
    first = b"data: " + b"x" * 500
    events = ["x" * 994, *["y" * 20] * 10]
    assert _run(1000, [first, b"x" * 494 + b"\n\n" + _many(10)], True) == events
    assert _run(1000, [first, b"x" * 494 + b"\n\n" + _many(10)], False) == events
    with pytest.raises(ResponseTooLargeError):
        _run(1000, [first, b"x" * 495 + b"\n\n" + _many(10)], True)


@pytest.mark.parametrize("as_bytes", [True, False], ids=["bytes", "text"])
def test_an_event_of_many_lines_inside_a_read_of_many_events_is_measured(as_bytes: bool) -> None:
    # 13 lines of one byte: 13 + 12 * 49 = 601.
    body = _many(15) + b"data: z\n" * 13 + b"\n" + b"data: end\n\n"
    events = [*["y" * 20] * 15, "\n".join("z" * 13), "end"]
    assert _run(601, [body], as_bytes) == events
    feed, finish = _reader(600, as_bytes)
    assert feed(body) == events[:15]
    with pytest.raises(ResponseTooLargeError):
        feed(b"data: next\n\n")
    with pytest.raises(ResponseTooLargeError):
        finish()


@pytest.mark.parametrize("as_bytes", [True, False], ids=["bytes", "text"])
@pytest.mark.parametrize("split", [8, 20, 60])
def test_an_event_left_open_by_a_read_of_many_events_is_measured_on_the_next_reads(
    split: int, as_bytes: bool
) -> None:
    # A read of many events ending with the first lines of one of 13 lines of one byte: 13 +
    # 12 * 49 = 601. The read itself (within the limit) holds up to 8 of them.
    pending = b"data: z\n" * 13
    reads = [_many(18) + pending[:split], pending[split:-8], pending[-8:], b"\n"]
    assert _run(601, reads, as_bytes) == [*["y" * 20] * 18, "\n".join("z" * 13)]
    feed, _ = _reader(600, as_bytes)
    assert feed(reads[0]) == ["y" * 20] * 18
    assert feed(reads[1]) == []
    with pytest.raises(ResponseTooLargeError):
        feed(reads[2])


def test_what_passed_the_limit_is_dropped_when_the_error_is_raised_at_once() -> None:
    """Raised with no event before it in the read, the error leaves the decoder holding
    nothing: a reader that catches it and reads on gets the next events, measured afresh."""
    decoder = SseDecoder(100)
    with pytest.raises(ResponseTooLargeError):
        decoder.feed_data(b"data: " + b"x" * 200)  # an unfinished line
    assert decoder.feed_data(b"data: ok\n\n") == ["ok"]
    assert decoder.feed_data(b"data: " + b"a" * 40 + b"\n") == []
    with pytest.raises(ResponseTooLargeError):
        decoder.feed_data(b"data: " + b"b" * 40 + b"\n")  # 80 + 49: an unfinished event
    # Three lines of one byte, a read each: 3 + 2 * 49 = 101.
    assert decoder.feed_data(b"data: c\n") == []
    assert decoder.feed_data(b"data: d\n") == []
    with pytest.raises(ResponseTooLargeError):
        decoder.feed_data(b"data: e\n")
    assert decoder.feed_data(b"data: f\n") == []
    assert decoder.feed_data(b"data: " + b"g" * 20 + b"\n") == []  # 21 + 49 = 70
    assert decoder.feed_data(b"\n") == ["f\n" + "g" * 20]
    assert decoder.finish_data() == []


@pytest.mark.parametrize("as_bytes", [True, False], ids=["bytes", "text"])
def test_once_a_read_passed_the_limit_every_later_call_raises_even_an_empty_read(
    as_bytes: bool,
) -> None:
    # Two events, then 7 lines of one byte: 7 + 6 * 49 = 301.
    feed, finish = _reader(300, as_bytes)
    assert feed(b"data: a\n\ndata: b\n\n" + b"data: z\n" * 7) == ["a", "b"]
    with pytest.raises(ResponseTooLargeError):
        feed(b"")
    with pytest.raises(ResponseTooLargeError):
        finish()


@pytest.mark.parametrize("end", [b"\n", b"\r"], ids=["lf", "cr"])
def test_the_read_whose_line_passes_the_limit_raises(end: bytes) -> None:
    decoder = SseDecoder(100)
    assert decoder.feed_data(b"data: " + b"a" * 40 + end) == []
    with pytest.raises(ResponseTooLargeError):
        decoder.feed_data(b"data: " + b"b" * 40 + end)  # 80 + 49 = 129


@pytest.mark.parametrize("end", [b"\n", b"\r"], ids=["lf", "cr"])
def test_an_event_of_one_line_leaves_nothing_counted_for_the_next(end: bytes) -> None:
    # Two lines of one byte cost 2 + 49: they pass a limit of 100 whatever came before.
    decoder = SseDecoder(100)
    assert decoder.feed_bytes(b"data: " + b"a" * 60 + end) == []
    assert decoder.feed_bytes(b"\n\n") == [b"a" * 60]  # (after CR, one blank line)
    assert decoder.feed_bytes(b"data: b\n") == []
    assert decoder.feed_bytes(b"data: c\n") == []
    assert decoder.feed_bytes(b"\n") == [b"b\nc"]

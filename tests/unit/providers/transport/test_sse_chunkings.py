"""The SSE decoder against a literal reading of the WHATWG event-stream rules, fed in many cuts.

``SseDecoder`` has fast paths (a read of one whole event, a read of many cut on
``\\n\\ndata: ``, a read with no CR) beside its general line loop. Whatever the cuts and
whichever of ``feed``, ``feed_data`` and ``feed_bytes`` reads each piece, every read must hand
over exactly the events whose closing byte it holds, as the reference below does one byte at
a time."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from functools import cache
from itertools import cycle, pairwise

import pytest

from providers.transport.sse import ServerSentEvent, SseDecoder

# (data as bytes, event name, last id, retry), and the stream offset of the byte closing it.
Event = tuple[bytes, str, str | None, int | None]
_BOM = b"\xef\xbb\xbf"
_ENDS = (b"\n", b"\r", b"\r\n")
_LINE_END = re.compile(rb"\r\n|\r|\n")
_BLANK_LINE_END = re.compile(rb"(?:\r\n|\r|\n){2}")


class _Reference:
    """The spec read literally, one byte at a time (plus the decoder's one deviation: at end of
    stream the unfinished line is read and a pending event dispatched)."""

    def __init__(self) -> None:
        self.line = bytearray()
        self.first = True
        self.after_cr = False
        self.data: list[bytes] = []
        self.event = ""
        self.last_id: str | None = None
        self.retry: int | None = None
        self.out: list[tuple[int, Event]] = []

    def run(self, stream: bytes) -> list[tuple[int, Event]]:
        for offset, byte in enumerate(stream):
            if self.after_cr:
                self.after_cr = False
                if byte == 0x0A:
                    continue
            if byte in (0x0A, 0x0D):
                self.after_cr = byte == 0x0D
                self.end_line(offset)
            else:
                self.line.append(byte)
        if self.line:
            self.end_line(len(stream))
        self.dispatch(len(stream))
        return self.out

    def end_line(self, offset: int) -> None:
        line = bytes(self.line)
        self.line.clear()
        if self.first:
            self.first = False
            line = line.removeprefix(_BOM)
        if not line:
            self.dispatch(offset)
        elif not line.startswith(b":"):
            name, _, value = line.partition(b":")
            value = value.removeprefix(b" ")
            if name == b"data":
                self.data.append(value)
            elif name == b"event":
                self.event = value.decode("utf-8", "replace")
            elif name == b"id" and b"\0" not in value:
                self.last_id = value.decode("utf-8", "replace")
            elif name == b"retry" and value and all(48 <= c <= 57 for c in value):
                self.retry = int(value)

    def dispatch(self, offset: int) -> None:
        if self.data:
            raw = b"\n".join(self.data)
            self.out.append((offset, (raw, self.event or "message", self.last_id, self.retry)))
        self.data = []
        self.event = ""


def _event(n: int) -> bytes:
    return b'data: {"i":%d,"text":"\xc3\xa9\xe2\x80\xa8%s"}\n\n' % (n, b"w" * (n % 7))


_ODD = [
    b": keep-alive\n\n",
    b"retry: 1500\nid: 1\n",
    b"event: error\ndata: boom\n\n",
    b"data: first\ndata: second\ndata: third\n\n",
    b"data:nospace\n\ndata:  two\n\ndata: \n\ndata:\n\ndata\n\n",
    b"event: named\n\n",
    b"id: 2\x003\nretry: 1x\nid: 7\nretry: 20\nfoo: bar\n",
    b"data: a\n\n\n\ndata: b\n: between\ndata: c\n\n",
    b"event\ndata: x\xffy\n\nevent: \ndata: e\n\n",
    b"data: data: \n\ndata: \n\n",
    b"\xef\xbb\xbfdata: bom\n\ndata: \xef\xbb\xbf\n\nfoo: 99\nretryx: 98\n",
]

# Runs of one-line events (what every server sends) with every other shape between them, so
# a read of many events has its cuts, its multi-line pieces and its unfinished tail anywhere.
_LF = b"".join(b"".join(_event(i * 3 + j) for j in range(3)) + odd for i, odd in enumerate(_ODD))
_LF += b"data: [DONE]\n\ndata: last, unended"
_LINES = _LF.split(b"\n")
# Events longer than a read of many is searched for cuts, one-line and not.
_LONG = b"".join(b"data: " + bytes([97 + i]) * (300 + 97 * i) + b"\n\n" for i in range(6))
_LONG += b"data: " + b"q" * 700 + b"\ndata: short\n\n" + _LF[:600] + b"\n\ndata: " + b"r" * 600
STREAMS = {
    "lf": _LF,
    "crlf": _LF.replace(b"\n", b"\r\n"),
    "cr": _LF.replace(b"\n", b"\r"),
    "bom": _BOM + _LF,
    "long": _LONG,
    # (Never CR then LF as two line ends: that is one.)
    "mixed": b"".join(line + end for line, end in zip(_LINES[:-1], cycle(_ENDS))) + _LINES[-1],
}


@cache
def _expected(stream: str) -> list[tuple[int, Event]]:
    return _Reference().run(STREAMS[stream])


@cache
def _projected(stream: str, mode: str) -> tuple[list[int], list[object]]:
    """The reference's events as ``mode`` hands them over, and the offsets closing them."""
    offsets: list[int] = []
    events: list[object] = []
    for offset, (raw, name, last_id, retry) in _expected(stream):
        offsets.append(offset)
        text = raw.decode("utf-8", "replace")
        event = ServerSentEvent(text, name, last_id, retry)
        events.append(raw if mode == "b" else text if mode == "t" else event)
    return offsets, events


def _check(stream: str, cuts: Sequence[int], modes: str) -> None:
    """Feed ``stream`` cut at ``cuts``, the i-th read by mode ``modes[i % len]`` (b: feed_bytes,
    t: feed_data, e: feed), and compare each read's events with the reference's."""
    body = STREAMS[stream]
    decoder = SseDecoder()
    feeds = {"b": decoder.feed_bytes, "t": decoder.feed_data, "e": decoder.feed}
    finishes = {"b": decoder.finish_bytes, "t": decoder.finish_data, "e": decoder.finish}
    bounds = [0, *cuts, len(body)]
    for i, (start, end) in enumerate(pairwise(bounds)):
        offsets, events = _projected(stream, modes[i % len(modes)])
        want = events[bisect_left(offsets, start) : bisect_left(offsets, end)]
        assert feeds[modes[i % len(modes)]](body[start:end]) == want, (stream, cuts, i)
    mode = modes[(len(bounds) - 1) % len(modes)]
    offsets, events = _projected(stream, mode)
    assert finishes[mode]() == events[bisect_left(offsets, len(body)) :]


@pytest.mark.parametrize(
    ("stream", "modes"),
    [("lf", "b"), ("lf", "et"), ("bom", "b"), ("bom", "te"), ("mixed", "bt"), ("crlf", "eb")],
)
def test_any_one_cut_gives_the_reference_events_read_by_read(stream: str, modes: str) -> None:
    for cut in range(len(STREAMS[stream]) + 1):
        _check(stream, [cut], modes)


@pytest.mark.parametrize("step", [1, 2, 3, 64, 511, 512, 513, 700, 100_000])
@pytest.mark.parametrize("modes", ["b", "t", "e", "bte"])
@pytest.mark.parametrize("stream", sorted(STREAMS))
def test_reads_of_any_fixed_size_give_the_reference_events(
    stream: str, modes: str, step: int
) -> None:
    cuts = list(range(step, len(STREAMS[stream]), step))
    _check(stream, cuts, modes)


@pytest.mark.parametrize("modes", ["b", "t", "e", "be", "eb"])
@pytest.mark.parametrize("at", ["lines", "events"])
@pytest.mark.parametrize("stream", sorted(STREAMS))
def test_a_read_per_line_or_per_event_gives_the_reference_events(
    stream: str, at: str, modes: str
) -> None:
    ends = _LINE_END if at == "lines" else _BLANK_LINE_END
    _check(stream, [match.end() for match in ends.finditer(STREAMS[stream])], modes)


@pytest.mark.parametrize("modes", ["b", "te"])
@pytest.mark.parametrize("stream", ["crlf", "bom", "mixed"])
def test_empty_reads_anywhere_change_nothing(stream: str, modes: str) -> None:
    """Even between a CR and the LF completing it, or within a BOM."""
    _check(stream, sorted([*range(len(STREAMS[stream])), *range(len(STREAMS[stream]))]), modes)


def test_the_reference_reads_the_stream_as_documented() -> None:
    """The reference itself, on the shapes that matter, so a wrong reference cannot hide a bug."""
    events = [event for _, event in _expected("bom")]
    assert events[0] == (b'{"i":0,"text":"\xc3\xa9\xe2\x80\xa8"}', "message", None, None)
    odd = [event for event in events if not event[0].startswith(b'{"i"')]
    assert odd == [
        (b"boom", "error", "1", 1500),
        (b"first\nsecond\nthird", "message", "1", 1500),
        (b"nospace", "message", "1", 1500),
        (b" two", "message", "1", 1500),
        (b"", "message", "1", 1500),
        (b"", "message", "1", 1500),
        (b"", "message", "1", 1500),
        (b"a", "message", "7", 20),
        (b"b\nc", "message", "7", 20),
        (b"x\xffy", "message", "7", 20),
        (b"e", "message", "7", 20),
        (b"data: ", "message", "7", 20),
        (b"", "message", "7", 20),
        (b"\xef\xbb\xbf", "message", "7", 20),
        (b"[DONE]", "message", "7", 20),
        (b"last, unended", "message", "7", 20),
    ]
    assert len(events) - len(odd) == 3 * len(_ODD)
    for name in ("lf", "crlf", "cr", "mixed"):
        assert [event for _, event in _expected(name)] == events


@pytest.mark.parametrize(
    "read",
    [b"data: boom\n\n", b"data: boom\n\n" + b"\n" * 600, b"data: boom\n\n" + _LF[:600]],
    ids=["one-event", "long", "many-events"],
)
def test_a_name_ends_with_its_event_whatever_read_closes_it(read: bytes) -> None:
    decoder = SseDecoder()
    assert decoder.feed_bytes(b"event: error\n") == []
    assert decoder.feed_bytes(read)[0] == b"boom"
    decoder.feed_bytes(b"\n\n")
    assert [event.event for event in decoder.feed(b"data: next\n\n")] == ["message"]
    assert decoder.feed_bytes(_LF[:600] + b"\n\nevent: error\ndata: boom\n\n")[-1] == b"boom"
    assert [event.event for event in decoder.feed(b"data: next\n\n")] == ["message"]


def test_a_read_of_one_whole_event_joins_what_earlier_reads_left_open() -> None:
    decoder = SseDecoder()
    assert decoder.feed_bytes(b"data: a\n") == []
    assert decoder.feed_bytes(b"data: b\n\n") == [b"a\nb"]
    assert decoder.feed_bytes(b"data: q") == []
    assert decoder.feed_bytes(b"data: r\n\n") == [b"qdata: r"]


@pytest.mark.parametrize("low", [b"\t", b"\x01", b"\x00"])
def test_a_byte_below_line_feed_after_a_read_ending_in_cr_starts_the_next_line(low: bytes) -> None:
    decoder = SseDecoder()
    assert decoder.feed_data(b"data: a\r") == []
    assert decoder.feed_data(low + b"data: b\r\r") == ["a"]


def test_only_a_space_after_the_colon_is_dropped() -> None:
    decoder = SseDecoder()
    assert decoder.feed_data(b"data:\tx\n\ndata:\x01y\r\r") == ["\tx", "\x01y"]


def test_a_bom_after_finish_is_not_stripped() -> None:
    decoder = SseDecoder()
    assert decoder.feed_data(b"\xef") == []
    assert decoder.finish_data() == []
    assert decoder.feed_data(b"\xef\xbb\xbfdata: x\n\ndata: y\n\n") == ["y"]


def test_fields_without_a_space_after_the_colon() -> None:
    decoder = SseDecoder()
    events = decoder.feed(b"event:named\nid:3\nretry:7\ndata:x\n\n")
    assert events == [ServerSentEvent("x", "named", "3", 7)]


def test_a_read_ending_in_bytes_below_line_feed_is_no_event() -> None:
    decoder = SseDecoder()
    assert decoder.feed_bytes(b"data: x\t\t") == []
    assert decoder.feed_bytes(b"data: y\n\x01") == []
    assert decoder.feed_bytes(b"\n\n") == [b"x\t\tdata: y"]

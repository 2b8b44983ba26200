"""Chunking invariance of the SSE decoder (STYLE.md guidelines 3, 4 and 15).

For random event streams (arbitrary unicode in data, including U+2028/U+2029/U+0085, comments,
LF/CR/CRLF line ends, ids, event names, an optional BOM, an optional missing final blank line)
cut into random feeds, the decoded events equal those of the whole stream, and both equal the
events the stream was built from.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from providers.transport.sse import ServerSentEvent, SseDecoder

SETTINGS = settings(max_examples=200, deadline=None)

# Any character except the three that end lines; surrogates cannot be encoded.
_LINE_CHARS = st.characters(exclude_categories=["Cs"], exclude_characters="\r\n")
_TRICKY = st.sampled_from(
    ["\u2028", "\u2029", "\u0085", "\ufeff", "é", "€", "😀", ":", " ", "\x00"]
)
_VALUE = st.lists(st.one_of(_LINE_CHARS, _TRICKY), max_size=12).map("".join)
_NAME = st.text(
    alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\r\n\x00"),
    max_size=6,
)
_ENDING = st.sampled_from(["\n", "\r", "\r\n"])


@dataclass
class Spec:
    data: list[str]
    event: str | None
    id: str | None
    comments: list[str]


_SPEC = st.builds(
    Spec,
    data=st.lists(_VALUE, max_size=4),
    event=st.none() | _NAME,
    id=st.none() | _NAME,
    comments=st.lists(_VALUE, max_size=2),
)


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, list[ServerSentEvent]]:
    specs = draw(st.lists(_SPEC, max_size=6))
    lines: list[str] = []
    expected: list[ServerSentEvent] = []
    last_id: str | None = None
    for spec in specs:
        fields: list[str] = []
        for value in spec.data:
            # Half the time without the optional space (a value starting with a space then
            # needs the space, or the decoder would strip the value's own).
            space = " " if value.startswith(" ") or draw(st.booleans()) else ""
            fields.append(f"data:{space}{value}")
        others = [f":{c}" for c in spec.comments]
        if spec.event is not None:
            others.append(f"event: {spec.event}")
        if spec.id is not None:
            others.append(f"id: {spec.id}")
            last_id = spec.id
        for other in others:  # anywhere among the data lines, which keep their order
            fields.insert(draw(st.integers(0, len(fields))), other)
        lines.extend(fields)
        lines.append("")  # the blank line dispatching the event
        if spec.data:
            expected.append(ServerSentEvent("\n".join(spec.data), spec.event or "message", last_id))
    drop_last_blank: bool = draw(st.booleans())
    if lines and drop_last_blank:
        lines.pop()  # no final blank line: the pending event is still dispatched at the end
    text_parts: list[str] = []
    previous = ""
    for line in lines:
        ending = draw(_ENDING)
        if line == "" and previous == "\r" and ending == "\n":
            ending = "\r\n"  # "\r" + "\n" would be one line end, merging the blank line away
        text_parts.append(line + ending)
        previous = ending
    drop_last_ending: bool = draw(st.booleans())
    if text_parts and drop_last_ending:
        text_parts[-1] = text_parts[-1].rstrip("\r\n")  # the very last line end is optional
        if text_parts[-1] == "" and lines[-1] == "":
            text_parts.pop()  # an unterminated empty line is no line at all
    payload = "".join(text_parts).encode()
    if draw(st.booleans()):
        payload = b"\xef\xbb\xbf" + payload
    return payload, expected


def decode(pieces: list[bytes]) -> list[ServerSentEvent]:
    decoder = SseDecoder()
    events: list[ServerSentEvent] = []
    for piece in pieces:
        events.extend(decoder.feed(piece))
    events.extend(decoder.finish())
    return events


def cut(payload: bytes, offsets: list[int]) -> list[bytes]:
    points = sorted({o for o in offsets if 0 < o < len(payload)})
    bounds = [0, *points, len(payload)]
    return [payload[a:b] for a, b in pairwise(bounds)]


@SETTINGS
@given(stream=streams(), data=st.data())
def test_any_cut_gives_the_events_of_the_whole(
    stream: tuple[bytes, list[ServerSentEvent]], data: st.DataObject
) -> None:
    payload, expected = stream
    offsets = data.draw(st.lists(st.integers(0, max(len(payload), 1)), max_size=20))
    whole = decode([payload])
    assert whole == expected
    assert decode(cut(payload, offsets)) == whole


@SETTINGS
@given(stream=streams())
def test_byte_by_byte_gives_the_events_of_the_whole(
    stream: tuple[bytes, list[ServerSentEvent]],
) -> None:
    payload, expected = stream
    assert decode([payload[i : i + 1] for i in range(len(payload))]) == expected


@SETTINGS
@given(stream=streams(), data=st.data())
def test_empty_feeds_change_nothing(
    stream: tuple[bytes, list[ServerSentEvent]], data: st.DataObject
) -> None:
    payload, expected = stream
    offsets = data.draw(st.lists(st.integers(0, max(len(payload), 1)), max_size=8))
    pieces = [p for piece in cut(payload, offsets) for p in (b"", piece)]
    assert decode(pieces) == expected

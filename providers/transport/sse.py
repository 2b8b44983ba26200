"""Incremental Server-Sent Events decoder working on bytes.

It follows the WHATWG event-stream rules and knows nothing about JSON or OpenAI:

* Lines end at CR, LF or CRLF only. JSON may carry U+2028, U+2029 and U+0085 unescaped, and vLLM
  and SGLang do send them; ``str.splitlines`` (and so httpx's ``aiter_lines``) splits on them
  and corrupts the payload. Splitting bytes on ``\\r``/``\\n`` cannot, since UTF-8 never uses
  those byte values inside a multi-byte character.
* UTF-8 is decoded once per complete event (never per network read), so a character split
  across reads is safe; ``feed_bytes`` hands the data over undecoded, for a reader whose JSON
  parser takes bytes (the chat client: no ``str`` per event at all).
* A CR at the very end of a read may be the first half of CRLF: the line is dispatched at once
  and a LF starting the next read is skipped.
* Work is linear: each byte is scanned a few times at most, by C code; only an unfinished line is
  buffered.
* ``feed_bytes`` (the chat client's path) has two shortcuts past the line loop for the shape
  every server sends, ``data: <json>\n\n``: a read that is one such event is one slice, and a
  read of many is cut on ``\n\ndata: ``, each piece without a LF being one event's data as it
  stands. Anything else in such a read (comments, other fields, several data lines, what a
  previous read left open) takes the line loop, in stream order, so the result is the same.

Deviation from the spec, on purpose: at end of stream a pending event (data lines without the
closing blank line, or a last line without a line end) is dispatched instead of discarded. A
server that closes right after its final ``data:`` line must not lose it.

What waits for its end (an unfinished line, the data lines of an unfinished event, each past the
first with what holding it costs: ``_LINE_COST``) is bounded by ``max_event_bytes`` (``Limits``):
past it, ``ResponseTooLargeError``. The checks are on lengths at hand, a few per read: a line
that ends within a read is no longer than it, so only a longer read has its lines measured.
"""

from __future__ import annotations

import re
from itertools import islice

from providers.abstractions.errors import ResponseTooLargeError
from providers.abstractions.limits import DEFAULT_LIMITS
from providers.abstractions.records import value_class

__all__ = ["ServerSentEvent", "SseDecoder"]

_LINE_END = re.compile(rb"\r\n|\r|\n")
_EVENTS, _TEXT, _BYTES = "events", "text", "bytes"  # what the decoder hands over (``_mode``)
_BOM = b"\xef\xbb\xbf"
_NEXT_DATA = b"\n\ndata: "  # where one event ends and the next (nearly always) begins
_WHOLE_EVENTS_MIN = 512  # bytes: shorter reads hold too few events to pay for the cut
_CUT_WITHIN = 512  # bytes: a read with no cut this early holds big or many-line events
_LINE_COST = 48  # a data line's bytes header and list slot: 10 M empty ones were 78 MB (#32.10)


@value_class()
class ServerSentEvent:
    """One dispatched event; ``event`` is ``"message"`` unless the server named it. Mutable: a
    frozen one costs about four times as much to make, per event."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SseDecoder:
    """``feed(bytes) -> events`` as bytes arrive, ``finish() -> events`` at end of stream."""

    __slots__ = (
        "_counted",
        "_data",
        "_event",
        "_failed",
        "_held",
        "_last_event_id",
        "_max",
        "_mode",
        "_partial",
        "_retry",
        "_skip_lf",
        "_started",
    )

    def __init__(self, max_event_bytes: int = DEFAULT_LIMITS.max_event_bytes) -> None:
        self._max = max_event_bytes
        self._failed = False  # past the limit, with events to hand over first
        self._held = 0  # characters in the data lines of a pending event of several lines
        self._counted = 0  # how many of those lines `_held` counts
        self._partial = bytearray()  # an unfinished line
        self._skip_lf = False  # the previous read ended with CR
        self._started = False  # a leading BOM has been handled
        self._data: list[bytes] = []  # the data lines of the pending event, undecoded
        self._event: str | None = None
        self._last_event_id: str | None = None
        self._retry: int | None = None
        self._mode = _EVENTS  # what feed/finish (_EVENTS), *_data (_TEXT), *_bytes (_BYTES) give

    @property
    def last_event_id(self) -> str | None:
        """The last ``id:`` seen, for a client that wants to resume a stream."""
        return self._last_event_id

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events ``chunk`` completed, in order."""
        self._mode = _EVENTS
        return self._feed(chunk)  # type: ignore[return-value]

    def feed_data(self, chunk: bytes) -> list[str]:
        """Only the ``data`` of each event ``chunk`` completed: for a reader that needs nothing
        else, without an object per event. Names, ids and ``retry`` are still tracked, so
        ``feed``, ``feed_data`` and ``feed_bytes`` may be mixed on one stream."""
        self._mode = _TEXT
        return self._feed(chunk)  # type: ignore[return-value]

    def feed_bytes(self, chunk: bytes) -> list[bytes]:
        """``feed_data`` without the decoding: each event's data as the UTF-8 bytes that came,
        for a JSON parser that reads bytes (``orjson``) and so never needs a ``str`` of it."""
        self._mode = _BYTES
        return self._feed(chunk)  # type: ignore[return-value]

    def _feed(self, chunk: bytes) -> list[ServerSentEvent | str | bytes]:
        """Hot path: every network read of every stream passes here, so line splitting and
        field dispatch stay in one frame."""
        events: list[ServerSentEvent | str | bytes] = []
        if self._failed:
            raise self._too_large()
        try:
            if not chunk:
                return events
            if self._skip_lf:
                self._skip_lf = False
                if chunk[0] == 0x0A:
                    chunk = chunk[1:]
                    if not chunk:
                        return events
            if not self._started:
                # A UTF-8 BOM may open the stream, possibly split across reads: hold the first
                # bytes until they either complete one or cannot.
                self._partial.extend(chunk)
                if len(self._partial) < 3 and _BOM.startswith(self._partial):
                    return events
                self._started = True
                chunk = bytes(self._partial)
                self._partial.clear()
                if chunk.startswith(_BOM):
                    chunk = chunk[3:]
                    if not chunk:
                        return events
            partial = self._partial
            # (CR as an int: `bytes in bytes` first tries its operand as an int and builds and
            # drops a TypeError, which costs 0.4 us; an int is one memchr.)
            if 13 not in chunk and len(chunk) <= self._max:
                if self._mode is _BYTES:
                    if len(chunk) >= _WHOLE_EVENTS_MIN:
                        # Cut only a stream whose first event after a cut is one line: a
                        # stream's events have one shape, and pieces of several lines cost
                        # more cut than read line by line.
                        cut = chunk.find(_NEXT_DATA, 0, _CUT_WITHIN)
                        if cut != -1 and chunk.startswith(b"\n\n", chunk.find(10, cut + 8)):
                            return self._whole_events(chunk, events)
                    if (
                        chunk[-2:] == b"\n\n"
                        and not partial
                        and not self._data
                        and chunk[:6] == b"data: "
                    ):
                        value = chunk[6:-2]
                        if 10 not in value:
                            # One whole event of one data line: a server read at the pace of
                            # its tokens. (`_event` may name it; it is dispatched.)
                            self._event = None
                            events.append(value)
                            return events
                # The common case (every server here ends lines with LF): one C-level split, and
                # `data: ` lines (nearly all of them) and the blank lines ending events inline.
                # (A read longer than the limit takes the path below, which measures each line.)
                lines = chunk.split(b"\n")
                rest = lines.pop()
                if partial:
                    if not lines:
                        partial.extend(rest)
                        if len(partial) > self._max:
                            raise self._too_large()
                        return events
                    partial.extend(lines[0])
                    lines[0] = bytes(partial)
                    partial.clear()
                    if len(lines[0]) > self._max:
                        raise self._too_large()
                data = self._data
                mode = self._mode
                for line in lines:
                    if line[:6] == b"data: ":  # (a slice and ==: a third of startswith's cost)
                        data.append(line[6:])
                    elif line:
                        self._line(line, events)
                    elif mode is _BYTES and len(data) == 1:  # _dispatch, inline: per event
                        events.append(data.pop())
                        self._event = None
                    else:
                        self._dispatch(events)
                if rest:  # (no limit check: partial is empty here and chunk within the limit)
                    partial.extend(rest)
                if len(data) > 1:
                    self._count(data)
                return events
            pos = 0
            for match in _LINE_END.finditer(chunk):
                end = match.start()
                if partial:
                    partial.extend(chunk[pos:end])
                    line = bytes(partial)
                    partial.clear()
                else:
                    line = chunk[pos:end]
                if len(line) > self._max:
                    raise self._too_large()
                self._line(line, events)
                pos = match.end()
            if chunk[-1] == 0x0D:
                self._skip_lf = True
            if pos < len(chunk):
                partial.extend(chunk[pos:])
                if len(partial) > self._max:
                    raise self._too_large()
            if len(self._data) > 1:
                self._count(self._data)
            return events
        except ResponseTooLargeError:
            # What this read completed before the oversized line or event is the
            # caller's: it is handed over now, and the next call raises.
            return self._overflowed(events)

    def _whole_events(
        self, chunk: bytes, events: list[ServerSentEvent | str | bytes]
    ) -> list[ServerSentEvent | str | bytes]:
        """Hot path of ``feed_bytes`` for a read of many events (no CR, within the limit),
        cut where a blank line is followed by a ``data: `` line: after a blank line the decoder
        holds nothing (no unfinished line, no data, no name), so a piece between two cuts that
        has no LF is the data of one whole event, as it stands: no per-line work, no copy. The
        head of the read (it may end what the previous read left open), pieces of several
        lines and the tail (the event this read leaves open) take the line loop, in order.

        (The 8-byte separator rather than the blank line alone: ``bytes.split`` searches a
        longer one faster, measured 20 vs 38 us per 32 KiB read.)"""
        pieces = chunk.split(_NEXT_DATA)
        tail = pieces.pop()
        lines = pieces[0].split(b"\n")
        lines.append(b"")  # (the blank line the cut ends with)
        self._lines(lines, events)
        append = events.append
        for piece in islice(pieces, 1, None):
            if 10 not in piece:  # (LF: an int is found by memchr, b"\\n" is 9x slower)
                append(piece)
            else:
                lines = piece.split(b"\n")
                lines[0] = b"data: " + lines[0]
                lines.append(b"")
                self._lines(lines, events)
        lines = tail.split(b"\n")
        rest = lines.pop()
        if lines:
            lines[0] = b"data: " + lines[0]
            self._lines(lines, events)
            if rest:
                self._partial.extend(rest)
        else:
            self._partial.extend(b"data: " + rest)
        # (No _count: what the tail leaves pending lies within this read, which is within the
        # limit; the next read's count takes those lines in, once.)
        return events

    def _lines(self, lines: list[bytes], events: list[ServerSentEvent | str | bytes]) -> None:
        """Hot path: whole lines of a ``feed_bytes`` read with no CR and within the limit; the
        first one ends what ``_partial`` holds."""
        partial = self._partial
        if partial:
            partial.extend(lines[0])
            lines[0] = bytes(partial)
            partial.clear()
            if len(lines[0]) > self._max:
                raise self._too_large()
        data = self._data
        for line in lines:
            if line[:6] == b"data: ":
                data.append(line[6:])
            elif line:
                self._line(line, events)
            elif len(data) == 1:  # _dispatch, inline (this is feed_bytes: no decoding)
                events.append(data.pop())
                self._event = None
            else:
                self._dispatch(events)

    def _count(self, data: list[bytes]) -> None:
        """Add the data lines not yet counted to the pending event's size, each once (linear)."""
        counted = self._counted
        self._held += sum(map(len, data[counted:])) + (len(data) - counted) * (1 + _LINE_COST)
        self._counted = len(data)
        if self._held - 1 - _LINE_COST > self._max:  # (the first line costs neither)
            raise self._too_large()

    def _overflowed(
        self, events: list[ServerSentEvent | str | bytes]
    ) -> list[ServerSentEvent | str | bytes]:
        """Drop what was held; raise now if nothing came before, else on the next call."""
        self._partial.clear()
        self._data.clear()
        self._held = self._counted = 0
        if not events:
            raise self._too_large()
        self._failed = True
        return events

    def _too_large(self) -> ResponseTooLargeError:
        return ResponseTooLargeError(
            f"an SSE line or event passed limits.max_event_bytes ({self._max} bytes)",
            limit="max_event_bytes",
        )

    def finish(self) -> list[ServerSentEvent]:
        """Flush at end of stream: the unfinished line, then any undispatched event."""
        self._mode = _EVENTS
        return self._finish()  # type: ignore[return-value]

    def finish_data(self) -> list[str]:
        """``finish`` for a ``feed_data`` reader: the data of the events it flushes."""
        self._mode = _TEXT
        return self._finish()  # type: ignore[return-value]

    def finish_bytes(self) -> list[bytes]:
        """``finish`` for a ``feed_bytes`` reader: the undecoded data of the events it flushes."""
        self._mode = _BYTES
        return self._finish()  # type: ignore[return-value]

    def _finish(self) -> list[ServerSentEvent | str | bytes]:
        if self._failed:
            raise self._too_large()
        events: list[ServerSentEvent | str | bytes] = []
        if self._partial:
            # (Unstarted, it holds under three bytes of a BOM: a field name nobody reads.)
            line = bytes(self._partial)
            self._partial.clear()
            self._line(line, events)
        self._started = True
        self._dispatch(events)
        return events

    def _line(self, line: bytes, events: list[ServerSentEvent | str | bytes]) -> None:
        if not line:
            self._dispatch(events)
            return
        if line[0] == 0x3A:  # ":" comment (llama.cpp and vLLM keepalives)
            return
        colon = line.find(b":")
        if colon == -1:
            name, value = line, b""
        else:
            name = line[:colon]
            value = line[colon + 2 :] if line[colon + 1 : colon + 2] == b" " else line[colon + 1 :]
        if name == b"data":
            self._data.append(value)
        elif name == b"event":
            self._event = value.decode("utf-8", "replace")
        elif name == b"id":
            if 0 not in value:  # (NUL as an int: see _feed)
                self._last_event_id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            self._retry = int(value)
        # any other field name is ignored, as the spec says

    def _dispatch(self, events: list[ServerSentEvent | str | bytes]) -> None:
        data = self._data
        if data:
            raw = data[0] if len(data) == 1 else b"\n".join(data)
            if len(raw) + (len(data) - 1) * _LINE_COST > self._max:  # (all in this read)
                raise self._too_large()
            mode = self._mode
            if mode is _BYTES:
                events.append(raw)
            else:
                # (Decoded whole: the lines are joined by LF, which no UTF-8 sequence contains,
                # so this is the text of each line decoded on its own, joined.)
                text = raw.decode("utf-8", "replace")
                if mode is _EVENTS:
                    events.append(
                        ServerSentEvent(
                            text, self._event or "message", self._last_event_id, self._retry
                        )
                    )
                else:
                    events.append(text)
            data.clear()
            self._held = self._counted = 0
        self._event = None

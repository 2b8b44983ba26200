"""The bytes-level SSE decoder, checked against the WHATWG event-stream rules (issue 2 item 3,
research/wire.md §2 and §7.1)."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from providers.abstractions.errors import ResponseTooLargeError
from providers.transport.sse import ServerSentEvent, SseDecoder


def decode(*feeds: bytes) -> list[ServerSentEvent]:
    decoder = SseDecoder()
    events: list[ServerSentEvent] = []
    for feed in feeds:
        events.extend(decoder.feed(feed))
    events.extend(decoder.finish())
    return events


def datas(events: Iterable[ServerSentEvent]) -> list[str]:
    return [event.data for event in events]


def test_plain_events_with_lf() -> None:
    events = decode(b'data: {"a":1}\n\ndata: [DONE]\n\n')
    assert datas(events) == ['{"a":1}', "[DONE]"]
    assert all(event.event == "message" for event in events)


def test_feed_returns_an_event_as_soon_as_its_blank_line_arrives() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"data: one\n") == []
    assert datas(decoder.feed(b"\n")) == ["one"]
    assert decoder.finish() == []


def test_multibyte_character_split_across_feeds() -> None:
    payload = "data: h\u00e9llo \u20ac \U0001f600\n\n".encode()
    euro = payload.index("\u20ac".encode())
    emoji = payload.index("\U0001f600".encode())
    events = decode(payload[: euro + 1], payload[euro + 1 : emoji + 2], payload[emoji + 2 :])
    assert datas(events) == ["h\u00e9llo \u20ac \U0001f600"]


def test_every_byte_fed_alone_gives_the_same_events() -> None:
    payload = "data: \u00e9\u2028x\r\n\r\ndata: y\r\rdata: z\n\n".encode()
    assert datas(decode(*[payload[i : i + 1] for i in range(len(payload))])) == [
        "\u00e9\u2028x",
        "y",
        "z",
    ]


def test_cr_at_end_of_feed_then_lf_at_start_of_next_is_one_line_end() -> None:
    # One line end, not two: the event is not dispatched after "data: a" and the following
    # "data: b" line joins it.
    events = decode(b"data: a\r", b"\ndata: b\r\n\r\n")
    assert datas(events) == ["a\nb"]


def test_cr_lf_split_between_feeds_then_blank_line() -> None:
    events = decode(b"data: a\r", b"\n", b"\r", b"\n")
    assert datas(events) == ["a"]


def test_cr_only_line_endings() -> None:
    events = decode(b"event: x\rdata: 1\rdata: 2\r\rdata: 3\r\r")
    assert [(e.event, e.data) for e in events] == [("x", "1\n2"), ("message", "3")]


def test_crlf_line_endings() -> None:
    events = decode(b"data: 1\r\n\r\ndata: 2\r\n\r\n")
    assert datas(events) == ["1", "2"]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])
def test_unicode_line_separators_inside_data_are_not_line_ends(separator: str) -> None:
    data = '{"content":"a' + separator + 'b"}'
    events = decode(f"data: {data}\n\n".encode())
    assert datas(events) == [data]


def test_unicode_separator_split_across_feeds() -> None:
    payload = 'data: {"c":"x\u2028y"}\n\n'.encode()
    cut = payload.index("\u2028".encode()) + 1
    assert datas(decode(payload[:cut], payload[cut:])) == ['{"c":"x\u2028y"}']


def test_comments_are_ignored() -> None:
    events = decode(b":\n\n: keep-alive\n\ndata: a\n: in the middle\ndata: b\n\n")
    assert datas(events) == ["a\nb"]


def test_comment_only_stream_dispatches_nothing() -> None:
    assert decode(b": ping\n\n:\n\n") == []


def test_event_field_names_the_event_and_is_reset_after_dispatch() -> None:
    events = decode(b"event: error\ndata: boom\n\ndata: next\n\n")
    assert [(e.event, e.data) for e in events] == [("error", "boom"), ("message", "next")]


def test_event_without_data_is_not_dispatched_and_its_type_does_not_leak() -> None:
    events = decode(b"event: ping\n\ndata: x\n\n")
    assert [(e.event, e.data) for e in events] == [("message", "x")]


def test_multiline_data_joined_with_lf() -> None:
    events = decode(b"data: first\ndata: second\ndata: third\n\n")
    assert datas(events) == ["first\nsecond\nthird"]


def test_data_without_space_after_colon() -> None:
    assert datas(decode(b"data:{}\n\n")) == ["{}"]


def test_only_one_leading_space_is_removed() -> None:
    assert datas(decode(b"data:  two spaces\n\n")) == [" two spaces"]


def test_id_and_retry_fields() -> None:
    events = decode(b"id: 7\nretry: 1500\ndata: a\n\ndata: b\n\n")
    assert [(e.data, e.id, e.retry) for e in events] == [("a", "7", 1500), ("b", "7", 1500)]


def test_last_event_id_is_exposed_and_persists() -> None:
    decoder = SseDecoder()
    decoder.feed(b"id: abc\ndata: 1\n\n")
    decoder.feed(b"data: 2\n\n")
    assert decoder.last_event_id == "abc"


def test_id_containing_nul_is_ignored() -> None:
    events = decode(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n")
    assert [e.id for e in events] == ["1", "1"]


def test_retry_that_is_not_digits_is_ignored() -> None:
    events = decode(b"retry: 10\ndata: a\n\nretry: soon\ndata: b\n\n")
    assert [e.retry for e in events] == [10, 10]


def test_utf8_bom_at_start_is_stripped() -> None:
    assert datas(decode(b"\xef\xbb\xbfdata: x\n\n")) == ["x"]


def test_utf8_bom_split_over_feeds_is_stripped() -> None:
    assert datas(decode(b"\xef", b"\xbb", b"\xbfdata: x\n\n")) == ["x"]
    assert datas(decode(b"\xef\xbb", b"\xbf", b"data: y\n\n")) == ["y"]


def test_only_the_first_bom_is_stripped() -> None:
    # A second BOM makes the first line's field name "\ufeffdata", an unknown field: ignored.
    assert datas(decode(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n")) == ["y"]


def test_bom_bytes_later_in_the_stream_are_kept() -> None:
    assert datas(decode(b"data: a\xef\xbb\xbfb\n\n")) == ["a\ufeffb"]


def test_end_of_stream_without_blank_line_dispatches_pending_event() -> None:
    assert datas(decode(b"data: last\n")) == ["last"]


def test_end_of_stream_without_any_line_end_dispatches_pending_event() -> None:
    assert datas(decode(b'data: {"error":{"code":500}}')) == ['{"error":{"code":500}}']


def test_end_of_stream_after_trailing_cr() -> None:
    assert datas(decode(b"data: last\r")) == ["last"]


def test_empty_data_lines() -> None:
    events = decode(b"data:\n\ndata\n\ndata: a\ndata:\ndata: b\n\n")
    assert datas(events) == ["", "", "a\n\nb"]


def test_field_without_colon_uses_whole_line_as_name() -> None:
    # "data" alone is a data field with an empty value; "event" alone resets the type to default.
    events = decode(b"event\ndata: a\ndata\n\n")
    assert [(e.event, e.data) for e in events] == [("message", "a\n")]


def test_unknown_fields_are_ignored() -> None:
    assert datas(decode(b"foo: bar\ndata: a\nDATA: b\n\n")) == ["a"]


def test_done_marker_is_just_data() -> None:
    events = decode(b"data: [DONE]\n\n")
    assert events == [ServerSentEvent("[DONE]")]


def test_empty_feed_is_harmless() -> None:
    assert datas(decode(b"", b"data: a\n", b"", b"\n", b"")) == ["a"]


def test_invalid_utf8_is_replaced_not_raised() -> None:
    assert datas(decode(b"data: a\xffb\n\n")) == ["a\ufffdb"]


def test_finish_twice_gives_nothing_more() -> None:
    decoder = SseDecoder()
    decoder.feed(b"data: a")
    assert datas(decoder.finish()) == ["a"]
    assert decoder.finish() == []


# --- max_event_bytes (issue 20) ---------------------------------------------------------------


def _limited(limit: int, feeds: Iterable[bytes]) -> list[str]:
    decoder = SseDecoder(limit)
    out: list[str] = []
    for feed in feeds:
        out.extend(decoder.feed_data(feed))
    return out + decoder.finish_data()


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("step", [1, 7, 1000])
def test_lines_and_events_up_to_the_limit_pass_in_any_cuts(end: bytes, step: int) -> None:
    line = b"data: " + b"x" * 94  # 100 bytes: the limit
    # (two lines of 25: 51 joined, and 48 for holding the second, ``sse._LINE_COST``: 99)
    body = (line + end) * 1 + end + (b"data: " + b"y" * 25 + end) * 2 + end
    pieces = [body[i : i + step] for i in range(0, len(body), step)]
    assert _limited(100, pieces) == ["x" * 94, "y" * 25 + "\n" + "y" * 25]


@pytest.mark.parametrize("end", [b"\n", b"\r\n"])
@pytest.mark.parametrize("step", [1, 7, 1000])
def test_a_line_past_the_limit_raises_whatever_the_cuts(end: bytes, step: int) -> None:
    body = b"data: " + b"x" * 95 + end + end
    pieces = [body[i : i + step] for i in range(0, len(body), step)]
    with pytest.raises(ResponseTooLargeError) as caught:
        _limited(100, pieces)
    assert caught.value.limit == "max_event_bytes"


@pytest.mark.parametrize("step", [1, 7, 1000])
def test_an_event_of_short_lines_past_the_limit_raises(step: int) -> None:
    body = (b"data: " + b"y" * 9 + b"\n") * 11 + b"\n"  # 11 lines of 10: 109 with the joins
    pieces = [body[i : i + step] for i in range(0, len(body), step)]
    with pytest.raises(ResponseTooLargeError):
        _limited(100, pieces)


def test_a_line_that_never_ends_raises_once_past_the_limit() -> None:
    decoder = SseDecoder(100)
    decoder.feed_data(b"data: " + b"x" * 90)
    with pytest.raises(ResponseTooLargeError):
        decoder.feed_data(b"x" * 10)


def test_many_events_each_under_the_limit_pass() -> None:
    body = (b"data: " + b"z" * 50 + b"\n\n") * 100
    assert _limited(100, [body]) == ["z" * 50] * 100


@pytest.mark.parametrize("ending", [b"\n\n", b""], ids=["ended", "unended"])
@pytest.mark.parametrize("crlf", [False, True])
def test_events_before_an_oversized_line_in_the_same_read_are_handed_over(
    ending: bytes, crlf: bool
) -> None:
    read = b"data: a\n\ndata: b\n\ndata: " + b"x" * 200 + ending
    if crlf:
        read = read.replace(b"\n", b"\r\n")
    decoder = SseDecoder(100)
    assert decoder.feed_data(read) == ["a", "b"]
    with pytest.raises(ResponseTooLargeError):
        decoder.feed_data(b"data: c\n\n")
    with pytest.raises(ResponseTooLargeError):
        decoder.finish_data()


@pytest.mark.parametrize("step", [1, 7, 31, 10_000])
def test_the_event_count_starts_over_with_each_event(step: int) -> None:
    # Each event alone fits a 200-byte limit: two lines of 75 (151 joined + 48 held, 199),
    # then three of 10 (32 + 96, 128). A count carried over from the big event into the
    # small one, read a few bytes at a time, would pass the limit.
    big = (b"data: " + b"a" * 75 + b"\n") * 2 + b"\n"
    small = (b"data: " + b"b" * 10 + b"\n") * 3 + b"\n"
    body = (big + small) * 3
    pieces = [body[i : i + step] for i in range(0, len(body), step)]
    assert _limited(200, pieces) == ["\n".join(["a" * 75] * 2), "\n".join(["b" * 10] * 3)] * 3


@pytest.mark.parametrize("step", [1, 7, 1000])
def test_a_later_event_past_the_limit_raises_after_the_earlier_ones(step: int) -> None:
    first = b"data: ok\n\n"
    second = (b"data: " + b"y" * 9 + b"\n") * 11 + b"\n"  # 109 with the joins
    body = first + second
    decoder = SseDecoder(100)
    seen: list[str] = []
    with pytest.raises(ResponseTooLargeError):
        for i in range(0, len(body), step):
            seen.extend(decoder.feed_data(body[i : i + step]))
        decoder.finish_data()
    assert seen == ["ok"]


@pytest.mark.parametrize("step", [1, 2, 3, 100])
@pytest.mark.parametrize("low", [b"\t", b"\x01", b"\x0b", b"\x0c"])
def test_a_byte_below_line_feed_before_the_line_end_is_data(step: int, low: bytes) -> None:
    body = b"data: x" + low + b"\n\ndata: y\n\n"
    pieces = [body[i : i + step] for i in range(0, len(body), step)]
    assert _limited(100, pieces) == ["x" + low.decode(), "y"]

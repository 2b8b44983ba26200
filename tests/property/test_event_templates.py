"""The event-template fast path (``providers.chat_completions.event_templates``, issue 21) against
the full path: an event recognised in its bytes must read exactly as its parsed chunk does.

Streams are written the way the servers write them (compact, with spaces, ASCII-escaped or not),
mostly the common chunk with another text (quotes, backslashes, escapes, any Unicode), and
between them the changes that must defeat the template: another ``created`` or id, a finish, a
value in a key that was null, keys in another order, a key name written with escapes, a decoy
copy of the key inside another value, text that is not a string.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from providers import ChatResponseUpdate, ChunkNormalizer, FunctionCallContent

_TEXTS = st.text(
    alphabet=st.characters(exclude_categories=["Cs"]) | st.sampled_from('"\\/\n\t\x00<{}'),
    min_size=1,
    max_size=12,
)


def _writer(style: int) -> Any:
    if style == 0:
        return orjson.dumps
    if style == 1:
        return lambda value: json.dumps(value).encode()  # spaces, ASCII escapes (Python servers)
    return lambda value: json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _chunk(text: Any, field: str, **change: Any) -> dict[str, Any]:
    delta: dict[str, Any] = {field: text}
    if field != "content":
        delta["content"] = None
    choice: dict[str, Any] = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}
    chunk = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 7,
        "model": "m",
        "choices": [choice],
        "usage": None,
    }
    for key, value in change.items():
        if key in ("finish_reason", "logprobs", "index"):
            choice[key] = value
        elif key == "role":
            delta["role"] = value
        else:
            chunk[key] = value
    return chunk


_CHANGES: list[dict[str, Any]] = [
    {"created": 8},
    {"id": "c2"},
    {"finish_reason": "stop"},
    {"logprobs": {"content": [{"token": "x"}]}},  # (a decoy copy of the key name)
    {"usage": {"prompt_tokens": 1}},
    {"role": "assistant"},
    {"index": 1},
    {"system_fingerprint": "fp"},
]


@st.composite
def _streams(draw: st.DrawFn) -> tuple[list[bytes], str]:
    field = draw(st.sampled_from(["content", "reasoning_content"]))
    write = _writer(draw(st.integers(0, 2)))
    events: list[bytes] = []
    for _ in range(draw(st.integers(1, 24))):
        kind = draw(st.integers(0, 9))
        text: Any = draw(_TEXTS)
        if kind <= 5:  # the common chunk, another text
            events.append(write(_chunk(text, field)))
        elif kind == 6:
            events.append(write(_chunk(text, field, **draw(st.sampled_from(_CHANGES)))))
        elif kind == 7:  # not a string, or empty
            events.append(write(_chunk(draw(st.sampled_from(["", None, 5, ["x"]])), field)))
        elif kind == 8:  # keys in another order
            chunk = _chunk(text, field)
            events.append(write(dict(reversed(list(chunk.items())))))
        else:  # the key name written with an escape: the same chunk to a JSON reader
            escaped = json.dumps(field).encode()[1:-1].replace(b"n", b"\\u006e", 1)
            events.append(write(_chunk(text, field)).replace(field.encode(), escaped, 1))
    return events, field


def _view(update: ChatResponseUpdate) -> tuple[Any, ...]:
    """Every field the update compares (``raw`` is checked on its own)."""
    return tuple(getattr(update, name) for name in ChatResponseUpdate.__match_args__)


@settings(max_examples=400, deadline=None)
@given(_streams(), st.integers(1, 6))
def test_text_events_read_as_their_chunks_do(stream: tuple[list[bytes], str], group: int) -> None:
    """Read in reads of ``group`` events, the stream gives per event what a fresh normaliser
    (that has seen the same fingerprints) gives for its parsed chunk, raw included."""
    events, _ = stream
    reader = ChunkNormalizer("sglang")
    got: list[ChatResponseUpdate] = []
    for start in range(0, len(events), group):
        updates, error = reader.read_events(events[start : start + group])
        assert error is None
        got += updates
    expected: list[tuple[Any, ...]] = []
    raws: list[Any] = []
    fingerprint: Any = None
    for event in events:
        fresh = ChunkNormalizer("sglang")
        fresh._fingerprint = fingerprint
        chunk = json.loads(event)
        for update in fresh.feed(chunk):
            expected.append(_view(update))
            raws.append(chunk)
        fingerprint = fresh._fingerprint
    for update in got[::2]:
        update.contents = [*update.contents]  # (folded and edited before raw is read)
    assert [_view(u) for u in got] == expected
    assert [u.raw for u in got] == raws


def _fragment_chunk(arguments: Any, **change: Any) -> dict[str, Any]:
    call = {"index": 0, "function": {"arguments": arguments}}
    delta = {"content": None, "tool_calls": [call]}
    return _chunk(None, "reasoning_content", **change) | {
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}]
    }


_START = {
    "index": 0,
    "id": "call_1",
    "type": "function",
    "function": {"name": "f", "arguments": ""},
}


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 2),
    st.lists(st.tuples(st.integers(0, 7), _TEXTS), min_size=1, max_size=30),
    st.integers(1, 6),
)
def test_argument_fragments_read_as_their_chunks_do(
    style: int, picks: list[tuple[int, str]], group: int
) -> None:
    """A tool call's argument fragments, the same: the updates, and the call they make."""
    write = _writer(style)
    start = _chunk(None, "reasoning_content")
    start["choices"][0]["delta"] = {"content": None, "tool_calls": [_START]}
    events = [write(start)]
    for kind, text in picks:
        if kind <= 4:
            events.append(write(_fragment_chunk(text)))
        elif kind == 5:
            events.append(write(_fragment_chunk(text, created=9)))
        elif kind == 6:
            events.append(write(_fragment_chunk(7)))
        else:
            events.append(write(_chunk(text, "content")))
    reader = ChunkNormalizer("sglang", offered_tools=frozenset({"f"}))
    slow = ChunkNormalizer("sglang", offered_tools=frozenset({"f"}))
    got: list[ChatResponseUpdate] = []
    for begin in range(0, len(events), group):
        updates, error = reader.read_events(events[begin : begin + group])
        assert error is None
        got += updates
    expected = [_view(u) for event in events for u in slow._normalize(json.loads(event), "delta")]
    assert [_view(u) for u in got] == expected

    def calls(normalizer: ChunkNormalizer) -> list[tuple[str, str, str | None]]:
        found = [c for u in normalizer.finish() for c in u.contents]
        return [(c.name, c.raw_arguments, c.error) for c in found if type(c) is FunctionCallContent]

    assert calls(reader) == calls(slow)


def test_a_decoy_of_the_key_name_is_not_taken_for_the_text() -> None:
    """The real key written with an escape, and a copy of its name elsewhere holding the same
    text: the bytes around the copy are constant while the copy varies, so a cut made where
    the key name appears would read the copy as the text. The probe proof refuses that cut."""

    def event(real: str, decoy: str) -> bytes:
        chunk = _chunk(real, "content")
        chunk["choices"][0]["message"] = {"content": decoy}  # (read by no streamed chunk)
        written = orjson.dumps(chunk)
        return written.replace(b'"delta":{"content"', b'"delta":{"con\\u0074ent"', 1)

    events = [event("x", "x"), event("x", "x"), event("x", "y"), event("x", "z")]
    assert json.loads(events[0])["choices"][0]["delta"]["content"] == "x"
    reader = ChunkNormalizer("vllm")
    updates, error = reader.read_events(events)
    assert error is None
    assert [u.text for u in updates] == ["x", "x", "x", "x"]

"""Issue 20's done-bar: random hostile answers through the standard pipeline.

Bodies are built from hostile pieces (random bytes, JSON nested past any limit, lines longer
than ``max_event_bytes`` with and without their end, a wrong type in any field of a chunk, floods
of empty chunks or keepalives, gzip bombs) under a random status, content type and encoding, and
served in random cuts through ``httpx.MockTransport`` to ``create_chat_client`` with small
``Limits``. Whatever the answer:

* only ``ProviderError``s escape;
* the peak memory of the call (``tracemalloc``) stays under a bound derived from the limits;
* what the caller received before a streamed failure is in the error's ``partial_response``.
"""

from __future__ import annotations

import asyncio
import json
import tracemalloc
import zlib
from collections.abc import AsyncIterator
from functools import cache
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from providers import ProviderError, RetryPolicy, Timeouts, create_chat_client
from providers.abstractions.limits import Limits

KiB = 1024
LIMITS = Limits(
    max_event_bytes=8 * KiB,
    max_body_bytes=64 * KiB,
    max_stream_bytes=256 * KiB,
    max_error_body_bytes=2 * KiB,
    max_tool_argument_bytes=16 * KiB,
    max_tool_calls=16,
    max_held_text_bytes=16 * KiB,
    max_held_updates=64,
    max_json_depth=24,
)
PEAK = 3 * 1024 * KiB
"""A few times the largest limit (a stream's 256 KiB, held as updates and the partial response,
each with its parsed chunk), plus the pipeline's own objects; the hostile pieces below are
larger (up to 64 MiB once inflated)."""

SETTINGS = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TIMEOUTS = Timeouts(connect=2, first_token=5, idle=5, total=10)
RETRY = RetryPolicy(max_attempts=2, base_delay=0, max_delay=0)

_LETTERS = st.text("abcdefghij", min_size=1, max_size=8)
"""Answer text: letters only, so text recovery passes it through unchanged."""
_ANY = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | _LETTERS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_LETTERS, inner, max_size=3),
    max_leaves=5,
)
"""A JSON value of any type: what a field of the wrong type holds."""
_NOT_AN_INT = _ANY.filter(lambda v: type(v) is not int)


def _event(payload: Any) -> bytes:
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data: {text}\n\n".encode()


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@st.composite
def _chunk(draw: st.DrawFn) -> dict[str, Any]:
    """A chunk with a text delta, then any field replaced by a value of any type."""
    delta: dict[str, Any] = {"content": draw(_LETTERS)}
    if draw(st.booleans()):
        call = {"index": 0, "id": "c", "function": {"name": "f", "arguments": "{}"}}
        delta["tool_calls"] = [call]
    choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": None}
    chunk: dict[str, Any] = {"id": "x", "model": "m", "created": 1, "choices": [choice]}
    places = [chunk, choice, delta]
    if "tool_calls" in delta:
        places += [delta["tool_calls"][0], delta["tool_calls"][0]["function"]]
    for _ in range(draw(st.integers(0, 3))):
        place = draw(st.sampled_from(places))
        key = draw(st.sampled_from([*place.keys(), "usage", "error", "reasoning_content"]))
        # An int index on a choice is not a wrong type: it would open another choice.
        place[key] = draw(_NOT_AN_INT if key == "index" else _ANY)
    return chunk


MiB = 1024 * KiB

_PIECES = st.one_of(
    st.builds(_event, _chunk()),
    st.binary(max_size=64),
    st.integers(1, 5).map(lambda d: _event('{"choices": [], "x": ' + _nested(d * 24) + "}")),
    st.just(_event('{"x": ' + _nested(50_000) + "}")),
    st.tuples(st.integers(1, 4), st.booleans()).map(
        lambda n: b"data: " + b"x" * (n[0] * MiB) + (b"\n\n" if n[1] else b"")
    ),
    st.integers(1, 5000).map(lambda n: _event({"choices": [{"delta": {}}]}) * n),
    st.integers(1, 4000).map(
        lambda n: _event({"choices": [{"delta": {"content": "y" * KiB}}]}) * n
    ),
    st.integers(1, 4).map(lambda n: b": ping\n\n" * (n * MiB // 8)),
    st.builds(_event, st.fixed_dictionaries({"error": _ANY})),
    st.just(_event("[DONE]")),
)


@cache
def _bomb(size: int) -> bytes:
    """``size`` bytes of zeros, gzipped: a few KiB per MiB."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = bytes(MiB)
    return b"".join([*(packer.compress(block) for _ in range(size // MiB)), packer.flush()])


class Answer:
    """One scripted answer (a plain class: its repr, not hypothesis's, shows a failing example,
    whose body can be megabytes)."""

    __slots__ = ("body", "cuts", "headers", "status", "streaming")

    def __init__(
        self, status: int, headers: dict[str, str], body: bytes, cuts: list[int], streaming: bool
    ) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.cuts = cuts
        self.streaming = streaming

    def __repr__(self) -> str:
        return (
            f"Answer({self.status}, {self.headers}, body={self.body[:200]!r}… "
            f"({len(self.body)} bytes), cuts={self.cuts}, streaming={self.streaming})"
        )


@st.composite
def answers(draw: st.DrawFn) -> Answer:
    body = b"".join(draw(st.lists(_PIECES, max_size=8)))
    headers: dict[str, str] = {}
    content_type = draw(
        st.sampled_from([*["text/event-stream"] * 4, "application/json", "text/html", None])
    )
    if content_type is not None:
        headers["content-type"] = content_type
    encoding = draw(st.sampled_from([*[None] * 4, "gzip", "deflate", "bomb"]))
    if encoding == "bomb":
        body, encoding = _bomb(draw(st.sampled_from([8, 64])) * MiB), "gzip"
    elif encoding is not None:
        packer = zlib.compressobj(6, zlib.DEFLATED, 31 if encoding == "gzip" else 15)
        body = packer.compress(body) + packer.flush()
    if encoding is not None:
        headers["content-encoding"] = encoding
    status = draw(st.sampled_from([*[200] * 8, 204, 302, 304, 400, 404, 500, 503]))
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=6)))
    return Answer(status, headers, body, cuts, draw(st.booleans()))


class _Cut(httpx.AsyncByteStream):
    """The body in the answer's cuts, as network reads (none longer than a socket's 64 KiB)."""

    def __init__(self, body: bytes, cuts: list[int]) -> None:
        self._body = body
        self._cuts = cuts

    async def __aiter__(self) -> AsyncIterator[bytes]:
        start = 0
        for end in [*self._cuts, len(self._body)]:
            while end > start:
                stop = min(end, start + 64 * KiB)
                yield self._body[start:stop]
                start = stop


async def _run(answer: Answer) -> tuple[list[str], BaseException | None]:
    """The text of each update the caller received (not the updates: the measure is of what
    the client holds, not of what a caller keeps), and the error that ended the call."""

    def handler(request: httpx.Request) -> httpx.Response:
        stream = _Cut(answer.body, answer.cuts)
        return httpx.Response(answer.status, headers=answer.headers, stream=stream)

    seen: list[str] = []
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        client = create_chat_client(
            "http://llm.test", "m", limits=LIMITS, retry=RETRY, timeouts=TIMEOUTS, http_client=http
        )
        try:
            if answer.streaming:
                async for update in client.get_streaming_response("hi"):
                    seen.append(update.text)
            else:
                await client.get_response("hi")
        except BaseException as error:  # (judged by the test)
            return seen, error
        finally:
            await client.aclose()
    return seen, None


@cache
def _warm_up() -> None:
    """One answer down each path first: what the process allocates once (lazy imports, caches,
    loggers) is not what a request costs."""
    page = {"content-type": "text/html"}
    for answer in [
        Answer(200, {"content-type": "text/event-stream"}, _event(_chunk_of("ok")), [], True),
        Answer(503, page, b"<html><script>x</script>busy</html>", [], True),
        Answer(500, {}, _event('{"error": ' + _nested(50_000) + "}"), [], False),
        Answer(200, {"content-encoding": "gzip"}, _bomb(MiB), [], True),
    ]:
        asyncio.run(_run(answer))


def _chunk_of(text: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": "stop"}]}


@SETTINGS
@given(answer=answers())
def test_a_hostile_answer_costs_a_provider_error_and_bounded_memory(answer: Answer) -> None:
    _warm_up()
    tracemalloc.start()
    try:
        seen, error = asyncio.run(_run(answer))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert error is None or isinstance(error, ProviderError), repr(error)
    assert peak < PEAK, f"peak {peak} bytes"
    if isinstance(error, ProviderError) and answer.streaming:
        partial = error.partial_response
        assert partial is not None
        received = "".join(seen)
        assert partial.text.startswith(received)

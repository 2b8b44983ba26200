"""Issue 20, "Bounded memory": what a hostile server can make the client hold.

Each test serves one oversized thing from the loopback ``FaultServer`` to the real client with
small ``Limits``, and checks three things: the typed ``ResponseTooLargeError`` naming the limit,
the partial response received before it, and (``tracemalloc``) that the client's peak memory
stayed near the limit instead of growing with what the server sent.
"""

from __future__ import annotations

import dataclasses
import json
import tracemalloc
import zlib
from collections.abc import Awaitable, Callable
from functools import cache
from typing import Any, TypeVar

import httpx
import pytest

from capabilities.probes import Prober
from capabilities.readiness import wait_until_ready
from providers import (
    ChatResponseUpdate,
    InvalidResponseError,
    OpenAiCompatibleChatClient,
    ProviderError,
    ResponseTooLargeError,
    ServerError,
)
from providers.abstractions.errors import BackendUnavailableError
from providers.abstractions.limits import Limits
from providers.layers.fallback import FallbackChatClient
from providers.layers.retry import RetryingChatClient
from providers.responses import OpenAiCompatibleResponsesClient
from providers.transport.endpoint import Endpoint
from providers.transport.sse import SseDecoder
from providers.transport.timeouts import Timeouts
from tests.faults.helpers import DONE, FAST, HEL, PROMPT, ROLE, STOP, Waits, consume, seen_text
from tests.faults.server import FaultServer, Reply, chunk, raw_answer, sse

_MiB = 1024 * 1024
_T = TypeVar("_T")

SMALL = Limits(
    max_event_bytes=64 * 1024,
    max_body_bytes=_MiB,
    max_stream_bytes=_MiB,
    max_error_body_bytes=4096,
    max_held_updates=100,
    max_json_depth=32,
)
PEAK = 8 * _MiB
"""What one oversized request may cost the client: a few times the largest limit above, far
below what the servers in these tests send (tens to hundreds of MiB)."""

_BLOCK = b"x" * 65536


async def peak_of(call: Callable[[], Awaitable[_T]]) -> tuple[_T, int]:
    """``call()``'s result and the peak memory it allocated (Python allocations, all threads:
    the loopback server's too, so its replies are written in pieces made before the start)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        result = await call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


def client(base_url: str) -> OpenAiCompatibleChatClient:
    return OpenAiCompatibleChatClient(base_url, "m", timeouts=FAST, limits=SMALL)


async def stream_of(
    base_url: str,
    wrap: Callable[[OpenAiCompatibleChatClient], Any] = lambda c: c,
    timeouts: Timeouts = FAST,
) -> tuple[list[ChatResponseUpdate], ProviderError | None]:
    async with OpenAiCompatibleChatClient(base_url, "m", timeouts=timeouts, limits=SMALL) as wire:
        return await consume(wrap(wire).get_streaming_response(PROMPT))


def too_large(
    error: ProviderError | None, limit: str, *, streamed: bool = True
) -> ResponseTooLargeError:
    """``error`` is the typed error for ``limit``; a stream's carries its partial response (a
    whole body has none: nothing of it was usable)."""
    assert isinstance(error, ResponseTooLargeError), repr(error)
    assert error.limit == limit
    assert limit in str(error)
    assert (error.partial_response is not None) is streamed
    return error


@cache
def bomb(encoding: str, size: int = 128 * _MiB, prefix: bytes = b"", pattern: bytes = b"") -> bytes:
    """``prefix`` then ``size`` bytes of ``pattern`` (zeros by default), compressed: a few
    hundred KiB on the wire."""
    wbits = {"gzip": 31, "deflate": 15}[encoding]
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = (pattern * (_MiB // len(pattern))) if pattern else bytes(_MiB)
    parts = [packer.compress(prefix)]
    parts += [packer.compress(block) for _ in range(size // _MiB)]
    return b"".join([*parts, packer.flush()])


# --- one SSE line or event ---------------------------------------------------------------------


async def test_a_line_without_end_stops_at_max_event_bytes() -> None:
    """A 32 MiB line that never ends: it used to be buffered whole."""
    pieces = [ROLE, HEL, b"data: {", *[_BLOCK] * 512]
    async with FaultServer([Reply(pieces=pieces, end="close")]) as server:
        (updates, error), peak = await peak_of(lambda: stream_of(server.base_url))
    error = too_large(error, "max_event_bytes")
    assert seen_text(updates) == "Hel"
    assert error.partial_response is not None and error.partial_response.text == "Hel"
    assert peak < PEAK


async def test_an_event_of_many_lines_stops_at_max_event_bytes() -> None:
    """An event is its ``data:`` lines joined: short lines that never end the event count too."""
    lines = b"data: " + b"x" * 1000 + b"\n"
    pieces = [ROLE, HEL, *[lines * 64] * 512]
    async with FaultServer([Reply(pieces=pieces, end="close")]) as server:
        (_, error), peak = await peak_of(lambda: stream_of(server.base_url))
    too_large(error, "max_event_bytes")
    assert peak < PEAK


@pytest.mark.parametrize("line", [b"data:\n", b"data: x\n"], ids=["empty", "short"])
def test_the_data_lines_of_an_event_count_what_holding_them_costs(line: bytes) -> None:
    """Issue 32 item 10: an event of empty (or one-byte) ``data:`` lines that never ends. Each
    line costs a list slot (and a bytes object), yet counted by its payload alone (0 or 1 byte,
    and the LF) the decoder held 64 K lines under a 64 KiB bound, half a megabyte (ten million
    lines grew the process by 78 MB under the default bound). Fed in socket-sized reads."""
    limit = 64 * 1024
    decoder = SseDecoder(limit)
    read = line * (4096 // len(line))

    def feed() -> ResponseTooLargeError | None:
        for _ in range(1000):
            try:
                decoder.feed_bytes(read)
            except ResponseTooLargeError as error:
                return error
        return None

    error, peak = _peak_now(feed)
    assert error is not None and error.limit == "max_event_bytes"
    assert peak < 2 * limit, peak


def _peak_now(call: Callable[[], _T]) -> tuple[_T, int]:
    """``peak_of`` for a synchronous call."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        result = call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


# --- decompressed sizes ------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_a_compressed_stream_stops_at_max_stream_bytes(encoding: str) -> None:
    """128 MiB of keepalive comments in a few hundred KiB of gzip, after the first token."""
    body = bomb(encoding, prefix=ROLE + HEL, pattern=b": ping\n\n")
    answer = raw_answer(
        200, body, content_type="text/event-stream", headers={"Content-Encoding": encoding}
    )
    async with FaultServer([Reply(raw=answer)]) as server:
        (updates, error), peak = await peak_of(lambda: stream_of(server.base_url))
    error = too_large(error, "max_stream_bytes")
    assert seen_text(updates) == "Hel"
    assert peak < PEAK


async def test_an_endless_plain_stream_stops_at_max_stream_bytes() -> None:
    pieces = [ROLE, HEL, *[b": ping\n\n" * 8192] * 256]
    async with FaultServer([Reply(pieces=pieces, end="close")]) as server:
        (updates, error), peak = await peak_of(lambda: stream_of(server.base_url))
    too_large(error, "max_stream_bytes")
    assert seen_text(updates) == "Hel"
    assert peak < PEAK


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
async def test_a_compressed_completion_stops_at_max_body_bytes(encoding: str) -> None:
    """Whitespace is valid JSON: 128 MiB of it before a completion, in a few hundred KiB."""
    body = bomb(encoding, pattern=b" ")
    answer = raw_answer(200, body, headers={"Content-Encoding": encoding})
    async with FaultServer([Reply(raw=answer)]) as server, client(server.base_url) as wire:
        error, peak = await peak_of(lambda: _error_of(wire.get_response(PROMPT)))
    too_large(error, "max_body_bytes", streamed=False)
    assert peak < PEAK


@pytest.mark.parametrize("encoding", ["gzip", None])
async def test_a_probe_reads_at_most_its_limit(encoding: str | None) -> None:
    """A probe's answer past its 1 MB bound is not parsed; it used to be read whole first."""
    if encoding is None:
        reply = Reply(pieces=[b'{"a": "', *[_BLOCK] * 512, b'"}'], content_type="application/json")
    else:
        headers = {"Content-Encoding": encoding}
        reply = Reply(raw=raw_answer(200, bomb(encoding, pattern=b" "), headers=headers))
    async with FaultServer([reply]) as server, httpx.AsyncClient() as http:
        answer, peak = await peak_of(lambda: Prober(http).get(f"{server.base_url}/props"))
    assert answer is not None and answer.status == 200
    assert answer.payload is None and answer.text == ""
    assert peak < PEAK


@pytest.mark.parametrize("encoding", ["gzip", None])
async def test_readiness_reads_at_most_a_bounded_part_of_a_not_ready_answer(
    encoding: str | None,
) -> None:
    """``/health`` answering 503 with an endless (or inflating) body: the readiness check reads
    what its message needs; it used to read the whole body."""
    if encoding is None:  # (in pieces: the server writes it as it goes)
        pieces = [b'{"error": "', *[_BLOCK] * 512, b'"}']
        reply = Reply(503, pieces, content_type="application/json")
    else:
        headers = {"Content-Encoding": encoding}
        reply = Reply(raw=raw_answer(503, bomb(encoding, pattern=b" "), headers=headers))
    async with FaultServer([reply, reply]) as server, httpx.AsyncClient() as http:
        endpoint = Endpoint.from_base_url(server.base_url)

        async def ready() -> BaseException | None:
            try:  # (an attempt answered 503, and a last one as the budget ends)
                await wait_until_ready(http, endpoint, budget_seconds=1, poll_interval=10)
            except BackendUnavailableError as exc:
                return exc
            return None

        error, peak = await peak_of(ready)
        assert server.attempts >= 1
    assert isinstance(error, BackendUnavailableError)
    assert peak < PEAK


# --- what retry and failover hold before the first token ---------------------------------------


_EMPTY = sse(chunk({}))
_PATIENT = Timeouts(connect=2, first_token=60, idle=30, total=120)
"""For 5,000 chunks before the first token under ``tracemalloc``: FAST's 5 s first-token budget
was passed on a loaded machine (the budget is not what these tests are about)."""
_PROGRESS = sse({**chunk({}), "prompt_progress": {"processed": 1}})


def _held(layer: str, server: FaultServer) -> Callable[[OpenAiCompatibleChatClient], Any]:
    def wrap(wire: OpenAiCompatibleChatClient) -> Any:
        if layer == "retry":
            return RetryingChatClient(wire, sleep=Waits(), limits=SMALL)
        other = OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST)
        return FallbackChatClient(wire, other, limits=SMALL, should_fall_back=lambda e: False)

    return wrap


@pytest.mark.parametrize("layer", ["retry", "fallback"])
async def test_empty_chunks_before_the_first_token_are_not_held(layer: str) -> None:
    """Issue 32 item 10: 5,000 empty chunks, fifty times ``max_held_updates``, then the answer.
    Empty deltas carry nothing: they used to be held one by one until the limit failed the
    stream and lost the answer that followed."""
    empties = [Reply(pieces=[ROLE, *[_EMPTY] * 5000, HEL, STOP, DONE])]
    async with FaultServer(empties) as server:
        (updates, error), peak = await peak_of(
            lambda: stream_of(server.base_url, _held(layer, server), _PATIENT)
        )
    assert error is None, repr(error)
    assert seen_text(updates) == "Hel"
    assert len(updates) <= 4  # the role, one empty chunk for all, the text, the finish
    assert server.attempts == 1
    assert peak < PEAK


@pytest.mark.parametrize("layer", ["retry", "fallback"])
async def test_updates_held_before_the_first_token_stop_at_max_held_updates(layer: str) -> None:
    """Chunks that carry something (here llama.cpp's prefill progress) are not output: retry
    and failover hold them until the first token, up to ``max_held_updates``."""
    progress = [Reply(pieces=[ROLE, *[_PROGRESS] * 5000, HEL, STOP, DONE])]
    async with FaultServer(progress) as server:
        (updates, error), peak = await peak_of(
            lambda: stream_of(server.base_url, _held(layer, server), _PATIENT)
        )
    too_large(error, "max_held_updates")
    assert updates == []
    assert server.attempts == 1
    assert peak < PEAK


# --- output (issue 32 item 8) -------------------------------------------------------------------


def _output_limits() -> Limits:
    """``SMALL`` with a 256 KiB output bound, and room past it in every other limit."""
    return dataclasses.replace(
        SMALL,
        max_output_bytes=256 * 1024,
        max_stream_bytes=64 * _MiB,
        max_tool_argument_bytes=_MiB,
    )


_PIECE = "y" * 16 * 1024


def _output_client(server: FaultServer) -> OpenAiCompatibleChatClient:
    return OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST, limits=_output_limits())


def _output_piece(kind: str) -> bytes:
    if kind == "arguments":
        call = {"index": 0, "function": {"arguments": _PIECE}}
        return sse(chunk({"tool_calls": [call]}))
    return sse(chunk({"content" if kind == "text" else "reasoning_content": _PIECE}))


_CALL_START = sse(
    chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function", "function": {"name": "f"}}]})
)


@pytest.mark.parametrize("kind", ["text", "reasoning", "arguments"])
async def test_a_streamed_output_stops_at_max_output_bytes(kind: str) -> None:
    """4 MiB of output in 16 KiB deltas, within every other limit: it used to be held whole
    (299 MB of reasoning grew the process by 1.2 GB). It fails once past the bound (by at most
    1/64 of it and one read), with what was received as the partial response."""
    start = [ROLE, HEL, _CALL_START] if kind == "arguments" else [ROLE, HEL]
    pieces = [*start, *[_output_piece(kind)] * 256, STOP, DONE]
    async with FaultServer([Reply(pieces=pieces)]) as server, _output_client(server) as wire:
        (_, error), peak = await peak_of(lambda: consume(wire.get_streaming_response(PROMPT)))
    error = too_large(error, "max_output_bytes")
    partial = error.partial_response
    assert partial is not None and partial.text.startswith("Hel")
    output = len(partial.text) + len(partial.reasoning)
    output += sum(len(call.raw_arguments) for call in partial.tool_calls)
    limit = _output_limits().max_output_bytes
    assert limit < output <= limit + limit // 64 + 64 * 1024  # (64 KiB: one read's worth)
    assert peak < PEAK


@pytest.mark.parametrize("kind", ["output_text", "reasoning_text"])
async def test_a_responses_stream_stops_at_max_output_bytes(kind: str) -> None:
    """The same bound on the Responses client's stream."""
    created = {"type": "response.created", "response": {"id": "r", "status": "in_progress"}}
    delta = {"type": f"response.{kind}.delta", "delta": _PIECE, "output_index": 0}
    events = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in (created, delta)]
    reply = Reply(pieces=[events[0], *[events[1]] * 256])
    async with (
        FaultServer([reply]) as server,
        OpenAiCompatibleResponsesClient(
            server.base_url, "m", timeouts=FAST, limits=_output_limits()
        ) as wire,
    ):
        _, error = await consume(wire.get_streaming_response(PROMPT))
    error = too_large(error, "max_output_bytes")
    assert error.partial_response is not None
    output = len(error.partial_response.text) + len(error.partial_response.reasoning)
    assert _output_limits().max_output_bytes < output


@pytest.mark.parametrize("kind", ["text", "reasoning"])
async def test_a_whole_answer_is_held_to_max_output_bytes_too(kind: str) -> None:
    """A non-streamed answer within ``max_body_bytes`` but past ``max_output_bytes`` fails as
    a stream of it would, the answer (received whole) as its partial response."""
    message = {
        "role": "assistant",
        ("content" if kind == "text" else "reasoning_content"): _PIECE * 20,
    }
    if kind == "reasoning":
        message["content"] = "Hel"
    body = json.dumps(
        {
            "id": "c",
            "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        }
    ).encode()
    async with (
        FaultServer([Reply(raw=raw_answer(200, body))]) as server,
        _output_client(server) as wire,
    ):
        error = await _error_of(wire.get_response(PROMPT))
    assert isinstance(error, ResponseTooLargeError), repr(error)
    assert error.limit == "max_output_bytes"
    assert error.partial_response is not None
    assert len(error.partial_response.text + error.partial_response.reasoning) >= 20 * len(_PIECE)


def test_max_output_bytes_is_read_from_yaml(tmp_path: Any) -> None:
    from providers.config import load_config

    path = tmp_path / "oaicompat.yaml"
    path.write_text(
        "backends: {main: {base_url: 'http://x/v1', limits: {max_output_bytes: 4096}}}\n",
        encoding="utf-8",
    )
    config = load_config(path)
    limits = config.limits_for(config.backend("main"))
    assert limits is not None and limits.max_output_bytes == 4096


# --- error bodies ------------------------------------------------------------------------------


def _huge_error(status: int = 503) -> Reply:
    pieces = [b'{"error": {"message": "', *[_BLOCK] * 64, b'"}}']
    return Reply(status, pieces, content_type="application/json")


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_an_error_body_is_kept_up_to_max_error_body_bytes(streaming: bool) -> None:
    async with FaultServer([_huge_error()]) as server, client(server.base_url) as wire:
        if streaming:
            (_, error), peak = await peak_of(lambda: consume(wire.get_streaming_response(PROMPT)))
        else:
            error, peak = await peak_of(lambda: _error_of(wire.get_response(PROMPT)))
    assert error is not None and error.status == 503
    assert error.body is not None and len(error.body) <= SMALL.max_error_body_bytes
    assert peak < PEAK


# --- JSON nesting and types --------------------------------------------------------------------


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


NESTED_EVENTS = {
    "past-recursion-limit": '{"choices": [], "x": ' + _nested(100_000) + "}",
    "past-max-json-depth": '{"choices": [], "x": ' + _nested(SMALL.max_json_depth + 1) + "}",
    "choices-not-a-list": '{"choices": 5}',
    "tool-calls-not-a-list": '{"choices": [{"index": 0, "delta": {"tool_calls": 7}}]}',
    "deep-arguments": json.dumps(
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "c",
                        "type": "function",
                        "function": {"name": "f", "arguments": _nested(100_000)},
                    }
                ]
            },
            "tool_calls",
        )
    ),
}


@pytest.mark.parametrize("event", NESTED_EVENTS.values(), ids=NESTED_EVENTS.keys())
async def test_a_malformed_event_is_invalid_with_the_partial(event: str) -> None:
    """It used to escape as an untyped ``RecursionError`` or ``TypeError``, with no partial."""
    reply = Reply(pieces=[ROLE, HEL, sse(event), STOP, DONE])
    async with FaultServer([reply]) as server:
        updates, error = await stream_of(server.base_url)
    assert isinstance(error, InvalidResponseError), repr(error)
    assert seen_text(updates) == "Hel"
    assert error.partial_response is not None and error.partial_response.text == "Hel"


async def test_a_deeply_nested_completion_is_invalid() -> None:
    body = ('{"choices": ' + _nested(100_000) + "}").encode()
    reply = Reply(raw=raw_answer(200, body))
    async with FaultServer([reply]) as server, client(server.base_url) as wire:
        error = await _error_of(wire.get_response(PROMPT))
    assert isinstance(error, InvalidResponseError), repr(error)


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_a_deeply_nested_error_body_is_still_the_status_error(streaming: bool) -> None:
    body = ('{"error": ' + _nested(100_000) + "}").encode()
    reply = Reply(raw=raw_answer(500, body))
    async with FaultServer([reply]) as server, client(server.base_url) as wire:
        if streaming:
            _, error = await consume(wire.get_streaming_response(PROMPT))
        else:
            error = await _error_of(wire.get_response(PROMPT))
    assert isinstance(error, ServerError) and error.status == 500, repr(error)


async def test_a_deeply_nested_responses_event_is_invalid_with_the_partial() -> None:
    created = {"type": "response.created", "response": {"id": "r", "status": "in_progress"}}
    delta = {"type": "response.output_text.delta", "delta": "Hel", "output_index": 0}
    deep = '{"type": "response.output_text.delta", "x": ' + _nested(100_000) + "}"
    events = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in (created, delta)]
    reply = Reply(pieces=[*events, b"event: response.output_text.delta\ndata: " + deep.encode()])
    async with (
        FaultServer([reply]) as server,
        OpenAiCompatibleResponsesClient(server.base_url, "m", timeouts=FAST, limits=SMALL) as wire,
    ):
        updates, error = await consume(wire.get_streaming_response(PROMPT))
    assert isinstance(error, InvalidResponseError), repr(error)
    assert seen_text(updates) == "Hel"
    assert error.partial_response is not None and error.partial_response.text == "Hel"


async def _error_of(call: Awaitable[Any]) -> ProviderError | None:
    try:
        await call
    except ProviderError as error:
        return error
    return None

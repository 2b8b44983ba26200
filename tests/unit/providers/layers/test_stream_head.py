"""Streams through the layers: each layer an async generator over the one inside it.

``read_head`` (what retry and failover hold back), the ``OutputWatch`` that tells it a long
tool call is being written even through text recovery, and what a stack of layers must give
a caller: updates in order, tails passing the outer layers, early close reaching the wire.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import httpx
import pytest

from providers import (
    ChatResponse,
    ChatResponseUpdate,
    OpenAiCompatibleChatClient,
    ProviderError,
    ResponseTooLargeError,
    RetryingChatClient,
    RetryPolicy,
    StreamInterruptedError,
    TextRecoveryChatClient,
    create_chat_client,
)
from providers.abstractions.properties import RETRY_ATTEMPTS
from providers.abstractions.response_update import NO_HEAD
from providers.layers.fallback import FallbackChatClient
from providers.layers.stream_head import HELD_OUTPUT_LIMIT, read_head, read_head_runs
from providers.transport.output_watch import _WATCH, OutputWatch, report_output_progress
from telemetry import REQUEST_TIMINGS, TelemetryChatClient
from tests.unit.scripted_client import ScriptedClient, keepalive, role, text


async def _updates(
    *pieces: ChatResponseUpdate | BaseException,
) -> AsyncGenerator[ChatResponseUpdate, None]:
    for piece in pieces:
        if isinstance(piece, BaseException):
            raise piece
        yield piece


class _Closing:
    """An async iterator that records being closed (as an HTTP stream would be)."""

    def __init__(self, *pieces: ChatResponseUpdate | BaseException) -> None:
        self._inner = _updates(*pieces)
        self.closed = False

    def __aiter__(self) -> _Closing:
        return self

    async def __anext__(self) -> ChatResponseUpdate:
        return await self._inner.__anext__()

    async def aclose(self) -> None:
        self.closed = True
        await self._inner.aclose()


class _Progress:
    def __init__(self, started: bool) -> None:
        self.started = started

    def has_token(self) -> bool:
        return self.started


# ---- read_head ------------------------------------------------------------------------------


async def test_the_head_ends_with_the_first_substantive_update_and_the_rest_stays() -> None:
    stream = _Closing(role(), keepalive(), text("a"), text("b"))
    head, more = await read_head(stream)
    assert [u.text for u in head] == ["", "", "a"]
    assert more
    assert not stream.closed
    assert (await anext(stream)).text == "b"


async def test_a_stream_that_ends_within_its_head_is_all_head() -> None:
    head, more = await read_head(_Closing(role(), keepalive()))
    assert len(head) == 2
    assert not more


async def test_a_failing_head_closes_its_stream_before_the_error_propagates() -> None:
    stream = _Closing(role(), StreamInterruptedError("cut", backend="vllm"))
    with pytest.raises(StreamInterruptedError):
        await read_head(stream)
    assert stream.closed


async def _started_output(
    count: int, *, progress: _Progress | None
) -> AsyncIterator[ChatResponseUpdate]:
    """What a wire client does: report its progress as the request starts, then stream
    ``count`` updates with no substantive content (a tool call being written). Each carries
    something (prefill progress): a run of updates that carry nothing is held as its first."""
    if progress is not None:
        report_output_progress(progress)
    for position in range(count):
        yield ChatResponseUpdate(additional_properties={"progress": position})


@pytest.mark.parametrize("writing", [True, False])
async def test_a_long_head_ends_only_once_the_server_writes_output(writing: bool) -> None:
    count = HELD_OUTPUT_LIMIT * 3
    head, more = await read_head(_started_output(count, progress=_Progress(writing)))
    if writing:
        assert (len(head), more) == (HELD_OUTPUT_LIMIT + 1, True)
    else:  # prefill progress, keepalives: held however many there are
        assert (len(head), more) == (count, False)


async def test_a_stream_whose_client_reports_nothing_is_held_until_substantive() -> None:
    count = HELD_OUTPUT_LIMIT * 2
    head, more = await read_head(_started_output(count, progress=None))
    assert (len(head), more) == (count, False)


async def test_a_run_of_updates_that_carry_nothing_is_held_as_its_first() -> None:
    """Issue 32 item 10: empty deltas before the first token are not held one by one, so
    they never reach ``max_held`` (and never lose the answer that follows)."""
    updates = [role(), *[keepalive() for _ in range(50)], role(), keepalive(), keepalive()]
    head, more = await read_head(_Closing(*updates, text("a"), keepalive()), max_held=5)
    assert head == [updates[0], updates[1], updates[51], updates[52], head[-1]]
    assert head[-1].text == "a"
    assert more


async def test_runs_leave_out_the_same_updates_and_keep_the_rest_of_the_last_run() -> None:
    async def runs() -> AsyncIterator[list[ChatResponseUpdate]]:
        yield [role(), keepalive(), keepalive()]
        yield [keepalive() for _ in range(50)]
        yield [keepalive(), role(), keepalive(), keepalive(), text("a"), keepalive(), keepalive()]

    head, more = await read_head_runs(runs(), max_held=5)
    shapes = [[(u.role is not None, u.text) for u in run] for run in head]
    role_, empty = (True, ""), (False, "")
    assert shapes == [[role_, empty], [role_, empty, (False, "a"), empty, empty]]
    assert more


async def test_updates_that_carry_something_still_stop_at_max_held() -> None:
    async def runs() -> AsyncIterator[list[ChatResponseUpdate]]:
        yield [keepalive(), keepalive(), role()]
        yield [ChatResponseUpdate(additional_properties={"p": n}) for n in range(10)]

    with pytest.raises(ResponseTooLargeError) as caught:
        await read_head_runs(runs(), max_held=5)
    assert caught.value.limit == "max_held_updates"
    assert caught.value.partial_response is not None


# ---- OutputWatch ----------------------------------------------------------------------------


def test_a_report_reaches_the_watch_and_every_watch_around_it() -> None:
    report_output_progress(_Progress(True))  # no watch: nobody to tell, no error
    with OutputWatch() as outer:
        assert not outer.output_started()
        with OutputWatch() as inner:
            report_output_progress(_Progress(True))
        assert inner.output_started()
        assert outer.output_started()  # a failover reading a retry's head waits on it too
    with OutputWatch() as later:
        assert not later.output_started()  # the watches are gone once their heads are read


def test_the_latest_request_inside_a_watch_is_the_one_asked() -> None:
    with OutputWatch() as watch:
        report_output_progress(_Progress(True))  # a first attempt that failed
        report_output_progress(_Progress(False))  # the retry
        assert not watch.output_started()


async def test_the_caller_never_sees_a_watch_between_updates() -> None:
    seen: list[bool] = []

    class Peeking(ScriptedClient):
        async def get_streaming_response(
            self, messages: Any, options: Any = None
        ) -> AsyncIterator[ChatResponseUpdate]:
            async for update in super().get_streaming_response(messages, options):
                seen.append(_watching())
                yield update

    client = RetryingChatClient(Peeking([role(), text("a"), text("b")]), RetryPolicy())
    async for _ in client.get_streaming_response("hi"):
        seen.append(_watching())
    # The head (role, "a") is read inside the watch; "b" is read after it, as is every yield.
    assert seen == [True, True, False, False, False, False]


def _watching() -> bool:
    return _WATCH.get() is not None


# ---- layers over the wire client ------------------------------------------------------------


def _frame(delta: dict[str, Any], finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return "data: " + json.dumps({"id": "c", "model": "m", "choices": [choice]}) + "\n\n"


def _tool_call_sse(fragments: int, *, complete: bool) -> bytes:
    """A vLLM tool-call stream: the call's name, then its arguments in ``fragments`` pieces;
    cut off (no finish, no ``[DONE]``) unless ``complete``."""
    start = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "write"}}
    frames = [_frame({"role": "assistant"}), _frame({"tool_calls": [start]})]
    pieces = ['{"text": "'] + ["x"] * (fragments - 2) + ['"}']
    frames += [
        _frame({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}) for piece in pieces
    ]
    if complete:
        frames += [_frame({}, "tool_calls"), "data: [DONE]\n\n"]
    return "".join(frames).encode()


def _text_sse(*pieces: str) -> bytes:
    frames = [_frame({"role": "assistant"})] + [_frame({"content": p}) for p in pieces]
    return ("".join(frames) + _frame({}, "stop") + "data: [DONE]\n\n").encode()


async def _no_wait(seconds: float) -> None:
    pass


@pytest.mark.parametrize("recovery", [False, True], ids=["retry", "retry+recovery"])
@pytest.mark.parametrize(("fragments", "retried"), [(10, True), (200, False)])
async def test_a_call_cut_off_is_retried_while_short_and_surfaces_once_long(
    fragments: int, retried: bool, recovery: bool
) -> None:
    """The wire client's "writing output" reaches the retry layer through text recovery."""
    bodies = [
        _tool_call_sse(fragments, complete=False),
        _tool_call_sse(fragments, complete=True),
    ]
    sent: list[int] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(1)
        body = bodies[min(len(sent), len(bodies)) - 1]
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    wire = OpenAiCompatibleChatClient("http://llm.test/v1", "m", backend="vllm", http_client=http)
    inner = TextRecoveryChatClient(wire) if recovery else wire
    client = RetryingChatClient(inner, RetryPolicy(), sleep=_no_wait)
    updates: list[ChatResponseUpdate] = []
    if retried:
        async for update in client.get_streaming_response("hi"):
            updates.append(update)
        [call] = ChatResponse.from_updates(updates).tool_calls
        assert call.arguments == {"text": "x" * (fragments - 2)}
        assert len(sent) == 2
    else:
        with pytest.raises(StreamInterruptedError) as raised:
            async for update in client.get_streaming_response("hi"):
                updates.append(update)
        assert len(sent) == 1
        assert raised.value.retry_attempts == 0
        assert raised.value.partial_response is not None
        [call] = raised.value.partial_response.tool_calls  # the half-written call is kept
        assert call.name == "write"
        # The caller got the fragments as they came, not one list of them at the end.
        assert len(updates) > HELD_OUTPUT_LIMIT


async def test_a_long_tool_call_block_in_text_ends_the_head_though_recovery_holds_it() -> None:
    """Text recovery holds back the text inside ``<tool_call>`` (no substantive update leaves
    it), but the wire client saw text: past the limit the head ends, and a cut is not retried."""
    pieces = ['<tool_call>{"name": "write", "arguments": {"text": "'] + ["x"] * 200
    frames = [_frame({"role": "assistant"})] + [_frame({"content": p}) for p in pieces]
    sent: list[int] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(1)
        body = "".join(frames).encode()  # cut off: no finish, no [DONE]
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    wire = OpenAiCompatibleChatClient("http://llm.test/v1", "m", backend="vllm", http_client=http)
    client = RetryingChatClient(TextRecoveryChatClient(wire), RetryPolicy(), sleep=_no_wait)
    updates: list[ChatResponseUpdate] = []
    with pytest.raises(StreamInterruptedError) as raised:
        async for update in client.get_streaming_response("hi"):
            updates.append(update)
    assert len(sent) == 1
    assert raised.value.retry_attempts == 0
    assert len(updates) > HELD_OUTPUT_LIMIT


async def test_failover_around_retry_stops_holding_a_long_call_too() -> None:
    """The wire client's report reaches both heads being read: failover's around retry's."""
    sent: list[int] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(1)
        body = _tool_call_sse(200, complete=False)
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    wire = OpenAiCompatibleChatClient("http://llm.test/v1", "m", backend="vllm", http_client=http)
    main = RetryingChatClient(TextRecoveryChatClient(wire), RetryPolicy(), sleep=_no_wait)
    fallback = ScriptedClient([role(), text("from the fallback")])
    client = FallbackChatClient(main, fallback)
    updates: list[ChatResponseUpdate] = []
    with pytest.raises(StreamInterruptedError):
        async for update in client.get_streaming_response("hi"):
            updates.append(update)
    assert len(sent) == 1
    assert fallback.calls == []
    assert len(updates) > HELD_OUTPUT_LIMIT


async def test_retry_annotates_an_error_after_the_head() -> None:
    error = StreamInterruptedError("cut", backend="vllm")
    inner = ScriptedClient([role(), text("a"), text("b"), error])
    stream = RetryingChatClient(inner, RetryPolicy()).get_streaming_response("hi")
    with pytest.raises(ProviderError) as raised:
        async for _ in stream:
            pass
    assert raised.value.retry_attempts == 0
    assert raised.value.partial_response is not None
    assert raised.value.partial_response.text == "ab"


async def test_a_caller_breaking_closes_the_http_response_through_every_layer() -> None:
    closed: list[bool] = []

    class Body(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            for line in _text_sse("a", "b", "c").split(b"\n\n"):
                if line:
                    yield line + b"\n\n"

        async def aclose(self) -> None:
            closed.append(True)

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=Body(), headers={"content-type": "text/event-stream"})

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    wire = OpenAiCompatibleChatClient("http://llm.test/v1", "m", backend="vllm", http_client=http)
    client = TelemetryChatClient(RetryingChatClient(TextRecoveryChatClient(wire)))
    stream = client.get_streaming_response("hi")
    async for update in stream:
        if update.text == "a":
            break
    assert closed == []  # (a `break` alone closes nothing: the caller's `aclose` does)
    await stream.aclose()  # type: ignore[attr-defined]
    assert closed == [True]


async def test_text_recoverys_tail_passes_the_layers_outside_it() -> None:
    """A stream cut inside ``<think>`` with no finish chunk: the held reasoning comes as a
    tail update after the inner stream ended, and telemetry outside sees it as the last one."""
    inner = ScriptedClient([role(), text("<think>abc")])
    client = TelemetryChatClient(RetryingChatClient(TextRecoveryChatClient(inner)))
    updates = [update async for update in client.get_streaming_response("hi")]
    assert updates[-1].reasoning.endswith("c")
    assert ChatResponse.from_updates(updates).reasoning == "abc"
    props = updates[-1].additional_properties
    assert props is not None and REQUEST_TIMINGS in props
    first = updates[0].additional_properties
    assert first is not None and first[RETRY_ATTEMPTS] == 0


def _fragment_stream() -> bytes:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return {"id": "c1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}

    start = {"index": 0, "id": "call_1", "type": "function"}
    events = [
        chunk({"role": "assistant", "content": None}),
        chunk({"tool_calls": [{**start, "function": {"name": "get_weather", "arguments": "{"}}]}),
        *(
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
            for piece in ['"city"', ":", '"Paris"', "}"]
        ),
        chunk({}, "tool_calls"),
    ]
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + (
        b"data: [DONE]\n\n"
    )


@pytest.mark.parametrize("retry", [True, False], ids=["retry", "no-retry"])
async def test_each_fragment_of_a_call_reaches_the_caller_with_its_raw_chunk(retry: bool) -> None:
    """A tool call's fragments carry nothing yet (the call is whole only at its end), but each
    one's ``raw`` holds its part of the arguments the caller may replay verbatim: once output
    has started, the head passes every one on (item 10 leaves out only the empty deltas that
    come before it)."""
    body = _fragment_stream()

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as http:
        client = create_chat_client(
            "http://llm.test/v1",
            "m",
            backend="llamacpp",
            http_client=http,
            retry=RetryPolicy() if retry else None,
        )
        updates = [u async for u in client.get_streaming_response("hi")]
    response = ChatResponse.from_updates(updates)
    assert isinstance(response.raw, list)
    sent = [
        call["function"].get("arguments", "")
        for chunk in response.raw
        for choice in chunk["choices"]
        for call in choice["delta"].get("tool_calls") or ()
    ]
    assert "".join(sent) == '{"city":"Paris"}' == response.tool_calls[0].raw_arguments


async def test_fragment_updates_stay_plain_through_the_head() -> None:
    """A tool call's fragments reach the head reader as plain, empty updates (the wire client
    makes them so); asking whether they carry anything must not make them lists, or every
    later layer takes them off its fast path. The head still ends once output is written."""
    fragments = [ChatResponseUpdate.of_text("", NO_HEAD, 0, None) for _ in range(100)]

    async def runs() -> AsyncIterator[list[ChatResponseUpdate]]:
        report_output_progress(_Progress(True))
        yield fragments

    head, more = await read_head_runs(runs())
    assert more and len(head[0]) == len(fragments)  # (the run that ended it, whole)
    assert all(update.plain_text == "" for update in fragments)

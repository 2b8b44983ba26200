"""``UpdateStream`` stages and ``HeldStream``: layers that add work to one stream instead of
wrapping it must see what a stack of generators would show them, in the same order."""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import json
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import httpx
import pytest

from providers import (
    ChatResponse,
    ChatResponseUpdate,
    OpenAiCompatibleChatClient,
    ProviderError,
    RetryingChatClient,
    RetryPolicy,
    StreamInterruptedError,
)
from providers.layers.stream_head import HeldStream
from providers.transport.update_stream import (
    HELD_OUTPUT_LIMIT,
    StreamStage,
    UpdateStream,
    as_update_stream,
)
from tests.unit.scripted_client import ScriptedClient, role, text

CHAT = "http://llm.test/v1/chat/completions"
CURRENT: contextvars.ContextVar[str | None] = contextvars.ContextVar("current", default=None)


class Tagger(StreamStage):
    """Records the updates it saw and where the context var pointed when it started."""

    __slots__ = ("seen", "started_in")

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.started_in: str | None = "unset"

    def on_start(self) -> None:
        self.started_in = CURRENT.get()

    def on_update(self, update: ChatResponseUpdate) -> None:
        self.seen.append(update.text)


class Silent(StreamStage):
    """Overrides only ``on_failure``: must cost no per-update hook."""

    __slots__ = ()

    def on_failure(self, error: BaseException) -> None:
        pass


@contextlib.contextmanager
def _current(name: str) -> Iterator[None]:
    token = CURRENT.set(name)
    try:
        yield
    finally:
        CURRENT.reset(token)


async def _updates(*pieces: str | BaseException) -> AsyncIterator[ChatResponseUpdate]:
    for piece in pieces:
        if isinstance(piece, BaseException):
            raise piece
        yield text(piece)


class Hooks(StreamStage):
    __slots__ = ("_log", "_name", "_tail")

    def __init__(self, name: str, log: list[str], tail: Iterable[str] = ()) -> None:
        self._name, self._log, self._tail = name, log, list(tail)

    def on_start(self) -> contextlib.AbstractContextManager[Any]:
        self._log.append(f"{self._name}:start")
        return _current(self._name)

    def on_update(self, update: ChatResponseUpdate) -> None:
        self._log.append(f"{self._name}:{update.text}")

    def on_end(self) -> list[ChatResponseUpdate]:
        self._log.append(f"{self._name}:end")
        return [text(piece) for piece in self._tail]

    def on_failure(self, error: BaseException) -> None:
        self._log.append(f"{self._name}:fail:{type(error).__name__}")


def _sse(*pieces: str) -> bytes:
    """A vLLM-shaped stream: the role, one chunk per piece, the finish, ``[DONE]``."""
    deltas: list[tuple[dict[str, Any], str | None]] = [({"role": "assistant"}, None)]
    deltas += [({"content": piece}, None) for piece in pieces]
    deltas.append(({}, "stop"))
    frames = [
        "data: "
        + json.dumps(
            {"id": "c", "model": "m", "choices": [{"index": 0, "delta": d, "finish_reason": f}]}
        )
        + "\n\n"
        for d, f in deltas
    ]
    return ("".join(frames) + "data: [DONE]\n\n").encode()


def _wire_client(body: bytes) -> OpenAiCompatibleChatClient:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    return OpenAiCompatibleChatClient("http://llm.test/v1", "m", backend="vllm", http_client=http)


# ---- the stream itself --------------------------------------------------------------------


@pytest.mark.parametrize("source", ["wire", "foreign"])
async def test_stages_see_updates_innermost_first_and_tails_pass_the_outer_ones(
    source: str,
) -> None:
    log: list[str] = []
    if source == "wire":
        stream = _wire_client(_sse("a", "b")).get_streaming_response("hi")
    else:
        stream = as_update_stream(_updates("", "a", "b", ""))
    stream.add_stage(Hooks("in", log, tail=["t"])).add_stage(Hooks("out", log))
    got = [update.text async for update in stream]

    assert got == ["", "a", "b", "", "t"]
    assert log == [
        "out:start",
        "in:start",
        "in:",
        "out:",
        "in:a",
        "out:a",
        "in:b",
        "out:b",
        "in:",
        "out:",
        "in:end",
        "out:t",  # the inner stage's tail passes the outer stage only
        "out:end",
    ]


async def test_the_start_contexts_are_current_while_the_first_update_is_awaited() -> None:
    seen: list[str | None] = []

    async def source() -> AsyncIterator[ChatResponseUpdate]:
        seen.append(CURRENT.get())
        yield text("a")
        seen.append(CURRENT.get())
        yield text("b")

    log: list[str] = []
    stream = as_update_stream(source()).add_stage(Hooks("only", log))
    assert [u.text async for u in stream] == ["a", "b"]
    assert seen == ["only", None]  # current for the request, never across the caller's yields
    assert CURRENT.get() is None


async def test_without_a_start_context_the_first_anext_is_the_producers_own_awaitable() -> None:
    """What 200 waiting streams each hold: no coroutine of ours around the first update
    unless a stage's start context needs one."""
    stream = _wire_client(_sse("a")).get_streaming_response("hi")
    stream.add_stage(Tagger())  # starts, but enters no context
    first = stream.__anext__()
    assert not inspect.iscoroutine(first)  # the wire generator's own `asend`
    assert (await first).role is not None

    with_context = _wire_client(_sse("a")).get_streaming_response("hi")
    with_context.add_stage(Hooks("ctx", []))
    first = with_context.__anext__()
    assert inspect.iscoroutine(first)  # the context must stay current while it is awaited
    await first
    await with_context.aclose()
    await stream.aclose()


async def test_a_stage_without_on_update_adds_no_hook() -> None:
    stream = as_update_stream(_updates("a"))
    stream.add_stage(Silent())
    assert stream.stages.updating == ()
    stream.add_stage(Tagger())
    assert len(stream.stages.updating) == 1


@pytest.mark.parametrize("source", ["wire", "foreign"])
async def test_a_caller_stopping_early_fails_the_stages_with_generator_exit(source: str) -> None:
    log: list[str] = []
    if source == "wire":
        stream = _wire_client(_sse("a", "b", "c")).get_streaming_response("hi")
    else:
        stream = as_update_stream(_updates("a", "b", "c"))
    stream.add_stage(Hooks("in", log)).add_stage(Hooks("out", log))
    async for update in stream:
        if update.text == "a":
            break
    await stream.aclose()
    assert log[-2:] == ["in:fail:GeneratorExit", "out:fail:GeneratorExit"]
    assert "in:end" not in log and "out:end" not in log


async def test_an_error_reaches_every_stage_not_yet_ended() -> None:
    log: list[str] = []
    error = StreamInterruptedError("cut", backend="vllm")
    stream = as_update_stream(_updates("a", error))
    stream.add_stage(Hooks("in", log)).add_stage(Hooks("out", log))
    with pytest.raises(StreamInterruptedError):
        async for _ in stream:
            pass
    assert log[-2:] == ["in:fail:StreamInterruptedError", "out:fail:StreamInterruptedError"]


async def test_a_stage_that_ended_is_not_failed_when_the_caller_stops_during_tails() -> None:
    log: list[str] = []
    stream = as_update_stream(_updates("a"))
    stream.add_stage(Hooks("in", log, tail=["t1", "t2"])).add_stage(Hooks("out", log))
    async for update in stream:
        if update.text == "t1":
            break
    await stream.aclose()
    assert "in:end" in log
    assert "in:fail:GeneratorExit" not in log
    assert log[-1] == "out:fail:GeneratorExit"


async def test_closing_a_stream_over_a_started_source_closes_the_source() -> None:
    closed: list[bool] = []

    async def source() -> AsyncIterator[ChatResponseUpdate]:
        try:
            yield text("a")
            yield text("b")
        finally:
            closed.append(True)

    inner = source()
    assert (await anext(inner)).text == "a"  # read before the stream over it started
    stream = UpdateStream.over(inner)
    await stream.aclose()
    assert closed == [True]


# ---- HeldStream ---------------------------------------------------------------------------


class _Held(HeldStream):
    """A layer with no policy of its own: it opens ``stream`` (or fails with ``failure``), and
    its head ends where the rule says (``head_ends``)."""

    __slots__ = ("_failure", "_stream")

    def __init__(
        self, stream: AsyncIterator[ChatResponseUpdate], failure: BaseException | None = None
    ) -> None:
        super().__init__("hi", None)
        self._stream = stream
        self._failure = failure

    def _open(self) -> AsyncIterator[ChatResponseUpdate]:
        if self._failure is not None:
            raise self._failure
        return self._stream


async def _led(leading: int, *pieces: str) -> AsyncIterator[ChatResponseUpdate]:
    """``leading`` role-only updates (not substantive: all held in the head), then ``pieces``."""
    for _ in range(leading):
        yield role()
    async for update in _updates(*pieces):
        yield update


@pytest.mark.parametrize("head_size", [1, 2, 6])
async def test_held_stream_stages_see_every_update_once_in_order(head_size: int) -> None:
    pieces = [str(i) for i in range(10)]
    expected = [""] * (head_size - 1) + pieces
    inner = as_update_stream(_led(head_size - 1, *pieces))
    inner_tagger = Tagger()
    inner.add_stage(inner_tagger)
    held = _Held(inner)
    outer = Tagger()
    held.add_stage(outer)

    got = [u.text async for u in held]
    assert got == expected
    assert outer.seen == expected
    assert inner_tagger.seen == expected
    assert outer.started_in is None  # started once, by the held stream


async def test_held_stream_moves_its_stages_so_a_later_error_reaches_them() -> None:
    log: list[str] = []
    error = StreamInterruptedError("cut", backend="vllm")
    held = _Held(as_update_stream(_updates("a", "b", error)))
    held.add_stage(Hooks("out", log))
    got: list[str] = []
    with pytest.raises(StreamInterruptedError):
        async for update in held:
            got.append(update.text)
    assert got == ["a", "b"]
    assert log == ["out:start", "out:a", "out:b", "out:fail:StreamInterruptedError"]


async def test_held_stream_that_fails_while_opening_fails_its_stages() -> None:
    log: list[str] = []
    failure = StreamInterruptedError("no answer", backend="vllm")
    held = _Held(_updates("never"), failure).add_stage(Hooks("out", log))
    with pytest.raises(StreamInterruptedError):
        await anext(held)
    assert log == ["out:start", "out:fail:StreamInterruptedError"]


async def test_held_stream_whose_stream_ended_in_the_head_replays_it_and_ends_the_stages() -> None:
    log: list[str] = []
    closed: list[bool] = []

    async def two_roles() -> AsyncIterator[ChatResponseUpdate]:
        try:
            yield role()
            yield role()
        finally:
            closed.append(True)

    held = _Held(two_roles()).add_stage(Hooks("out", log, tail=["t"]))
    assert [u.text async for u in held] == ["", "", "t"]
    assert log == ["out:start", "out:", "out:", "out:end"]
    assert closed == [True]


async def test_retry_over_the_wire_client_runs_outer_stages_in_the_wire_generator() -> None:
    """After the head, the retry layer adds nothing per update: ``anext`` is the wire's."""
    client = RetryingChatClient(_wire_client(_sse("a", "b", "c")), RetryPolicy())
    stream = client.get_streaming_response("hi")
    outer = Tagger()
    as_update_stream(stream).add_stage(outer)
    got = [u.text async for u in stream]
    assert got == ["", "a", "b", "c", ""]
    assert outer.seen == got
    assert isinstance(stream, UpdateStream) and stream.settled


async def test_retry_annotates_an_error_after_the_head_through_its_stage() -> None:
    error = StreamInterruptedError("cut", backend="vllm")
    inner = ScriptedClient([role(), text("a"), text("b"), error])
    stream = RetryingChatClient(inner, RetryPolicy()).get_streaming_response("hi")
    with pytest.raises(ProviderError) as raised:
        async for _ in stream:
            pass
    assert raised.value.retry_attempts == 0
    assert raised.value.partial_response is not None
    assert raised.value.partial_response.text == "ab"


# ---- where a retry's head ends ------------------------------------------------------------


def _tool_call_sse(fragments: int, *, complete: bool) -> bytes:
    """A vLLM tool-call stream: the call's name, then its arguments in ``fragments`` pieces;
    cut off (no finish, no ``[DONE]``) unless ``complete``."""

    def frame(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return "data: " + json.dumps({"id": "c", "model": "m", "choices": [choice]}) + "\n\n"

    start = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "write"}}
    frames = [frame({"role": "assistant"}), frame({"tool_calls": [start]})]
    pieces = ['{"text": "'] + ["x"] * (fragments - 2) + ['"}']
    frames += [
        frame({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}) for piece in pieces
    ]
    if complete:
        frames += [frame({}, "tool_calls"), "data: [DONE]\n\n"]
    return "".join(frames).encode()


@pytest.mark.parametrize(("fragments", "retried"), [(10, True), (200, False)])
async def test_a_call_cut_off_is_retried_while_short_and_surfaces_once_long(
    fragments: int, retried: bool
) -> None:
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

    async def no_wait(seconds: float) -> None:
        pass

    client = RetryingChatClient(wire, RetryPolicy(), sleep=no_wait)
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

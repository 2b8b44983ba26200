"""Issue 32 item 9: the partial response of a stream cut anywhere holds what the caller received.

A stream of reasoning and text deltas rich in whitespace (the edges ``BlockWhitespace`` trims,
and ``<think>`` tags split across deltas) is cut at a random byte, in random reads, and the
connection then fails. Through the standard pipeline, with and without the retry layer, the
error's ``partial_response`` must begin with everything the caller received, reasoning and text
alike, and hold nothing the server did not send: what the layers still held back at the cut
(a suffix that could start a tag) may follow, but nothing the caller saw may be missing, not
even the whitespace at the end of a reasoning run.

That whitespace is also compared with what the server sent, not only with what the caller saw:
the stream holds it back until the next piece shows whether a block edge follows, and a cut is
no edge, so the reasoning run the cut interrupted is in the partial as sent (the bug was that
the partial dropped it, though the whole response keeps it when more reasoning follows).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from providers import (
    ChatResponse,
    ChatResponseUpdate,
    ProviderError,
    RetryPolicy,
    Timeouts,
    create_chat_client,
)

_PIECES = st.sampled_from(
    ["a", "b c", " ", "\n", "\n\n", " x ", "y\n", "\t", "<think>", "</think>", "<", "</th", "ink>"]
)
_FIELDS = st.sampled_from(["content", "reasoning_content", "reasoning"])
RETRY = RetryPolicy(max_attempts=2, base_delay=0, max_delay=0)
TIMEOUTS = Timeouts(connect=2, first_token=5, idle=5, total=10)


def _event(delta: dict[str, Any]) -> bytes:
    chunk = {"id": "c", "model": "m", "created": 1, "choices": [{"index": 0, "delta": delta}]}
    return f"data: {json.dumps(chunk)}\n\n".encode()


class _CutStream(httpx.AsyncByteStream):
    """The body up to the cut, in the given reads; then the connection fails."""

    def __init__(self, body: bytes, reads: list[int]) -> None:
        self._body = body
        self._reads = reads

    async def __aiter__(self) -> AsyncIterator[bytes]:
        start = 0
        for end in [*self._reads, len(self._body)]:
            if end > start:
                yield self._body[start:end]
                start = end
        raise httpx.ReadError("connection reset")


async def _run(
    body: bytes, reads: list[int], retry: RetryPolicy | None
) -> tuple[list[ChatResponseUpdate], ProviderError | None]:
    def handler(request: httpx.Request) -> httpx.Response:
        stream = _CutStream(body, reads)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=stream)

    seen: list[ChatResponseUpdate] = []
    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        client = create_chat_client(
            "http://llm.test", "m", retry=retry, timeouts=TIMEOUTS, http_client=http
        )
        try:
            async for update in client.get_streaming_response("hi"):
                seen.append(update)
        except ProviderError as error:
            return seen, error
        finally:
            await client.aclose()
    return seen, None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.data_too_large])
@given(
    deltas=st.lists(st.tuples(_FIELDS, _PIECES), min_size=1, max_size=12),
    retried=st.booleans(),
    data=st.data(),
)
def test_a_cut_stream_keeps_what_the_caller_received(
    deltas: list[tuple[str, str]], retried: bool, data: st.DataObject
) -> None:
    body = _event({"role": "assistant", "content": ""})
    body += b"".join(_event({field: piece}) for field, piece in deltas)
    cut = data.draw(st.integers(1, len(body)), label="cut")
    reads = sorted(data.draw(st.lists(st.integers(0, cut), max_size=4), label="reads"))
    seen, error = asyncio.run(_run(body[:cut], reads, RETRY if retried else None))
    assert error is not None and error.partial_response is not None
    received = ChatResponse.from_updates(seen)
    partial = error.partial_response
    assert partial.reasoning.startswith(received.reasoning), (received, partial)
    assert partial.text.startswith(received.text), (received, partial)
    sent = "".join(piece for _, piece in deltas)
    assert len(partial.reasoning) + len(partial.text) <= len(sent)


_PLAIN = st.sampled_from(["a", "b c", " ", "\n", "\n\n", " x ", "y\n", "\t", ".\n\n"])
_SERVER_FIELDS = st.sampled_from(["content", "reasoning_content"])


async def _full(body: bytes) -> ChatResponse:
    """The response to ``body`` read to its end (the pipeline with retry)."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        client = create_chat_client(
            "http://llm.test", "m", retry=RETRY, timeouts=TIMEOUTS, http_client=http
        )
        try:
            return ChatResponse.from_updates(
                [update async for update in client.get_streaming_response("hi")]
            )
        finally:
            await client.aclose()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.data_too_large])
@given(
    deltas=st.lists(st.tuples(_SERVER_FIELDS, _PLAIN), min_size=1, max_size=10),
    retried=st.booleans(),
    data=st.data(),
)
def test_a_cut_inside_reasoning_keeps_the_whitespace_the_server_sent(
    deltas: list[tuple[str, str]], retried: bool, data: st.DataObject
) -> None:
    """The cut is not a block edge: the reasoning run it interrupts is in the partial as the
    server sent it, its trailing whitespace included (only its leading whitespace is the
    template's), as the whole response keeps it when more reasoning follows. And the partial
    says nothing the whole response contradicts, up to that undecided whitespace."""
    events = [_event({field: piece}) for field, piece in deltas]
    head = _event({"role": "assistant", "content": ""})
    arrived = data.draw(st.integers(0, len(deltas)), label="whole events")
    into_next = 0
    if arrived < len(deltas):  # part of the next event, never its closing blank line
        into_next = data.draw(st.integers(0, len(events[arrived]) - 2), label="into next")
    cut = len(head) + sum(map(len, events[:arrived])) + into_next
    body = head + b"".join(events)
    _, error = asyncio.run(_run(body[:cut], [], RETRY if retried else None))
    assert error is not None and error.partial_response is not None
    partial = error.partial_response
    run = ""  # the reasoning run the cut interrupted (deltas since the last content)
    for field, piece in deltas[:arrived]:
        run = run + piece if field == "reasoning_content" else ""
    if run.strip():
        assert partial.reasoning.endswith(run.lstrip()), (run, partial.reasoning)
    finish = b'data: {"id":"c","model":"m","created":1,"choices":[{"index":0,"delta":{},'
    finish += b'"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    full = asyncio.run(_full(body + finish))
    assert full.reasoning.startswith(partial.reasoning.rstrip()), (partial, full)
    assert full.text.startswith(partial.text.rstrip()), (partial, full)

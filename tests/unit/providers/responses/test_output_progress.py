"""The Responses wire client tells a head reader that output has started (issue 31).

Retry and failover hold a stream's head until its first substantive update, and a tool call is
substantive only once complete; past ``HELD_OUTPUT_LIMIT`` held updates they release the head
anyway, but only if the wire client reports that the server is writing output
(``providers.transport.output_watch``). The chat client always did; the Responses client did
not, so with ``api="responses"`` a long call was held whole, and a failure inside it was
retried as if nothing had reached the caller. These tests mirror the chat path's in
``tests/unit/providers/layers/test_stream_head.py``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from providers import (
    ChatResponse,
    ChatResponseUpdate,
    RetryingChatClient,
    RetryPolicy,
    StreamInterruptedError,
)
from providers.layers.fallback import FallbackChatClient
from providers.layers.stream_head import HELD_OUTPUT_LIMIT
from providers.responses import OpenAiCompatibleResponsesClient

BASE = "http://llm.test"


def _sse(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def _response(status: str, output: list[Any]) -> dict[str, Any]:
    return {"id": "r", "object": "response", "model": "m", "created_at": 1, "status": status,
            "output": output}  # fmt: skip


def _call(arguments: str, status: str) -> dict[str, Any]:
    return {"type": "function_call", "call_id": "call_1", "name": "write", "id": "fc_1",
            "arguments": arguments, "status": status}  # fmt: skip


def _tool_call_stream(fragments: int, *, complete: bool) -> bytes:
    """A call's arguments in ``fragments`` deltas; cut off (no terminal event) unless
    ``complete``."""
    pieces = ['{"text": "'] + ["x"] * (fragments - 2) + ['"}']
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": _response("in_progress", [])},
        {"type": "response.output_item.added", "output_index": 0,
         "item": _call("", "in_progress")},
    ]  # fmt: skip
    events += [
        {"type": "response.function_call_arguments.delta", "output_index": 0,
         "item_id": "fc_1", "delta": piece}
        for piece in pieces
    ]  # fmt: skip
    if complete:
        done = _call("".join(pieces), "completed")
        events += [
            {"type": "response.output_item.done", "output_index": 0, "item": done},
            {"type": "response.completed", "response": _response("completed", [done])},
        ]
    return _sse(*events)


def _wire(bodies: list[bytes], sent: list[int]) -> OpenAiCompatibleResponsesClient:
    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(1)
        body = bodies[min(len(sent), len(bodies)) - 1]
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    return OpenAiCompatibleResponsesClient(BASE, "m", http_client=http)


async def _no_wait(seconds: float) -> None:
    pass


@pytest.mark.parametrize(("fragments", "retried"), [(10, True), (200, False)])
async def test_a_cut_call_is_retried_while_short_and_surfaces_once_long(
    fragments: int, retried: bool
) -> None:
    sent: list[int] = []
    bodies = [
        _tool_call_stream(fragments, complete=False),
        _tool_call_stream(fragments, complete=True),
    ]
    client = RetryingChatClient(_wire(bodies, sent), RetryPolicy(), sleep=_no_wait)
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
        assert len(sent) == 1  # output had reached the caller: not started again
        assert raised.value.partial_response is not None
        [call] = raised.value.partial_response.tool_calls  # the half-written call is kept
        assert call.name == "write"
        assert len(updates) > HELD_OUTPUT_LIMIT  # the fragments came as they arrived


class _Paced(httpx.AsyncByteStream):
    """One event per network read, counting the reads handed out."""

    def __init__(self, body: bytes) -> None:
        self.events = [event + b"\n\n" for event in body.split(b"\n\n") if event]
        self.read = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for event in self.events:
            self.read += 1
            yield event


async def test_fallback_passes_a_long_call_on_before_it_completes() -> None:
    """The caller gets the call's first updates while the server is still writing it."""
    paced = _Paced(_tool_call_stream(HELD_OUTPUT_LIMIT * 3, complete=True))

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, stream=paced, headers={"content-type": "text/event-stream"})

    http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    main = OpenAiCompatibleResponsesClient(BASE, "m", http_client=http)
    client = FallbackChatClient(main, _wire([_tool_call_stream(3, complete=True)], []))
    read_at_first: int | None = None
    updates: list[ChatResponseUpdate] = []
    async for update in client.get_streaming_response("hi"):
        if read_at_first is None:
            read_at_first = paced.read
        updates.append(update)
    assert read_at_first is not None
    assert read_at_first < len(paced.events) // 2  # not held until the call was done
    [call] = ChatResponse.from_updates(updates).tool_calls
    assert call.arguments == {"text": "x" * (HELD_OUTPUT_LIMIT * 3 - 2)}

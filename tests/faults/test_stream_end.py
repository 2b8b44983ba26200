"""What follows ``data: [DONE]``: the client reads the end of the body, so the connection goes
back to the pool and the next request reuses it; a server that keeps the response open (or
breaks it) after ``[DONE]`` costs a bounded wait and the connection, never the answer."""

from __future__ import annotations

import time

from providers import ChatResponse, OpenAiCompatibleChatClient
from providers.chat_completions.stream_state import DRAIN_SECONDS
from tests.faults.helpers import FAST, HELLO, PROMPT, consume, stream_reply
from tests.faults.server import FaultServer, Reply


async def test_consecutive_streams_reuse_one_connection() -> None:
    server = FaultServer([stream_reply(*HELLO)])
    async with server, OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST) as client:
        for _ in range(3):
            updates, error = await consume(client.get_streaming_response(PROMPT))
            assert error is None
            assert ChatResponse.from_updates(updates).text == "Hello"
    assert server.attempts == 3
    assert server.connections == 1


async def test_a_server_stalling_after_done_costs_the_drain_budget_not_the_answer() -> None:
    server = FaultServer([Reply(pieces=HELLO, end="stall")])
    async with server, OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST) as client:
        for _ in range(2):
            started = time.monotonic()
            updates, error = await consume(client.get_streaming_response(PROMPT))
            took = time.monotonic() - started
            assert error is None
            assert ChatResponse.from_updates(updates).text == "Hello"
            assert took < DRAIN_SECONDS + 2  # the stall itself would last the server's 10 s
    assert server.connections == 2  # the stalled connection was not reused


async def test_a_connection_reset_after_done_is_not_an_error() -> None:
    async with (
        FaultServer([Reply(pieces=HELLO, end="reset")]) as server,
        OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST) as client,
    ):
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert error is None
    assert ChatResponse.from_updates(updates).text == "Hello"

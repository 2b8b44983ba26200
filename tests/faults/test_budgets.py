"""Time budgets (``Timeouts``) against a server that stalls, trickles or never accepts.

These wait for real, but for fractions of a second: the budgets are set short. Timeouts other
than connect are never retried (the server has the request; a retry repeats its prefill).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from providers import FunctionCallContent, OpenAiCompatibleChatClient
from providers.abstractions.errors import (
    ConfigurationError,
    ProviderConnectionError,
    ProviderTimeoutError,
)
from providers.chat_completions.client import DEFAULT_TIMEOUT, Timeouts
from tests.faults.helpers import (
    COMPLETION,
    DONE,
    HEL,
    HELLO,
    LO,
    PROMPT,
    ROLE,
    STOP,
    TOOL_DONE,
    Waits,
    client_for,
    consume,
    seen_text,
    stream_reply,
)
from tests.faults.server import GATE, FaultServer, Reply, chunk, sse


async def test_stall_longer_than_the_idle_budget_keeps_the_partial() -> None:
    waits = Waits()
    async with (
        FaultServer([stream_reply(ROLE, HEL, end="stall"), stream_reply(*HELLO)]) as server,
        client_for(server.base_url, waits, idle=0.2) as client,
    ):
        started = time.monotonic()
        updates, error = await consume(client.get_streaming_response(PROMPT))
        elapsed = time.monotonic() - started
    assert isinstance(error, ProviderTimeoutError)
    assert isinstance(error, TimeoutError)  # the builtin: the issue's `TimeoutError`
    assert (error.phase, error.budget) == ("idle", 0.2)
    assert seen_text(updates) == "Hel"
    assert error.partial_response is not None and error.partial_response.text == "Hel"
    assert 0.2 <= elapsed < 2.0
    assert server.attempts == 1
    assert waits == []


async def test_silent_prefill_longer_than_the_idle_budget_is_fine() -> None:
    # vLLM and SGLang send nothing at all while they prefill; llama.cpp even holds the headers.
    waits = Waits()
    slow = Reply(pieces=[ROLE, 0.1, HEL, 0.1, LO, STOP, DONE], header_delay=0.4)
    async with (
        FaultServer([slow]) as server,
        client_for(server.base_url, waits, idle=0.3, first_token=2.0) as client,
    ):
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert error is None
    assert seen_text(updates) == "Hello"


async def test_keepalives_do_not_stop_the_first_token_budget() -> None:
    waits = Waits()
    pinging = Reply(pieces=[ROLE], end="stall", keepalive=0.05)
    async with (
        FaultServer([pinging, stream_reply(*HELLO)]) as server,
        client_for(server.base_url, waits, first_token=0.3, idle=0.1) as client,
    ):
        started = time.monotonic()
        updates, error = await consume(client.get_streaming_response(PROMPT))
        elapsed = time.monotonic() - started
    assert isinstance(error, ProviderTimeoutError)
    assert (error.phase, error.budget) == ("first_token", 0.3)
    assert updates == []  # the role chunk was held by the retry layer, then dropped
    assert 0.3 <= elapsed < 2.0
    assert server.attempts == 1  # not retried: the server was working on it
    assert waits == []


async def test_a_tool_call_written_slowly_is_output_for_the_first_token_budget() -> None:
    # Its deltas become a FunctionCallContent only when the call is complete; a long call (a
    # file's content as an argument) may take longer than the first-token budget to write.
    waits = Waits()

    def arguments(text: str) -> bytes:
        return sse(chunk({"tool_calls": [{"index": 0, "function": {"arguments": text}}]}))

    start = {"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather"}}
    pieces: list[bytes | float] = [
        ROLE,
        sse(chunk({"tool_calls": [start]})),
        arguments('{"city": '),
    ]
    for _ in range(12):  # 0.6 s of deltas, none longer apart than 0.05 s
        pieces += [0.05, arguments(" ")]
    pieces += [arguments('"Paris"}'), TOOL_DONE, DONE]
    slow_call = Reply(pieces=pieces)
    async with (
        FaultServer([slow_call]) as server,
        client_for(server.base_url, waits, first_token=0.2, idle=0.5) as client,
    ):
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert error is None
    calls = [c for u in updates for c in u.contents if isinstance(c, FunctionCallContent)]
    assert [(c.name, c.arguments) for c in calls] == [("get_weather", {"city": "Paris"})]
    assert server.attempts == 1


async def test_trickling_stream_hits_the_total_deadline() -> None:
    waits = Waits()
    trickle = Reply(pieces=[ROLE, HEL, *[0.05, LO] * 40, STOP, DONE])
    async with (
        FaultServer([trickle]) as server,
        client_for(server.base_url, waits, total=0.4, idle=1.0) as client,
    ):
        updates, error = await consume(client.get_streaming_response(PROMPT))
    assert isinstance(error, ProviderTimeoutError)
    assert error.phase == "total"
    assert error.partial_response is not None
    assert error.partial_response.text == seen_text(updates)
    assert seen_text(updates).startswith("Hello")
    assert server.attempts == 1


async def test_a_slow_caller_is_not_timed_out_and_its_own_awaits_are_not_cancelled() -> None:
    # The idle budget times the server, not the caller: while the caller holds an update the
    # watchdog must not cancel the task (it would cancel the caller's own sleep).
    waits = Waits()
    script = [stream_reply(ROLE, HEL, GATE, LO, STOP, DONE)]
    async with (
        FaultServer(script) as server,
        client_for(server.base_url, waits, idle=0.1, first_token=0.1) as client,
    ):
        seen = []
        async for update in client.get_streaming_response(PROMPT):
            seen.append(update)
            await asyncio.sleep(0.3)  # three idle budgets
            server.release()
    assert seen_text(seen) == "Hello"


async def test_non_streamed_call_has_a_total_deadline() -> None:
    waits = Waits()
    slow = Reply(pieces=[COMPLETION], content_type="application/json", header_delay=1.0)
    async with (
        FaultServer([slow]) as server,
        client_for(server.base_url, waits, total=0.2, first_token=0.05) as client,
    ):
        with pytest.raises(ProviderTimeoutError) as caught:
            await client.get_response(PROMPT)
    assert (caught.value.phase, caught.value.budget) == ("total", 0.2)
    assert server.attempts == 1
    assert waits == []


async def test_non_streamed_call_ignores_the_first_token_budget() -> None:
    waits = Waits()
    slow = Reply(pieces=[COMPLETION], content_type="application/json", header_delay=0.3)
    async with (
        FaultServer([slow]) as server,
        client_for(server.base_url, waits, first_token=0.05, idle=0.05) as client,
    ):
        response = await client.get_response(PROMPT)
    assert response.text == "Hello"


async def test_the_callers_own_timeout_is_not_mistaken_for_a_budget() -> None:
    waits = Waits()
    async with (
        FaultServer([stream_reply(ROLE, HEL, end="stall")]) as server,
        client_for(server.base_url, waits) as client,
    ):
        with pytest.raises(TimeoutError) as caught:
            async with asyncio.timeout(0.2):
                await consume(client.get_streaming_response(PROMPT))
    assert type(caught.value) is TimeoutError  # asyncio's, not a ProviderTimeoutError
    assert server.attempts == 1


@contextlib.contextmanager
def full_backlog() -> Iterator[int]:
    """A loopback port whose accept queue is full: the kernel drops new SYNs, connect hangs."""
    listener = socket.socket()
    fillers: list[socket.socket] = []
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        for _ in range(4):
            filler = socket.socket()
            filler.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                filler.connect(("127.0.0.1", port))
            fillers.append(filler)
        time.sleep(0.1)
        yield port
    finally:
        for filler in fillers:
            filler.close()
        listener.close()


async def test_connect_timeout_is_retried_then_surfaces() -> None:
    waits = Waits()
    with full_backlog() as port:
        async with client_for(f"http://127.0.0.1:{port}", waits, connect=0.2) as client:
            updates, error = await consume(client.get_streaming_response(PROMPT))
    if not isinstance(error, ProviderTimeoutError):
        pytest.skip(f"this kernel does not hang connects on a full backlog: {error!r}")
    assert (error.phase, error.budget) == ("connect", 0.2)
    assert updates == []
    assert waits == [0.25, 0.5]  # three attempts
    assert error.retry_attempts == 2


# --- the Timeouts record ---------------------------------------------------------------------


@pytest.mark.parametrize("field", ["connect", "first_token", "idle", "total"])
@pytest.mark.parametrize("value", [0, -1.0, "5"])
def test_timeouts_reject_non_positive_values(field: str, value: object) -> None:
    with pytest.raises(ConfigurationError):
        Timeouts(**{field: value})  # type: ignore[arg-type]


def test_timeouts_none_disables_a_budget() -> None:
    assert Timeouts(None, None, None, None).httpx_timeout() == httpx.Timeout(None)


def test_defaults_are_documented_values() -> None:
    assert Timeouts() == Timeouts(connect=10.0, first_token=600.0, idle=120.0, total=3600.0)


def test_httpx_gets_only_the_connect_budget() -> None:
    assert Timeouts(connect=3).httpx_timeout() == httpx.Timeout(
        connect=3, read=None, write=None, pool=None
    )


def test_old_timeout_argument_is_read_as_budgets() -> None:
    assert Timeouts.from_httpx(httpx.Timeout(30, connect=4)) == Timeouts(4, 30, 30, None)
    assert Timeouts.from_httpx(12.0) == Timeouts(12.0, 12.0, 12.0, None)
    client = OpenAiCompatibleChatClient("http://127.0.0.1:9", timeout=httpx.Timeout(30, connect=4))
    assert client.timeouts == Timeouts(4, 30, 30, None)
    assert OpenAiCompatibleChatClient("http://127.0.0.1:9").timeouts == Timeouts()
    explicit = Timeouts(idle=7)
    assert OpenAiCompatibleChatClient("http://127.0.0.1:9", timeouts=explicit).timeouts == explicit
    assert DEFAULT_TIMEOUT.connect == Timeouts().connect


async def test_credentials_in_the_url_stay_out_of_connection_errors() -> None:
    waits = Waits()
    with full_backlog() as port:
        pass  # the port is closed now: connections are refused
    client = client_for(f"http://user:hunter2@127.0.0.1:{port}", waits)
    async with client:
        with pytest.raises(ProviderConnectionError) as caught:
            await client.get_response(PROMPT)
    assert "hunter2" not in str(caught.value)

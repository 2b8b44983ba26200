"""A client works from any event loop that calls it (issue #22 part 2): its own connection pool is
per loop, ends with its loop, and a misuse it cannot serve is a typed ``EventLoopError``.

The server is a real loopback HTTP/1.1 server on a thread of its own that keeps connections alive,
which is what carried a pooled connection from one ``asyncio.run`` into the next before.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator

import httpx
import pytest

from providers import (
    ChatClient,
    ChatResponse,
    EventLoopError,
    OpenAiCompatibleChatClient,
    OpenAiCompatibleResponsesClient,
    ProviderError,
    create_chat_client,
)
from tests.unit.architecture.import_graph import ROOT
from tests.unit.loopback_http import LoopbackChat, loopback_chat


@pytest.fixture
def chat() -> Iterator[LoopbackChat]:
    with loopback_chat() as server:
        yield server


async def _streamed(client: ChatClient) -> str:
    return ChatResponse.from_updates([u async for u in client.get_streaming_response("hi")]).text


@pytest.mark.parametrize("pipeline", [False, True], ids=["bare", "standard-pipeline"])
def test_three_asyncio_runs_with_one_client(chat: LoopbackChat, pipeline: bool) -> None:
    client: ChatClient = (
        create_chat_client(chat.base_url, "m")
        if pipeline
        else OpenAiCompatibleChatClient(chat.base_url, "m")
    )
    for _ in range(3):
        assert asyncio.run(client.get_response("hi")).text == "Hello there!"
    for _ in range(3):
        assert asyncio.run(_streamed(client)) == "Hello there!"
    assert chat.requests == 6  # (each once: no retry hid a failure)


def test_three_asyncio_runs_with_one_responses_client(chat: LoopbackChat) -> None:
    client = OpenAiCompatibleResponsesClient(chat.base_url, "m")
    for _ in range(3):
        assert asyncio.run(client.get_response("hi")).text == "Hello there!"


def test_a_loops_pool_ends_with_the_loop(chat: LoopbackChat) -> None:
    client = OpenAiCompatibleChatClient(chat.base_url, "m")

    async def ask() -> int:
        await client.get_response("hi")
        return len(client._pools or ())

    assert asyncio.run(ask()) == 1
    assert len(client._pools or ()) == 0  # (closed by the loop's shutdown, on the loop)


def test_nothing_leaks_or_warns_across_loops() -> None:
    """``-X dev -W error``: an unclosed socket or transport, or a coroutine never awaited,
    would be printed to stderr (and a ResourceWarning raised where it can be)."""
    script = textwrap.dedent(
        """
        import asyncio, gc
        from providers import OpenAiCompatibleChatClient, create_chat_client
        from tests.unit.loopback_http import loopback_chat

        with loopback_chat() as chat:
            for client in (OpenAiCompatibleChatClient(chat.base_url, "m"),
                           create_chat_client(chat.base_url, "m")):
                for _ in range(3):
                    asyncio.run(client.get_response("hi"))
                # Loops closed by hand, without shutting their async generators down:
                for _ in range(2):
                    loop = asyncio.new_event_loop()
                    loop.run_until_complete(client.get_response("hi"))
                    loop.close()
                asyncio.run(client.get_response("hi"))  # (meets the closed loops' pools)
                loop = asyncio.new_event_loop()
                loop.run_until_complete(client.get_response("hi"))
                loop.close()
                del client, loop  # (collected with a closed loop's pool)
                gc.collect()
            sync = OpenAiCompatibleChatClient(chat.base_url, "m").as_sync()
            sync.get_response("hi")
            del sync  # (dropped without close)
            gc.collect()
        print("done")
        """
    )
    result = subprocess.run(
        [sys.executable, "-X", "dev", "-W", "error", "-c", script],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(ROOT)},
    )
    assert result.stdout.strip() == "done", result.stderr
    # (-X dev's slow-callback notes are not leaks)
    stderr = [line for line in result.stderr.splitlines() if "took" not in line]
    assert stderr == []


def test_aclose_closes_this_loops_pool_and_the_client_stays_usable(chat: LoopbackChat) -> None:
    client = OpenAiCompatibleChatClient(chat.base_url, "m")
    loop = asyncio.new_event_loop()
    loop.run_until_complete(client.get_response("hi"))
    loop.close()  # (by hand: its pool stays behind)

    async def close_then_ask() -> tuple[bool, int, str]:
        await client.get_response("hi")
        used = client._http
        await client.aclose()
        closed, left = used.is_closed, len(client._pools or ())
        return closed, left, (await client.get_response("hi")).text

    assert asyncio.run(close_then_ask()) == (True, 0, "Hello there!")


def test_a_borrowed_http_client_used_from_a_second_loop_is_a_typed_error(
    chat: LoopbackChat,
) -> None:
    # (no connection kept alive, so none is left on the first loop: the refusal is the rule,
    # not an accident of a pooled connection)
    http = httpx.AsyncClient(limits=httpx.Limits(max_keepalive_connections=0))
    client = OpenAiCompatibleChatClient(chat.base_url, "m", http_client=http)
    assert asyncio.run(client.get_response("hi")).text == "Hello there!"
    with pytest.raises(EventLoopError) as caught:
        asyncio.run(client.get_response("hi"))
    assert isinstance(caught.value, ProviderError)
    assert "http_client" in str(caught.value)

    async def stream() -> str:
        return await _streamed(client)

    with pytest.raises(EventLoopError):
        asyncio.run(stream())
    asyncio.run(http.aclose())


def test_a_borrowed_http_client_shared_by_two_running_loops_is_a_typed_error(
    chat: LoopbackChat,
) -> None:
    chat.gap = 0.2
    http = httpx.AsyncClient()
    client = OpenAiCompatibleChatClient(chat.base_url, "m", http_client=http)
    started = threading.Event()
    results: list[str] = []

    async def first() -> None:
        stream = client.get_streaming_response("hi")
        async for update in stream:
            started.set()
            results.append(update.text)
        await http.aclose()

    thread = threading.Thread(target=lambda: asyncio.run(first()))
    thread.start()
    try:
        assert started.wait(5.0)
        with pytest.raises(EventLoopError):
            asyncio.run(client.get_response("hi"))
    finally:
        thread.join()
    assert "".join(results) == "Hello there!"


def test_capabilities_resolve_from_each_loop(chat: LoopbackChat) -> None:
    """The resolver's per-model locks and its pool follow the calling loop: two waiting
    callers bind an asyncio.Lock to their loop, which a second loop could not wait on."""
    client = OpenAiCompatibleChatClient(chat.base_url, "m")

    async def twice() -> tuple[object, object]:
        first, second = await asyncio.gather(
            client.get_capabilities(refresh=True), client.get_capabilities(refresh=True)
        )
        return first, second

    answers = [asyncio.run(twice()) for _ in range(3)]
    # Every loop got an answer, the same one: none failed on a lock bound to an earlier loop.
    assert answers[0][0] is not None
    assert all(first == second == answers[0][0] for first, second in answers)


def test_the_same_client_serves_a_sync_wrapper_and_the_callers_loop(chat: LoopbackChat) -> None:
    client = OpenAiCompatibleChatClient(chat.base_url, "m")
    with client.as_sync() as sync:

        async def both() -> tuple[str, str]:
            mine = await client.get_response("hi")
            theirs = await asyncio.to_thread(sync.get_response, "hi")
            return mine.text, theirs.text

        for _ in range(2):
            assert asyncio.run(both()) == ("Hello there!", "Hello there!")

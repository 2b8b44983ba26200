"""Session affinity through the real routers (issue #22 part 3): vllm-router and smg on loopback,
each in front of the same two fake workers, which record which conversation reached them.

With the affinity layer, every conversation stays on one worker across its three turns (one of
them streamed) and a retry, and the conversations use both workers. Without it, smg spreads
the requests at random (both workers get some); vllm-router 0.1.17's ``consistent_hash`` hashes
an empty key when none is sent, so every request lands on one worker (no spreading, and so no
use of the second replica's cache at all).
"""

from __future__ import annotations

import contextlib
import json
from collections import defaultdict
from collections.abc import AsyncIterator

import httpx

from providers import (
    ChatClient,
    ChatMessage,
    DelegatingChatClient,
    RetryPolicy,
    SessionAffinity,
    create_chat_client,
)
from tests.integration.routers.fake_worker import MODEL, FakeWorker
from tests.integration.routers.routers import RouterServer

CONVERSATIONS = 16
"""Enough that all keyed conversations landing on one of two workers by chance is 2**-15."""
TURNS = 3
RETRIED_TURN = 3
NO_WAIT = RetryPolicy(base_delay=0, max_delay=0)


class SentKeys:
    """What the client sent, seen from its side (a router need not forward the key header:
    smg drops one it read through ``--routing-key-headers``): conversation → key values."""

    def __init__(self, header: str) -> None:
        self.header = header
        self.keys: dict[str, set[str | None]] = defaultdict(set)

    async def __call__(self, request: httpx.Request) -> None:
        users = [m for m in json.loads(request.content)["messages"] if m["role"] == "user"]
        self.keys[users[0]["content"]].add(request.headers.get(self.header))


@contextlib.asynccontextmanager
async def pipeline(
    router: RouterServer, affinity: SessionAffinity | None, sent: SentKeys
) -> AsyncIterator[DelegatingChatClient]:
    """The standard pipeline through ``router``, its requests seen by ``sent``."""
    async with httpx.AsyncClient(event_hooks={"request": [sent]}) as http:
        client = create_chat_client(
            router.base_url,
            MODEL,
            retry=NO_WAIT,
            telemetry=False,
            session_affinity=affinity,
            http_client=http,
        )
        assert isinstance(client, DelegatingChatClient)
        async with client:
            yield client


async def converse(client: ChatClient, workers: tuple[FakeWorker, FakeWorker]) -> None:
    """``CONVERSATIONS`` conversations of ``TURNS`` turns, the second streamed; before the
    ``RETRIED_TURN``th both workers fail their next request once, so the client retries it."""
    for number in range(CONVERSATIONS):
        messages = [ChatMessage.system("You are terse."), ChatMessage.user(f"topic {number}")]
        for turn in range(1, TURNS + 1):
            if turn == RETRIED_TURN:
                for worker in workers:
                    worker.fail_next = 1
            if turn == 2:
                updates = [u async for u in client.get_streaming_response(messages)]
                text = "".join(u.text for u in updates)
            else:
                text = (await client.get_response(messages)).text
            for worker in workers:
                worker.fail_next = 0
            assert text.startswith("from worker-")
            messages += [ChatMessage.assistant(text), ChatMessage.user(f"turn {turn + 1}")]


def placement(workers: tuple[FakeWorker, FakeWorker]) -> tuple[dict[str, set[str]], int]:
    """Conversation (its opening) → the workers that got it; and how many chat requests the
    workers got in all."""
    where: dict[str, set[str]] = defaultdict(set)
    count = 0
    for worker in workers:
        for request in worker.chats():
            assert request.opening is not None
            where[request.opening].add(worker.name)
            count += 1
    return where, count


def assert_each_conversation_stays_on_one_worker(
    workers: tuple[FakeWorker, FakeWorker], sent: SentKeys
) -> None:
    where, count = placement(workers)
    keys = sent.keys
    assert len(where) == CONVERSATIONS
    assert count == CONVERSATIONS * (TURNS + 1)  # every turn, and the failed attempt
    assert {opening: len(names) for opening, names in where.items()} == dict.fromkeys(where, 1)
    assert all(len(sent) == 1 and None not in sent for sent in keys.values()), keys
    assert len({key for sent in keys.values() for key in sent}) == CONVERSATIONS
    assert set().union(*where.values()) == {"worker-a", "worker-b"}, "no spreading at all"


async def test_vllm_router_keeps_each_conversation_on_one_worker(
    vllm_router: RouterServer, clean_workers: tuple[FakeWorker, FakeWorker]
) -> None:
    sent = SentKeys("X-Session-ID")
    async with pipeline(vllm_router, SessionAffinity("vllm-router"), sent) as client:
        await converse(client, clean_workers)
    assert_each_conversation_stays_on_one_worker(clean_workers, sent)


async def test_vllm_router_without_the_key_puts_everything_on_one_worker(
    vllm_router: RouterServer, clean_workers: tuple[FakeWorker, FakeWorker]
) -> None:
    sent = SentKeys("X-Session-ID")
    async with pipeline(vllm_router, None, sent) as client:
        await converse(client, clean_workers)
    where, _ = placement(clean_workers)
    assert all(keys == {None} for keys in sent.keys.values())
    assert len(set().union(*where.values())) == 1


async def test_smg_keeps_each_conversation_on_one_worker(
    smg: RouterServer, clean_workers: tuple[FakeWorker, FakeWorker]
) -> None:
    sent = SentKeys("X-SMG-Routing-Key")
    async with pipeline(smg, SessionAffinity("smg"), sent) as client:
        await converse(client, clean_workers)
    assert_each_conversation_stays_on_one_worker(clean_workers, sent)


async def test_smg_without_the_key_spreads_the_requests(
    smg: RouterServer, clean_workers: tuple[FakeWorker, FakeWorker]
) -> None:
    sent = SentKeys("X-SMG-Routing-Key")
    async with pipeline(smg, None, sent) as client:
        await converse(client, clean_workers)
    where, count = placement(clean_workers)
    assert all(keys == {None} for keys in sent.keys.values())
    assert all(worker.chats() for worker in clean_workers)  # both workers got requests
    # At random, each conversation's four requests share a worker with odds 1/8; all sixteen
    # doing so, 2**-48: some conversation was split, its cache built twice.
    assert any(len(names) == 2 for names in where.values()), count


async def test_a_configured_header_with_smg_reading_it(
    smg_user_key: RouterServer, clean_workers: tuple[FakeWorker, FakeWorker]
) -> None:
    sent = SentKeys("x-user-id")
    async with pipeline(smg_user_key, SessionAffinity("header", "x-user-id"), sent) as client:
        await converse(client, clean_workers)
    assert_each_conversation_stays_on_one_worker(clean_workers, sent)

"""Fifty streams at once through one client, against one llama-server with fifty slots.

Each stream is forced to its own short text (``#0`` … ``#49``), so besides "every stream
finished" the test sees that no stream got another's tokens. The server runs ``--parallel 50``
with continuous batching and enough HTTP threads that every connection is served at once
(llama-server's default is ``max(parallel + 2, cores - 1)`` threads; a connection beyond them
waits in the accept queue). Retry is off in the client: an error must surface, not be papered
over.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import aclosing
from typing import Any

import pytest

from providers import ChatOptions, ChatResponse
from providers.abstractions.chat_client import ChatClient
from providers.factory import create_chat_client
from tests.integration.llama_server import LlamaServer, forcing_grammar

STREAMS = 50
SLOT_CONTEXT = 128  # tokens per slot: the Qwen2.5 system prompt, a short question, a short answer


@pytest.fixture
def fifty_slot_server(rig: dict[str, Any]) -> Iterator[LlamaServer]:
    with LlamaServer(
        rig["model"],
        chat_template_file=rig["templates"]["qwen25"],
        ctx_size=STREAMS * SLOT_CONTEXT,
        parallel=STREAMS,
        extra_args=["--cont-batching", "--threads-http", str(STREAMS + 4)],
    ) as server:
        yield server


async def one_stream(client: ChatClient, index: int) -> ChatResponse:
    text = f"#{index}"
    options = ChatOptions(
        max_output_tokens=8, additional_properties={"grammar": forcing_grammar(text)}
    )
    updates = [u async for u in client.get_streaming_response(f"Stream {index}?", options)]
    return ChatResponse.from_updates(updates)


async def test_fifty_concurrent_streams_all_complete(
    fifty_slot_server: LlamaServer, record_property: Any
) -> None:
    client = create_chat_client(fifty_slot_server.base_url, backend="llamacpp", retry=None)
    async with aclosing(client):
        started = time.monotonic()
        results = await asyncio.gather(
            *(one_stream(client, i) for i in range(STREAMS)), return_exceptions=True
        )
        wall = time.monotonic() - started
    errors = [r for r in results if isinstance(r, BaseException)]
    assert errors == []
    responses = [r for r in results if isinstance(r, ChatResponse)]
    assert [r.text for r in responses] == [f"#{i}" for i in range(STREAMS)]  # nobody's mixed up
    for response in responses:
        assert response.finish_reason == "stop"
        assert response.usage is not None
        assert response.usage.input_token_count and response.usage.output_token_count
    assert len({r.response_id for r in responses}) == STREAMS
    record_property("wall_seconds", round(wall, 2))
    print(f"\n{STREAMS} concurrent streams: {wall:.2f} s wall")

"""One client, many event loops, and the blocking API, against a real llama-server (issue #22
part 2).

llama-server keeps the connection of a non-streamed answer alive, which is what carried a pooled
connection from one ``asyncio.run`` into the next and failed the second call with asyncio's bare
``RuntimeError``. Retry is off where it could hide such a failure behind a second attempt.
"""

from __future__ import annotations

import asyncio
from typing import Any

from providers import (
    ChatClient,
    ChatOptions,
    ChatResponse,
    OpenAiCompatibleChatClient,
    create_chat_client,
)
from tests.integration.llama_server import forcing_grammar

TEXT = "It is sunny in Paris."


def _options() -> ChatOptions:
    return ChatOptions(
        max_output_tokens=24, additional_properties={"grammar": forcing_grammar(TEXT)}
    )


async def _streamed(client: ChatClient) -> str:
    updates = [u async for u in client.get_streaming_response("Weather?", _options())]
    return ChatResponse.from_updates(updates).text


def test_three_asyncio_runs_with_one_client(plain_server: Any) -> None:
    bare = OpenAiCompatibleChatClient(plain_server.base_url, backend="llamacpp")
    pipeline = create_chat_client(plain_server.base_url, backend="llamacpp", retry=None)
    for client in (bare, pipeline):
        for _ in range(3):
            answer = asyncio.run(client.get_response("Weather?", _options()))
            assert answer.text == TEXT
        for _ in range(3):
            assert asyncio.run(_streamed(client)) == TEXT


def test_a_sync_stream_and_a_stream_left_early(plain_server: Any) -> None:
    client = create_chat_client(plain_server.base_url, backend="llamacpp", retry=None)
    with client.as_sync() as sync:  # type: ignore[attr-defined]
        updates = list(sync.get_streaming_response("Weather?", _options()))
        assert ChatResponse.from_updates(updates).text == TEXT
        for _ in sync.get_streaming_response("Weather?", _options()):
            break  # (closes the request; the next one goes through)
        assert sync.get_response("Weather?", _options()).text == TEXT

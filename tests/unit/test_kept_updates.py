"""What a kept update holds (issue 21: an application keeps every update of every stream).

The standard pipeline hands the caller the very updates the wire client made when no layer has
anything to change, and an update a layer edits keeps no bytes of its event where the stream's
event template stands for them. Both are checked on the objects, not on a memory figure: a
layer that copies updates, or an edit that writes the event out, fails here."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from providers import ChatResponse, ChatResponseUpdate, ChunkNormalizer, create_chat_client
from providers.chat_completions.event_templates import EventTemplate

BASE = "http://server.test/v1"
TEXTS = ["It", " is", " sunny", " in", " Paris", ".", "\n", "Tomorrow", " rain", " ", "too"] * 6


def _chunk(text: str | None, finish: str | None = None) -> dict[str, Any]:
    delta = {} if text is None else {"content": text}
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [choice]}  # fmt: skip


def _body() -> bytes:
    chunks = [_chunk(text) for text in TEXTS] + [_chunk(None, "stop")]
    events = [f"data: {json.dumps(c, separators=(',', ':'))}\n\n".encode() for c in chunks]
    return b"".join(events) + b"data: [DONE]\n\n"


TEMPLATED: set[int] = set()
"""The ``id`` of each update in ``made`` that was read from the stream's event template."""


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> list[ChatResponseUpdate]:
    """Every update the wire client's normaliser makes, in order."""
    made: list[ChatResponseUpdate] = []
    read = ChunkNormalizer.read_events
    TEMPLATED.clear()

    def recording(self: ChunkNormalizer, events: list[bytes]) -> Any:
        updates, error = read(self, events)
        made.extend(updates)
        TEMPLATED.update(id(u) for u in updates if isinstance(u._event, EventTemplate))
        return updates, error

    monkeypatch.setattr(ChunkNormalizer, "read_events", recording)
    return made


async def _stream() -> list[ChatResponseUpdate]:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=_body(), headers={"content-type": "text/event-stream"})

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    client = create_chat_client(BASE, "m", backend="vllm", http_client=http)
    try:
        return [u async for u in client.get_streaming_response("hi")]
    finally:
        await client.aclose()
        await http.aclose()


async def test_the_pipeline_hands_on_the_wire_clients_updates(
    made: list[ChatResponseUpdate],
) -> None:
    """No layer of ``create_chat_client`` makes an update of its own for a chunk: the caller
    keeps one object per chunk, the wire client's (edited in place where a layer edits)."""
    got = await _stream()
    assert len(got) == len(made) == len(TEXTS) + 1
    assert all(mine is theirs for mine, theirs in zip(got, made, strict=True))
    assert ChatResponse.from_updates(got).text == "".join(TEXTS)


async def test_an_edited_update_keeps_no_bytes_its_template_stands_for(
    made: list[ChatResponseUpdate],
) -> None:
    """Text recovery trims the whitespace at an edge (``" "`` before ``"too"`` waits for the
    next text), which folds the update; one read from the event template must still hold the
    template, not the event's bytes written out, and ``raw`` must still be the server's chunk."""
    got = await _stream()
    edited = [
        (index, update)
        for index, update in enumerate(got)
        if id(update) in TEMPLATED and update.unfolded_text is None
    ]
    assert edited  # (the stream has whitespace-only texts read from the template)
    assert all(isinstance(update._event, EventTemplate) for _, update in edited)
    for index, update in edited:
        assert update.raw == _chunk(TEXTS[index])

"""What a kept update holds (issue 21: an application keeps every update of every stream).

The standard pipeline hands the caller the very updates the wire client made when no layer has
anything to change, and an update a layer edits keeps no bytes of its event where the stream's
event template stands for them. Both are checked on the objects, not on a memory figure: a
layer that copies updates, or an edit that writes the event out, fails here."""

from __future__ import annotations

import copy
import json
import pickle
from typing import Any

import httpx
import pytest

from providers import (
    ChatFinishReason,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    ChunkNormalizer,
    TextContent,
    create_chat_client,
)
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


async def test_an_edited_update_is_as_small_as_one_left_alone(
    made: list[ChatResponseUpdate],
) -> None:
    """Text recovery trims the whitespace at a line's edge (``" "`` before ``"too"`` waits for
    the next text, which takes it), folding the updates it edits. One read from the event
    template must end as small as one left alone: no list of contents (unfolded again) and
    no bytes of its event (the template still writes them), with ``raw`` the server's chunk."""
    got = await _stream()
    templated = [(i, update) for i, update in enumerate(got) if id(update) in TEMPLATED]
    edited = [(i, update) for i, update in templated if update.text != TEXTS[i]]
    assert len(templated) > len(TEXTS) // 2 and edited  # (the stream exercises both)
    for index, update in templated:
        assert update._contents is None, update  # (the text, or none, in the update itself)
        assert not isinstance(update._event, bytes)
        assert update.raw == _chunk(TEXTS[index])
    # Held whitespace moves to the next text: "\n" then "Tomorrow" reach the caller as ""
    # and "\nTomorrow".
    assert {(TEXTS[i], update.text) for i, update in edited} == {
        ("\n", ""),
        ("Tomorrow", "\nTomorrow"),
        (" ", ""),
        ("too", " too"),
    }
    assert ChatResponse.from_updates(got).text == "".join(TEXTS)


async def test_a_streams_updates_share_their_ids_and_time(made: list[ChatResponseUpdate]) -> None:
    """``response_id``, ``model_id`` and ``created_at`` are one shared head per stream (a slot
    an update, not three), and setting one on an update changes that update only."""
    got = await _stream()
    assert len({id(update.head) for update in got}) <= 2  # (the template's, the full path's)
    first, second = got[1], got[2]
    assert first.head is second.head
    first.response_id, first.model_id, first.created_at = "other", "m2", 9
    assert (first.response_id, first.model_id, first.created_at) == ("other", "m2", 9)
    assert (second.response_id, second.model_id, second.created_at) == ("c1", "m", 1)
    assert first.raw == _chunk(TEXTS[1])  # (the event is the server's still)


def test_the_packed_fields_read_and_write_as_the_dataclasss_did() -> None:
    props = {"k": 1}
    update = ChatResponseUpdate(
        [TextContent("a")], ChatRole.ASSISTANT, ChatFinishReason.STOP, "r", "m", 5, 2, props, {}
    )
    assert (update.role, update.finish_reason, update.additional_properties) == (
        ChatRole.ASSISTANT,
        ChatFinishReason.STOP,
        props,
    )
    assert (update.response_id, update.model_id, update.created_at) == ("r", "m", 5)
    assert update.choice_index == 2 and update.raw == {}
    plain = ChatResponseUpdate([TextContent("a")], response_id="r", model_id="m", created_at=5)
    assert plain._rare is None and plain.head is update.head  # (one head for equal values)
    plain.finish_reason = ChatFinishReason.LENGTH
    assert plain.finish_reason == ChatFinishReason.LENGTH and plain.role is None
    plain.finish_reason = None
    assert plain._rare is None
    plain.additional_properties = {}
    assert plain.additional_properties == {} and plain._rare is not None
    update.additional_properties["k"] = 2  # (the dict itself, not a copy)
    assert props == {"k": 2}
    # Another type is another value, as on the dataclass: 1.0 is not shared with 1's head.
    assert type(ChatResponseUpdate(created_at=1.0).created_at) is float
    assert type(ChatResponseUpdate(created_at=1).created_at) is int


def test_equality_repr_copy_pickle_and_match_are_the_dataclasss() -> None:
    update = ChatResponseUpdate(
        [TextContent("a")], ChatRole.ASSISTANT, None, "r", "m", 5, 0, {"k": 1}, {"raw": 1}
    )
    same = ChatResponseUpdate(
        [TextContent("a")], ChatRole.ASSISTANT, None, "r", "m", 5, 0, {"k": 1}
    )
    assert update == same  # (raw excluded)
    assert update != ChatResponseUpdate([TextContent("a")], None, None, "r", "m", 5, 0, {"k": 1})
    assert repr(update) == (
        "ChatResponseUpdate(contents=[TextContent(additional_properties=None, text='a')], "
        "role=ChatRole('assistant'), finish_reason=None, response_id='r', model_id='m', "
        "created_at=5, choice_index=0, additional_properties={'k': 1})"
    )
    for again in (pickle.loads(pickle.dumps(update)), copy.copy(update), copy.deepcopy(update)):
        assert again == update and again.raw == {"raw": 1}
    match update:
        case ChatResponseUpdate(contents, role, None, "r", "m", 5, 0, props):
            assert contents == [TextContent("a")] and role == ChatRole.ASSISTANT
            assert props == {"k": 1}
        case _:
            pytest.fail("did not match")


class _LooksLikeATemplate:
    def event_of(self, text: str) -> bytes:
        raise AssertionError("a raw value was read as an event")


@pytest.mark.parametrize("value", [None, {"id": "c"}, b'{"id": "c"}', _LooksLikeATemplate()])
def test_raw_is_what_was_given_whatever_it_is(value: Any) -> None:
    """``raw`` shares its slot with the unread event; a given value is never read as one."""
    assert ChatResponseUpdate(raw=value).raw is value
    update = ChatResponseUpdate()
    update.raw = value
    assert update.raw is value and update.raw is value  # (and reading it changes nothing)
    if not isinstance(value, _LooksLikeATemplate):  # (compared by identity: not after pickle)
        assert pickle.loads(pickle.dumps(update)).raw == value


def test_replace_text_keeps_a_plain_update_plain_and_refuses_another() -> None:
    """``replace_text`` is how text recovery moves whitespace without unfolding an update: the
    text changes, the update stays plain, ``raw`` stays the server's chunk. An update with a
    contents list is not plain, and gets a clear error rather than a silent half-edit."""
    plain = ChatResponseUpdate([TextContent("\n")], raw={"id": "c1"})
    plain.make_plain()
    assert plain.plain_text == "\n"
    plain.replace_text("")
    assert (plain.plain_text, plain.contents, plain.raw) == ("", [], {"id": "c1"})
    other = ChatResponseUpdate([TextContent("a"), TextContent("b")])
    with pytest.raises(ValueError, match="not plain"):
        other.replace_text("ab")
    assert other.text == "ab"

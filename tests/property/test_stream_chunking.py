"""Bytes → SSE → normaliser → ``from_updates``: the result never depends on how the bytes were cut,
and no text, reasoning or tool-call argument is lost (issue 2, "Done when")."""

from __future__ import annotations

import json
from itertools import pairwise
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from providers import ChatResponse, ChunkNormalizer, SseDecoder

SETTINGS = settings(max_examples=200, deadline=None)

_TEXT = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=6)
_JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=6,
)
_ARGS = st.dictionaries(_TEXT, _JSON_VALUE, max_size=4)


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "r",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c for c in cuts if 0 < c < len(text)})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in pairwise(bounds)]


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, str, str, list[dict[str, Any]]]:
    reasoning = draw(st.lists(_TEXT, max_size=5))
    text = draw(st.lists(_TEXT, max_size=8))
    calls = draw(st.lists(_ARGS, max_size=2))
    chunks = [_chunk({"role": "assistant", "content": ""})]
    chunks += [_chunk({"reasoning_content": r}) for r in reasoning]
    chunks += [_chunk({"content": t}) for t in text]
    for index, arguments in enumerate(calls):
        raw = json.dumps(arguments, ensure_ascii=False)
        fragments = _split(raw, draw(st.lists(st.integers(0, len(raw)), max_size=5)))
        first = {"index": index, "id": f"call_{index}", "function": {"name": f"f{index}"}}
        chunks.append(_chunk({"tool_calls": [first]}))
        chunks += [
            _chunk({"tool_calls": [{"index": index, "function": {"arguments": f}}]})
            for f in fragments
        ]
    chunks.append(_chunk({}, "tool_calls" if calls else "stop"))
    ending = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    body = (
        "".join(f"data: {json.dumps(c, ensure_ascii=False)}{ending}{ending}" for c in chunks)
        + f"data: [DONE]{ending}{ending}"
    )
    return body.encode(), "".join(reasoning), "".join(text), calls


def run(pieces: list[bytes]) -> ChatResponse:
    decoder = SseDecoder()
    normalizer = ChunkNormalizer()
    updates = []
    events = [e for p in pieces for e in decoder.feed(p)] + decoder.finish()
    for event in events:
        if event.data == "[DONE]":
            break
        updates.extend(normalizer.feed(json.loads(event.data)))
    updates.extend(normalizer.finish())
    return ChatResponse.from_updates(updates)


@SETTINGS
@given(stream=streams(), data=st.data())
def test_result_is_independent_of_the_cuts(
    stream: tuple[bytes, str, str, list[dict[str, Any]]], data: st.DataObject
) -> None:
    payload, reasoning, text, calls = stream
    offsets = data.draw(st.lists(st.integers(1, max(len(payload) - 1, 1)), max_size=30))
    points = sorted(set(offsets))
    bounds = [0, *points, len(payload)]
    pieces = [payload[a:b] for a, b in pairwise(bounds)]

    whole = run([payload])
    assert whole.reasoning == reasoning
    assert whole.text == text
    assert [(c.call_id, c.name, c.arguments, c.error) for c in whole.tool_calls] == [
        (f"call_{i}", f"f{i}", arguments, None) for i, arguments in enumerate(calls)
    ]
    assert run(pieces) == whole

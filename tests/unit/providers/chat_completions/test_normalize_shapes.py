"""The normaliser works out a chunk's unmodelled keys once per key set (shape); these tests change
shapes and values mid-stream, on every level, to show the result is what a fresh normaliser gives
for each chunk alone."""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from providers import (
    ChatResponseUpdate,
    ChunkNormalizer,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
)


def chunk(
    delta: dict[str, Any], choice_extra: dict[str, Any] | None = None, **top: Any
) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "finish_reason": None, **(choice_extra or {})}
    return {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [choice], **top}


STREAM = [
    chunk({"content": "a"}, {"logprobs": None, "token_ids": None}, kv_transfer_params=None),
    chunk({"content": "b"}, {"logprobs": None, "token_ids": [7]}, kv_transfer_params=None),
    chunk({"content": "c"}, {"logprobs": None, "token_ids": None}, kv_transfer_params={"k": 1}),
    chunk({"content": "d", "refusal": "no"}, {"stop_reason": None}, metadata={"w": 2}),
    chunk({"content": "e"}, {"stop_reason": "</s>"}),
    chunk({"reasoning_content": "r", "reasoning": "r"}),
    chunk({"reasoning_content": None, "reasoning": "s"}),
    chunk({"reasoning_content": "t", "reasoning": "u"}),
    chunk({"reasoning_content": "", "content": [{"type": "text", "text": "x"}]}),
    chunk({"role": "assistant", "content": ""}, system_fingerprint="fp1"),
    chunk({"content": "a"}, {"logprobs": None, "token_ids": None}, kv_transfer_params=None),
]


def test_each_chunk_reads_as_it_would_alone() -> None:
    streaming = ChunkNormalizer("vllm")
    for item in STREAM:
        (alone,) = ChunkNormalizer("vllm").feed(item)
        (update,) = streaming.feed(item)
        assert update.contents == alone.contents
        assert update.role == alone.role
        assert update.additional_properties == alone.additional_properties


def test_what_the_shapes_keep() -> None:
    updates = [u for item in STREAM for u in ChunkNormalizer("vllm").feed(item)]
    extras = [u.additional_properties for u in updates]
    assert extras[0] is None
    assert extras[1] == {"token_ids": [7]}
    assert extras[2] == {"kv_transfer_params": {"k": 1}}
    assert extras[3] == {"refusal": "no", "metadata": {"w": 2}}
    assert extras[4] == {"stop_sequence": "</s>"}
    assert updates[5].contents == [TextReasoningContent("r")] and extras[5] is None
    assert updates[6].contents == [TextReasoningContent("s")] and extras[6] is None
    assert updates[7].contents == [TextReasoningContent("t")] and extras[7] == {"reasoning": "u"}
    assert updates[8].contents == [] and extras[8] == {"content": [{"type": "text", "text": "x"}]}
    assert updates[9].role == "assistant" and extras[9] == {"system_fingerprint": "fp1"}
    assert updates[10].contents == [TextContent("a")] and extras[10] is None


def _read(normalizer: ChunkNormalizer, item: dict[str, Any]) -> list[ChatResponseUpdate]:
    """``item`` as the client reads it: its event's bytes through ``read_events``."""
    updates, error = normalizer.read_events([orjson.dumps(item)])
    assert error is None
    return updates


def test_every_field_of_what_the_normaliser_makes_is_set() -> None:
    """It makes updates and texts without their ``__init__`` (for speed): a field added to those
    classes must be set there too, or reading it would raise."""
    normalizer = ChunkNormalizer("vllm")
    made = [u for item in STREAM for u in normalizer.feed(item)]
    reader = ChunkNormalizer("vllm")
    items = [*STREAM, _VARIANTS[0], _VARIANTS[1], _VARIANTS[9], _VARIANTS[9]]
    made += [u for item in items for u in _read(reader, item)]
    assert any(u.plain_text for u in made)  # (the fast path's kind too)
    for update in made:
        for name in ChatResponseUpdate.__slots__:
            getattr(update, name)  # raises AttributeError when a slot was left unset
        again = ChatResponseUpdate(
            list(update.contents),
            *(getattr(update, n) for n in ChatResponseUpdate.__match_args__[1:]),
        )
        assert update == again  # and it compares like one made the usual way
    contents: list[Any] = [c for u in made for c in u.contents]
    assert {TextContent, TextReasoningContent} <= {type(c) for c in contents}
    for obj in contents:
        for field in dataclasses.fields(obj):
            getattr(obj, field.name)
        assert obj == dataclasses.replace(obj)


# --- the common chunk's fast path (``chunk_shapes.Template``, issue 21) -------------------------


def _common(
    delta: dict[str, Any], choice_extra: dict[str, Any] | None = None, **top: Any
) -> dict[str, Any]:
    return {**chunk(delta, choice_extra, **top), "created": 1}


_VARIANTS: list[dict[str, Any]] = [
    _common({"content": "a"}, {"logprobs": None}, usage=None),
    _common({"content": "b"}, {"logprobs": None}, usage=None),
    _common({"content": "b"}, {"logprobs": None}, usage={"prompt_tokens": 1}),
    _common({"content": ""}, {"logprobs": None}, usage=None),
    _common({"content": None}, {"logprobs": None}, usage=None),
    _common({"content": 7}, {"logprobs": None}, usage=None),
    _common({"content": "c"}, {"logprobs": {"x": 1}}, usage=None),
    _common({"content": "c", "role": "assistant"}, {"logprobs": None}, usage=None),
    _common({"content": "c"}, {"logprobs": None}, usage=None, error=None),
    _common({"reasoning_content": "r"}, {"logprobs": None}, usage=None),
    _common({"reasoning_content": "r", "content": None}, {"logprobs": None}, usage=None),
    _common({"reasoning_content": None, "content": "t"}, {"logprobs": None}, usage=None),
    _common({"content": "d"}, {"logprobs": None}, usage=None, system_fingerprint="fp1"),
    _common({"content": "d"}, {"logprobs": None}, usage=None, system_fingerprint="fp2"),
    _common({"content": "e"}, {"logprobs": None, "stop_reason": None}, usage=None),
    _common({"content": "e"}, {"logprobs": None, "stop_reason": 5}, usage=None),
    {**_common({"content": "f"}, {"logprobs": None}, usage=None), "id": 12},
    {**_common({"content": "f"}, {"logprobs": None}, usage=None), "created": "x"},
    {**_common({"content": "f"}, {"logprobs": None}, usage=None), "created": 5, "model": "n"},
    {**_common({"content": "f"}, {"logprobs": None}, usage=None), "object": "other"},
    {
        "id": "c",
        "model": "m",
        "created": 1,
        "choices": [{"index": 1, "delta": {"content": "g"}, "finish_reason": None}],
    },
    {
        "id": "c",
        "model": "m",
        "created": 1,
        "choices": [{"index": "1", "delta": {"content": "g"}, "finish_reason": None}],
    },
    {
        "id": "c",
        "model": "m",
        "created": 1,
        "choices": [{"index": 0, "delta": {"content": "g"}, "finish_reason": "stop"}],
    },
    {
        "id": "c",
        "model": "m",
        "created": 1,
        "choices": [{"index": 0, "delta": {"content": "g"}, "finish_reason": None}] * 2,
    },
    {"id": "c", "model": "m", "created": 1, "choices": []},
]


def _view(update: ChatResponseUpdate) -> tuple[Any, ...]:
    return (
        update.contents,
        update.role,
        update.finish_reason,
        update.response_id,
        update.model_id,
        update.created_at,
        update.choice_index,
        update.additional_properties,
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, len(_VARIANTS) - 1), min_size=1, max_size=30))
def test_a_stream_reads_each_chunk_as_the_full_path_would(picks: list[int]) -> None:
    """Whatever follows the chunk a template was learnt from, the fast path gives exactly what
    the full path gives: a fresh normaliser that has seen the same fingerprints (the only state
    a delta chunk's reading depends on) reads each chunk the same."""
    streaming = ChunkNormalizer("sglang")
    for pick in picks:
        item = _VARIANTS[pick]
        fresh = ChunkNormalizer("sglang")
        fresh._fingerprint = streaming._fingerprint
        expected = [_view(u) for u in fresh.feed(item)]
        assert [_view(u) for u in _read(streaming, item)] == expected
        assert streaming._fingerprint == fresh._fingerprint


def test_the_common_chunk_takes_the_fast_path() -> None:
    normalizer = ChunkNormalizer("sglang")
    _read(normalizer, _VARIANTS[0])
    assert normalizer.reader.template is not None
    (update,) = _read(normalizer, _VARIANTS[1])
    assert update.plain_text == "b" and update.head.kind is TextContent
    assert update.raw == _VARIANTS[1]  # (parsed from the event's bytes when read)
    assert update.contents == [TextContent("b")] and update.plain_text is None


def _fragment(arguments: Any, **entry: Any) -> dict[str, Any]:
    call = {"id": None, "index": 0, "type": "function", "function": {"name": None}, **entry}
    call["function"] = {**call["function"], "arguments": arguments}
    delta = {"role": None, "content": None, "tool_calls": [call]}
    return _common(delta, {"logprobs": None}, usage=None)


_FRAGMENTS: list[dict[str, Any]] = [
    _common({"role": "assistant", "content": ""}, {"logprobs": None}, usage=None),
    _fragment("", id="call_1", function={"name": "get_weather"}),
    _fragment('{"a'),
    _fragment('": 1'),
    _fragment(""),
    _fragment(None),
    _fragment(7),
    _fragment("x", index=1),
    _fragment("y", index=1, id="call_2", function={"name": "get_weather"}),
    _fragment("z", index="0"),
    _fragment("w", id="other"),
    _fragment("v", function={"name": "other_tool"}),
    _fragment("u", type=None),
    _fragment("t", extra=5),
    _fragment("s", usage=None),
    {**_fragment("r"), "usage": {"prompt_tokens": 1}},
    _common({"content": "text"}, {"logprobs": None}, usage=None),
    _common({}, {"logprobs": None, "finish_reason": "tool_calls"}, usage=None),
    _fragment("q", system_fingerprint=None),
    {**_fragment("p"), "system_fingerprint": "fp9"},
]


def _call_view(content: Any) -> Any:
    """A call with its id, unless the client made one up (a random one, each time)."""
    if not isinstance(content, FunctionCallContent):
        return content
    made_up = content.call_id.startswith("call_") and content.call_id not in ("call_1", "call_2")
    return (
        content.name,
        content.raw_arguments,
        None if made_up else content.call_id,
        content.error,
    )


def _calls(normalizer: ChunkNormalizer) -> list[Any]:
    return [_call_view(c) for u in normalizer.finish() for c in u.contents]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, len(_FRAGMENTS) - 1), min_size=1, max_size=30))
def test_tool_call_fragments_read_as_the_full_path_reads_them(picks: list[int]) -> None:
    """The tool-call fragment fast path (``FragmentTemplate``) against a normaliser that never
    takes a fast path: the same updates, and the same calls in the end."""
    fast = ChunkNormalizer("sglang", offered_tools=frozenset({"get_weather"}))
    slow = ChunkNormalizer("sglang", offered_tools=frozenset({"get_weather"}))
    for pick in [0, 1, 2, *picks]:  # (a call begun and the template learnt, then anything)
        item = _FRAGMENTS[pick]
        expected = [_view(u) for u in slow._normalize(item, "delta")]
        got = [_view(u) for u in fast.feed(item)]
        assert [([_call_view(c) for c in v[0]], *v[1:]) for v in got] == [
            ([_call_view(c) for c in v[0]], *v[1:]) for v in expected
        ]
    assert _calls(fast) == _calls(slow)


def test_argument_fragments_take_the_fast_path() -> None:
    normalizer = ChunkNormalizer("sglang", offered_tools=frozenset({"get_weather"}))
    for item in _FRAGMENTS[:3]:
        normalizer.feed(item)
    assert normalizer.reader.fragment is not None
    (update,) = normalizer.feed(_FRAGMENTS[3])
    assert update.contents == [] and update.raw is _FRAGMENTS[3]
    (call,) = normalizer.finish()[0].contents
    assert call.raw_arguments == '{"a": 1'  # type: ignore[attr-defined]

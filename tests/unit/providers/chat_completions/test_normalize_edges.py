"""Chunk normalisation at its edges: fields of unexpected types or missing, the stream's flags,
the constructor's keywords (issue #38: behaviours no other test pinned)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import orjson
import pytest

from providers import (
    ChatFinishReason,
    ChunkNormalizer,
    Limits,
    ResponseTooLargeError,
    TextReasoningContent,
    UsageContent,
)


def chunk(*choices: dict[str, Any], **top: Any) -> dict[str, Any]:
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": list(choices),
        **top,
    }


def choice(delta: Any = None, finish: str | None = None, **extra: Any) -> dict[str, Any]:
    return {"index": 0, "delta": {} if delta is None else delta, "finish_reason": finish, **extra}


def test_the_profile_may_be_named_by_keyword_and_the_options_only_so() -> None:
    assert ChunkNormalizer(profile="vllm").backend == "vllm"
    with pytest.raises(TypeError):
        ChunkNormalizer("vllm", True)  # type: ignore[call-arg]


def test_done_and_finished_are_set_only_by_what_was_read() -> None:
    normalizer = ChunkNormalizer()
    assert (normalizer.done, normalizer.finished) == (False, False)
    normalizer.read_events([orjson.dumps(chunk(choice({"content": "a"})))])
    assert (normalizer.done, normalizer.finished) == (False, False)
    normalizer.read_events([orjson.dumps(chunk(choice({}, "stop")))])
    assert (normalizer.done, normalizer.finished) == (False, True)
    normalizer.read_events([b"[DONE]"])
    assert normalizer.done


@pytest.mark.parametrize("usage", [[1], "x", 5, True])
def test_usage_that_is_not_an_object_is_ignored(usage: Any) -> None:
    (update,) = ChunkNormalizer().feed(chunk(usage=usage))
    assert update.contents == []
    (update,) = ChunkNormalizer().feed(chunk(choice({"content": "a"}), usage=usage))
    assert [type(c).__name__ for c in update.contents] == ["TextContent"]


def test_a_usage_only_chunk_is_on_choice_zero() -> None:
    (update,) = ChunkNormalizer().feed(chunk(usage={"prompt_tokens": 3, "completion_tokens": 4}))
    assert update.choice_index == 0
    assert update.response_id == "c"
    assert update.model_id == "m"
    (usage,) = update.contents
    assert isinstance(usage, UsageContent)
    assert usage.details.total_token_count == 7


@pytest.mark.parametrize("delta", [None, "text", 5, ["a"]])
def test_a_choice_whose_delta_is_missing_or_not_an_object_still_finishes(delta: Any) -> None:
    item = choice(finish="stop")
    if delta is None:
        del item["delta"]
    else:
        item["delta"] = delta
    (update,) = ChunkNormalizer().feed(chunk(item))
    assert update.contents == []
    assert update.finish_reason == ChatFinishReason.STOP
    assert update.additional_properties is None


@pytest.mark.parametrize("value", [5, 0, False, ["r"], {"text": "r"}])
def test_a_reasoning_field_that_is_not_text_is_kept_in_the_extras(value: Any) -> None:
    (update,) = ChunkNormalizer().feed(chunk(choice({"reasoning_content": value})))
    assert update.contents == []
    assert update.additional_properties == {"reasoning_content": value}


class _Text(str):
    """A ``str`` subclass (no JSON parser makes one): an empty one is not CPython's one ``""``."""


@pytest.mark.parametrize("value", [None, "", _Text("")])
def test_an_empty_or_null_reasoning_field_is_nothing(value: Any) -> None:
    (update,) = ChunkNormalizer().feed(chunk(choice({"reasoning_content": value})))
    assert update.contents == []
    assert update.additional_properties is None


def test_a_model_name_that_is_not_exactly_a_string_is_dropped_even_when_equal() -> None:
    normalizer = ChunkNormalizer()
    (first,) = normalizer.feed(chunk(choice({"content": "a"})))
    (second,) = normalizer.feed({**chunk(choice({"content": "b"})), "model": _Text("m")})
    assert (first.model_id, second.model_id) == ("m", None)


# --- tool calls in flight ------------------------------------------------------------------------


def call_delta(index: int, name: str, arguments: str, choice_index: int = 0) -> dict[str, Any]:
    entry = {"index": index, "id": f"id{index}", "function": {"name": name, "arguments": arguments}}
    return {**choice({"tool_calls": [entry]}), "index": choice_index}


def test_pending_tool_calls_are_reported_until_a_finish_carries_them() -> None:
    normalizer = ChunkNormalizer()
    assert not normalizer.writing_tool_call()
    assert normalizer.pending_argument_bytes() == 0
    normalizer.feed(chunk(call_delta(0, "f", '{"a": ')))  # 6 bytes
    normalizer.feed(chunk(call_delta(0, "g", '{"é": 1}', choice_index=1)))  # 9 bytes
    assert normalizer.writing_tool_call()
    assert normalizer.pending_argument_bytes() == 15
    assert normalizer.append_arguments(0, 0, "1}")
    assert not normalizer.append_arguments(0, 1, "{}")  # no call 1 on choice 0
    assert not normalizer.append_arguments(2, 0, "{}")  # no choice 2
    assert normalizer.pending_argument_bytes() == 17
    (update,) = normalizer.feed(chunk(choice(finish="tool_calls")))
    assert [(c.name, c.arguments) for c in update.contents] == [("f", {"a": 1})]  # type: ignore[attr-defined]
    assert normalizer.writing_tool_call()  # (choice 1's call)
    (update,) = normalizer.finish()
    assert update.choice_index == 1
    assert not normalizer.writing_tool_call()
    assert normalizer.pending_argument_bytes() == 0


@pytest.mark.parametrize(("finish", "cut"), [("length", True), ("LENGTH", True), ("stop", False)])
def test_only_a_length_finish_flags_the_call_being_written(finish: str, cut: bool) -> None:
    normalizer = ChunkNormalizer()
    normalizer.feed(chunk(call_delta(0, "f", "{}")))
    normalizer.feed(chunk(call_delta(1, "g", '{"a": 1}')))
    (update,) = normalizer.feed(chunk(choice(finish=finish)))
    first, last = update.contents
    assert first.error is None  # type: ignore[attr-defined]
    assert (last.error is not None) is cut  # type: ignore[attr-defined]
    assert last.arguments == {"a": 1}  # type: ignore[attr-defined]


def test_offered_tools_and_limits_reach_the_tool_calls() -> None:
    normalizer = ChunkNormalizer(offered_tools=frozenset({"f"}), limits=Limits(max_tool_calls=2))
    normalizer.feed(chunk(call_delta(0, "f", "{}")))
    normalizer.feed(chunk(call_delta(1, "rm", "{}")))
    with pytest.raises(ResponseTooLargeError):
        normalizer.feed(chunk(call_delta(2, "f", "{}")))
    (update,) = normalizer.finish()
    assert [c.error for c in update.contents] == [  # type: ignore[attr-defined]
        None,
        "tool rm was not offered; offered: f",
    ]


def test_the_json_depth_limit_reaches_the_event_reader() -> None:
    normalizer = ChunkNormalizer(limits=Limits(max_json_depth=3))
    deep = chunk(choice({"content": "a"}), extra={"a": {"b": {"c": 1}}})
    updates, error = normalizer.read_events([orjson.dumps(deep)])
    assert updates == []
    assert error is not None


# --- choices, deltas and fields of other types ---------------------------------------------------


def test_choices_that_are_not_objects_are_skipped_and_any_mapping_is_read() -> None:
    proxy = MappingProxyType({**choice(MappingProxyType({"content": "b"})), "index": 1})
    updates = ChunkNormalizer().feed(chunk(None, "x", choice({"content": "a"}), proxy))  # type: ignore[arg-type]
    assert [(u.choice_index, u.text) for u in updates] == [(0, "a"), (1, "b")]


@pytest.mark.parametrize("index", [None, "1", 1.0])
def test_a_choice_without_an_integer_index_is_choice_zero(index: Any) -> None:
    item = choice({"content": "a"}, index=index)
    if index is None:
        del item["index"]
    (update,) = ChunkNormalizer().feed(chunk(item))
    assert update.choice_index == 0


@pytest.mark.parametrize("role", ["", 5, ["assistant"]])
def test_a_role_that_is_empty_or_not_text_is_no_role(role: Any) -> None:
    (update,) = ChunkNormalizer().feed(chunk(choice({"role": role, "content": "a"})))
    assert update.role is None
    assert update.text == "a"


@pytest.mark.parametrize("finish", ["", 5, ["stop"]])
def test_a_finish_reason_that_is_empty_or_not_text_finishes_nothing(finish: Any) -> None:
    normalizer = ChunkNormalizer()
    normalizer.feed(chunk(call_delta(0, "f", "{}")))
    (update,) = normalizer.feed(chunk(choice(finish=finish)))
    assert update.finish_reason is None
    assert update.contents == []  # the call is still pending
    assert [c.name for u in normalizer.finish() for c in u.contents] == ["f"]  # type: ignore[attr-defined]


def test_a_message_with_calls_without_index_or_id_keeps_them_apart() -> None:
    calls = [{"type": "function", "function": {"name": n, "arguments": "{}"}} for n in "ab"]
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    body = {"id": "x", "model": "m", "choices": [{"index": 0, "message": message}]}
    updates = ChunkNormalizer().normalize_completion(body)
    assert [c.name for u in updates for c in u.contents] == ["a", "b"]  # type: ignore[attr-defined]


def test_the_model_and_ids_follow_the_chunk_when_they_change() -> None:
    normalizer = ChunkNormalizer()
    seen = []
    for model, created in [("m", 1), ("n", 1), ("n", 2), ("n", 2)]:
        (update,) = normalizer.feed(
            {**chunk(choice({"content": "a"})), "model": model, "created": created}
        )
        seen.append((update.model_id, update.created_at))
    assert seen == [("m", 1), ("n", 1), ("n", 2), ("n", 2)]


def test_top_level_extras_go_on_the_first_choice_and_usage_on_the_last() -> None:
    usage = MappingProxyType({"prompt_tokens": 1, "completion_tokens": 2})
    item = chunk(choice({"content": "a"}), {**choice({"content": "b"}), "index": 1}, usage=usage)
    first, second = ChunkNormalizer().feed({**item, "metadata": {"k": 1}})
    assert first.additional_properties == {"metadata": {"k": 1}}
    assert second.additional_properties is None
    assert [type(c).__name__ for c in first.contents] == ["TextContent"]
    assert [type(c).__name__ for c in second.contents] == ["TextContent", "UsageContent"]


@pytest.mark.parametrize("first", ["", 5])
def test_the_reasoning_read_is_the_first_field_holding_text(first: Any) -> None:
    delta = {"reasoning_content": first, "reasoning": "r"}
    (update,) = ChunkNormalizer().feed(chunk(choice(delta)))
    assert update.contents == [TextReasoningContent("r")]
    extras = None if first == "" else {"reasoning_content": first}
    assert update.additional_properties == extras


def _fingerprinted(fingerprint: str | None) -> dict[str, Any]:
    # Each time a new string object, as each parsed chunk gives.
    value = None if fingerprint is None else "".join(["fp", fingerprint])
    return chunk(choice({"content": "a"}), system_fingerprint=value)


def test_the_fingerprint_is_recorded_when_it_changes_and_a_null_one_is_not() -> None:
    normalizer = ChunkNormalizer()
    kept = [
        u.additional_properties
        for name in ["1", "1", None, "1", "2"]
        for u in normalizer.feed(_fingerprinted(name))
    ]
    assert kept == [{"system_fingerprint": "fp1"}, None, None, None, {"system_fingerprint": "fp2"}]

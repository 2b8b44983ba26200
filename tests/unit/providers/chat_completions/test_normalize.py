"""Chunk normalisation (issue 2 item 4; research/wire.md §2, §3, §7)."""

from __future__ import annotations

from typing import Any

import pytest

from providers import (
    BackendUnavailableError,
    ChatFinishReason,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    ChunkNormalizer,
    ContextLengthExceededError,
    FunctionCallContent,
    InvalidResponseError,
    ProviderError,
    ServerError,
    TextContent,
    TextReasoningContent,
    UsageContent,
)


def chunk(
    delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any
) -> dict[str, Any]:
    choice: dict[str, Any] = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    choice.update(extra.pop("choice_extra", {}))
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "m",
        "choices": [choice],
        **extra,
    }


def run(chunks: list[dict[str, Any]], **kwargs: Any) -> list[ChatResponseUpdate]:
    normalizer = ChunkNormalizer(**kwargs)
    updates: list[ChatResponseUpdate] = []
    for item in chunks:
        updates.extend(normalizer.feed(item))
    updates.extend(normalizer.finish())
    return updates


def response(chunks: list[dict[str, Any]], **kwargs: Any) -> ChatResponse:
    return ChatResponse.from_updates(run(chunks, **kwargs))


# --- text, roles, ids -------------------------------------------------------------------------


def test_text_role_ids_and_created() -> None:
    updates = run(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": "Hel"}),
            chunk({"content": "lo"}),
            chunk({}, "stop"),
        ]
    )
    assert updates[0].role == ChatRole.ASSISTANT
    assert updates[0].contents == []  # an empty content string is no content
    assert [u.text for u in updates] == ["", "Hel", "lo", ""]
    assert updates[-1].finish_reason == ChatFinishReason.STOP
    assert {u.response_id for u in updates} == {"chatcmpl-1"}
    assert {u.model_id for u in updates} == {"m"}
    assert {u.created_at for u in updates} == {1700000000}


def test_llamacpp_first_chunk_with_null_content() -> None:
    updates = run([chunk({"role": "assistant", "content": None})])
    assert updates[0].role == "assistant"
    assert updates[0].contents == []
    assert updates[0].additional_properties is None


def test_ids_are_opaque_strings() -> None:
    sglang_id = "0f1e2d3c4b5a69788796a5b4c3d2e1f0"  # no chatcmpl- prefix
    updates = run([{"id": sglang_id, "model": "default", "choices": []}])
    assert updates[0].response_id == sglang_id
    numeric = run([{"id": 12345, "choices": []}])
    assert numeric[0].response_id == "12345"


def test_vllm_last_token_and_finish_reason_in_one_chunk() -> None:
    updates = run(
        [
            chunk({"role": "assistant", "content": ""}),
            chunk({"reasoning": "think"}),
            chunk({"reasoning": "ing."}),
            chunk({"content": "The answer"}),
            chunk({"content": " is 4."}, "stop", choice_extra={"stop_reason": None}),
        ]
    )
    last = updates[-1]
    assert last.text == " is 4."
    assert last.finish_reason == "stop"
    result = ChatResponse.from_updates(updates)
    assert result.text == "The answer is 4."
    assert result.reasoning == "thinking."
    assert result.finish_reason == ChatFinishReason.STOP


def test_vllm_last_reasoning_token_with_finish_reason() -> None:
    result = response([chunk({"reasoning": "a"}), chunk({"reasoning": "b"}, "length")])
    assert result.reasoning == "ab"
    assert result.finish_reason == ChatFinishReason.LENGTH


def test_unknown_finish_reason_is_kept() -> None:
    updates = run([chunk({}, "abort")])
    assert updates[0].finish_reason == ChatFinishReason("abort")
    assert updates[0].finish_reason is not None
    assert updates[0].finish_reason.value == "abort"


# --- reasoning ------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_from_either_field(field: str) -> None:
    updates = run([chunk({field: "hmm"})])
    assert updates[0].contents == [TextReasoningContent("hmm")]
    assert updates[0].additional_properties is None


def test_reasoning_in_both_fields_with_same_text_is_counted_once() -> None:
    chunks = [
        chunk({"reasoning": "Let me", "reasoning_content": "Let me"}),
        chunk({"reasoning": " think", "reasoning_content": " think"}),
        chunk({"content": "ok"}, "stop"),
    ]
    updates = run(chunks)
    assert [
        len([c for c in u.contents if isinstance(c, TextReasoningContent)]) for u in updates
    ] == [
        1,
        1,
        0,
    ]
    result = ChatResponse.from_updates(updates)
    assert result.reasoning == "Let me think"
    assert "reasoning" not in result.additional_properties
    assert "reasoning_content" not in result.additional_properties


def test_reasoning_in_both_fields_with_different_texts_keeps_the_second() -> None:
    updates = run([chunk({"reasoning_content": "first", "reasoning": "second"})])
    assert updates[0].reasoning == "first"
    assert updates[0].additional_properties == {"reasoning": "second"}


def test_sglang_null_reasoning_content_next_to_content() -> None:
    updates = run([chunk({"reasoning_content": None, "content": "Hel"})])
    assert updates[0].contents == [TextContent("Hel")]
    assert updates[0].additional_properties is None


def test_null_reasoning_content_falls_back_to_reasoning() -> None:
    updates = run([chunk({"reasoning_content": None, "reasoning": "r"})])
    assert updates[0].reasoning == "r"


def test_reasoning_and_content_in_one_chunk_keep_order() -> None:
    updates = run([chunk({"reasoning_content": "r", "content": "t"})])
    assert updates[0].contents == [TextReasoningContent("r"), TextContent("t")]


# --- usage ----------------------------------------------------------------------------------


def test_usage_only_chunk_with_empty_choices() -> None:
    updates = run(
        [
            {
                "id": "x",
                "choices": [],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
            }
        ]
    )
    assert len(updates) == 1
    (content,) = updates[0].contents
    assert isinstance(content, UsageContent)
    assert content.details.input_token_count == 10
    assert content.details.output_token_count == 5
    assert content.details.total_token_count == 15
    assert updates[0].finish_reason is None
    assert not updates[0].is_substantive


def test_sglang_top_level_reasoning_tokens() -> None:
    usage = {
        "prompt_tokens": 20,
        "total_tokens": 90,
        "completion_tokens": 70,
        "prompt_tokens_details": None,
        "reasoning_tokens": 42,
        "completion_tokens_details": None,
    }
    result = response([chunk({"content": "x"}, "stop"), {"choices": [], "usage": usage}])
    assert result.usage is not None
    assert result.usage.reasoning_token_count == 42
    assert result.usage.cached_input_token_count is None


def test_cached_tokens_from_prompt_tokens_details() -> None:
    usage = {
        "completion_tokens": 3,
        "prompt_tokens": 100,
        "total_tokens": 103,
        "prompt_tokens_details": {"cached_tokens": 96},
    }
    result = response([{"choices": [], "usage": usage}])
    assert result.usage is not None
    assert result.usage.cached_input_token_count == 96
    assert result.usage.input_token_count == 100


def test_usage_null_on_ordinary_chunks_is_not_usage() -> None:
    updates = run([chunk({"content": "a"}, usage=None)])
    assert updates[0].contents == [TextContent("a")]
    assert updates[0].additional_properties is None


def test_usage_riding_on_a_content_chunk_comes_after_the_content() -> None:
    updates = run([chunk({"content": "a"}, usage={"prompt_tokens": 1, "completion_tokens": 1})])
    assert isinstance(updates[0].contents[0], TextContent)
    assert isinstance(updates[0].contents[1], UsageContent)


# --- stop sequences, extras, raw, fingerprint -----------------------------------------------


def test_vllm_stop_reason_becomes_stop_sequence() -> None:
    updates = run([chunk({}, "stop", choice_extra={"stop_reason": "</answer>"})])
    assert updates[0].additional_properties == {"stop_sequence": "</answer>"}


@pytest.mark.parametrize("matched", ["\n\n", 151645])
def test_sglang_matched_stop_becomes_stop_sequence(matched: str | int) -> None:
    updates = run(
        [chunk({"reasoning_content": None}, "stop", choice_extra={"matched_stop": matched})]
    )
    assert updates[0].additional_properties == {"stop_sequence": matched}
    result = ChatResponse.from_updates(updates)
    assert result.additional_properties["stop_sequence"] == matched


def test_null_stop_reason_is_not_a_stop_sequence() -> None:
    updates = run([chunk({}, "length", choice_extra={"stop_reason": None, "matched_stop": None})])
    assert updates[0].additional_properties is None


def test_unknown_fields_kept_and_raw_untouched() -> None:
    raw = chunk(
        {"content": "a", "refusal": "no", "audio": None},
        None,
        choice_extra={"token_ids": [1, 2], "logprobs": None},
        timings={"prompt_n": 5, "predicted_n": 1},
        kv_transfer_params=None,
        metadata={"weight_version": "default"},
    )
    snapshot = {**raw, "choices": [dict(raw["choices"][0])]}
    (update,) = run([raw])
    assert update.additional_properties == {
        "refusal": "no",
        "token_ids": [1, 2],
        "timings": {"prompt_n": 5, "predicted_n": 1},
        "metadata": {"weight_version": "default"},
    }
    assert update.raw is raw
    assert raw == snapshot  # not mutated
    result = ChatResponse.from_updates([update])
    assert result.additional_properties["timings"] == {"prompt_n": 5, "predicted_n": 1}
    assert result.raw == [raw]


def test_system_fingerprint_kept() -> None:
    (update,) = run([chunk({}, "stop", system_fingerprint="b6000-abcdef")])
    assert update.additional_properties == {"system_fingerprint": "b6000-abcdef"}


def test_system_fingerprint_redacted() -> None:
    (update,) = run([chunk({}, "stop", system_fingerprint="b6000-abcdef")], redact_fingerprint=True)
    assert update.additional_properties is None
    result = ChatResponse.from_updates([update])
    assert "system_fingerprint" not in result.additional_properties


def test_non_string_content_parts_are_kept_not_dropped() -> None:
    parts = [{"type": "text", "text": "x"}]
    (update,) = run([chunk({"content": parts})])
    assert update.contents == []
    assert update.additional_properties == {"content": parts}


# --- errors in the stream -------------------------------------------------------------------


def test_sglang_in_stream_service_unavailable() -> None:
    normalizer = ChunkNormalizer("sglang")
    normalizer.feed(chunk({"content": "partial"}))
    payload = {
        "error": {
            "object": "error",
            "message": "preempted",
            "type": "SERVICE_UNAVAILABLE",
            "param": None,
            "code": 503,
        }
    }
    with pytest.raises(BackendUnavailableError) as info:
        normalizer.feed(payload)
    assert info.value.status == 503
    assert info.value.backend == "sglang"
    assert info.value.error_type == "SERVICE_UNAVAILABLE"


def test_sglang_in_stream_status_name_without_code() -> None:
    payload = {"error": {"object": "error", "message": "m", "type": "SERVICE_UNAVAILABLE"}}
    with pytest.raises(BackendUnavailableError) as info:
        ChunkNormalizer().feed(payload)
    assert info.value.status == 503


def test_llamacpp_in_stream_server_error() -> None:
    payload = {"error": {"code": 500, "message": "Invalid diff", "type": "server_error"}}
    with pytest.raises(ServerError) as info:
        ChunkNormalizer("llamacpp").feed(payload)
    assert info.value.status == 500
    assert "Invalid diff" in str(info.value)


def test_in_stream_error_as_plain_string() -> None:
    with pytest.raises(ProviderError) as info:
        ChunkNormalizer().feed({"error": "The model is currently scaling."})
    assert "currently scaling" in str(info.value)


def test_in_stream_context_overflow() -> None:
    payload = {
        "error": {
            "code": 400,
            "message": "request (9000 tokens) exceeds the available context size (8192 tokens)",
            "type": "exceed_context_size_error",
            "n_prompt_tokens": 9000,
            "n_ctx": 8192,
        }
    }
    with pytest.raises(ContextLengthExceededError) as info:
        ChunkNormalizer().feed(payload)
    assert (info.value.prompt_tokens, info.value.context_window) == (9000, 8192)


def test_null_error_key_is_not_an_error() -> None:
    (update,) = run([chunk({"content": "a"}, error=None)])
    assert update.text == "a"


# --- several choices ------------------------------------------------------------------------


def test_n_choices_carry_their_choice_index() -> None:
    interleaved = {
        "id": "c",
        "choices": [
            {"index": 0, "delta": {"content": "zero"}, "finish_reason": None},
            {"index": 1, "delta": {"content": "one"}, "finish_reason": None},
        ],
    }
    finishes = {
        "id": "c",
        "choices": [
            {"index": 1, "delta": {}, "finish_reason": "length"},
            {"index": 0, "delta": {}, "finish_reason": "stop"},
        ],
    }
    updates = run([interleaved, finishes])
    assert [(u.choice_index, u.text) for u in updates[:2]] == [(0, "zero"), (1, "one")]
    assert [(u.choice_index, u.finish_reason) for u in updates[2:]] == [
        (1, ChatFinishReason.LENGTH),
        (0, ChatFinishReason.STOP),
    ]
    result = ChatResponse.from_updates(updates)
    assert [m.text for m in result.messages] == ["zero", "one"]


def test_tool_calls_of_different_choices_are_kept_apart() -> None:
    def call(index: int, name: str) -> dict[str, Any]:
        return {
            "index": index,
            "delta": {
                "tool_calls": [
                    {"index": 0, "id": f"id{index}", "function": {"name": name, "arguments": "{}"}}
                ]
            },
            "finish_reason": "tool_calls",
        }

    updates = run([{"choices": [call(0, "a"), call(1, "b")]}])
    assert [(u.choice_index, [c.name for c in u.contents]) for u in updates] == [  # type: ignore[attr-defined]
        (0, ["a"]),
        (1, ["b"]),
    ]


# --- tool calls through the normaliser ------------------------------------------------------


def tool_delta(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"tool_calls": list(entries)}


def test_tool_calls_flushed_on_finish_chunk_after_the_text() -> None:
    updates = run(
        [
            chunk({"content": "Let me check."}),
            chunk(
                tool_delta(
                    {"index": 0, "id": "call_1", "type": "function", "function": {"name": "get"}},
                    {"index": 0, "function": {"arguments": '{"city": "Paris"}'}},
                )
            ),
            chunk({}, "tool_calls"),
        ]
    )
    assert updates[1].contents == []  # nothing is emitted before the call is complete
    (call,) = updates[2].contents
    assert call == FunctionCallContent("call_1", "get", {"city": "Paris"}, '{"city": "Paris"}')
    result = ChatResponse.from_updates(updates)
    assert [type(c) for c in result.messages[0].contents] == [TextContent, FunctionCallContent]
    assert result.finish_reason == ChatFinishReason.TOOL_CALLS


def test_vllm_last_arguments_fragment_with_finish_reason() -> None:
    updates = run(
        [
            chunk(
                tool_delta({"index": 0, "id": "t", "function": {"name": "f", "arguments": '{"a"'}})
            ),
            chunk(tool_delta({"index": 0, "function": {"arguments": ": 1}"}}), "tool_calls"),
        ]
    )
    (call,) = ChatResponse.from_updates(updates).tool_calls
    assert call.arguments == {"a": 1}
    assert call.error is None


@pytest.mark.parametrize("finish", ["length", None])
def test_tool_calls_flushed_at_end_of_stream_whatever_the_finish(finish: str | None) -> None:
    chunks = [
        chunk(
            tool_delta({"index": 0, "id": "t", "function": {"name": "f", "arguments": '{"a": '}})
        ),
        chunk({}, finish),
    ]
    normalizer = ChunkNormalizer()
    fed = [u for c in chunks for u in normalizer.feed(c)]
    flushed = normalizer.finish()
    calls = [c for u in [*fed, *flushed] for c in u.contents if isinstance(c, FunctionCallContent)]
    assert len(calls) == 1
    assert calls[0].name == "f"
    assert calls[0].raw_arguments == '{"a": '
    assert calls[0].error is not None  # truncated by `length`: surfaced, not dropped
    assert normalizer.finish() == []  # flushed once


def test_finish_without_pending_calls_is_empty() -> None:
    normalizer = ChunkNormalizer()
    normalizer.feed(chunk({"content": "x"}, "stop"))
    assert normalizer.finish() == []


# --- non-streamed bodies --------------------------------------------------------------------


def test_normalize_completion_reads_the_message() -> None:
    body = {
        "id": "chatcmpl-9",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "4",
                    "reasoning": "2+2",
                    "refusal": None,
                    "tool_calls": [
                        {
                            "id": "a",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        },
                        {
                            "id": "b",
                            "type": "function",
                            "function": {"name": "g", "arguments": {"x": 1}},
                        },
                    ],
                },
                "finish_reason": "tool_calls",
                "stop_reason": None,
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
        "system_fingerprint": "vllm-0.33",
    }
    result = ChatResponse.from_updates(ChunkNormalizer().normalize_completion(body))
    assert result.text == "4"
    assert result.reasoning == "2+2"
    assert [(c.call_id, c.name, c.arguments) for c in result.tool_calls] == [
        ("a", "f", {}),
        ("b", "g", {"x": 1}),
    ]
    assert result.finish_reason == ChatFinishReason.TOOL_CALLS
    assert result.usage is not None
    assert result.usage.total_token_count == 5
    assert result.additional_properties == {"system_fingerprint": "vllm-0.33"}


def test_normalize_completion_without_choices() -> None:
    with pytest.raises(InvalidResponseError):
        ChunkNormalizer().normalize_completion({"id": "x", "object": "chat.completion"})


def test_normalize_completion_with_error_body() -> None:
    with pytest.raises(ServerError):
        ChunkNormalizer().normalize_completion(
            {"error": {"message": "boom", "type": "server_error", "code": 500}}
        )

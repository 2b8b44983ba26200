"""``ChatResponse.from_updates``: one function coalescing a stream into a response (issue 2 item 1,
STYLE.md guideline 9)."""

from __future__ import annotations

from typing import Any

from providers import (
    ChatFinishReason,
    ChatMessage,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    ChunkNormalizer,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
    UsageContent,
    UsageDetails,
)


def text(value: str, **kwargs: Any) -> ChatResponseUpdate:
    return ChatResponseUpdate([TextContent(value)], **kwargs)


def reasoning(value: str, **kwargs: Any) -> ChatResponseUpdate:
    return ChatResponseUpdate([TextReasoningContent(value)], **kwargs)


def usage(
    input_token_count: int | None = None,
    output_token_count: int | None = None,
    total_token_count: int | None = None,
    cached_input_token_count: int | None = None,
) -> ChatResponseUpdate:
    details = UsageDetails(
        input_token_count, output_token_count, total_token_count, cached_input_token_count
    )
    return ChatResponseUpdate([UsageContent(details)])


def test_adjacent_text_merged() -> None:
    result = ChatResponse.from_updates([text("Hel"), text("lo"), text(" world")])
    assert result.messages == [ChatMessage(ChatRole.ASSISTANT, [TextContent("Hello world")])]
    assert result.text == "Hello world"


def test_reasoning_merged_separately_from_text() -> None:
    result = ChatResponse.from_updates(
        [reasoning("Let "), reasoning("me think"), text("An"), text("swer")]
    )
    assert result.messages[0].contents == [
        TextReasoningContent("Let me think"),
        TextContent("Answer"),
    ]
    assert result.reasoning == "Let me think"
    assert result.text == "Answer"


def test_order_of_reasoning_text_and_tool_calls_preserved() -> None:
    call = FunctionCallContent("c1", "f", {"a": 1}, '{"a": 1}')
    result = ChatResponse.from_updates(
        [
            reasoning("r1"),
            text("t1"),
            text("t2"),
            reasoning("r2"),
            ChatResponseUpdate([call]),
            text("t3"),
        ]
    )
    assert result.messages[0].contents == [
        TextReasoningContent("r1"),
        TextContent("t1t2"),
        TextReasoningContent("r2"),
        call,
        TextContent("t3"),
    ]
    assert result.tool_calls == [call]


def test_usage_replaced_field_by_field_not_summed() -> None:
    result = ChatResponse.from_updates(
        [
            usage(input_token_count=10, output_token_count=1, total_token_count=11),
            text("a"),
            usage(input_token_count=10, output_token_count=2, total_token_count=12),
            usage(output_token_count=3, cached_input_token_count=4),
        ]
    )
    assert result.usage == UsageDetails(
        input_token_count=10,
        output_token_count=3,
        total_token_count=12,
        cached_input_token_count=4,
    )
    # usage is not message content
    assert result.messages[0].contents == [TextContent("a")]


def test_no_usage_is_none() -> None:
    assert ChatResponse.from_updates([text("a")]).usage is None


def test_finish_reason_last_non_null() -> None:
    result = ChatResponse.from_updates(
        [
            text("a", finish_reason=ChatFinishReason.LENGTH),
            text("b", finish_reason=ChatFinishReason.STOP),
            usage(input_token_count=1),
        ]
    )
    assert result.finish_reason == ChatFinishReason.STOP


def test_response_and_model_id_first_non_null() -> None:
    result = ChatResponse.from_updates(
        [
            text("a"),
            text("b", response_id="first", model_id="m1", created_at=5),
            text("c", response_id="second", model_id="m2", created_at=6),
        ]
    )
    assert (result.response_id, result.model_id, result.created_at) == ("first", "m1", 5)


def test_role_from_updates_defaults_to_assistant() -> None:
    assert ChatResponse.from_updates([text("x")]).messages[0].role == ChatRole.ASSISTANT
    explicit = ChatResponse.from_updates([text("x", role=ChatRole("developer"))])
    assert explicit.messages[0].role == "developer"


def test_additional_properties_and_raw_collected() -> None:
    result = ChatResponse.from_updates(
        [
            ChatResponseUpdate(additional_properties={"a": 1}, raw={"chunk": 1}),
            ChatResponseUpdate(additional_properties={"b": 2}, raw={"chunk": 2}),
        ]
    )
    assert result.additional_properties == {"a": 1, "b": 2}
    assert result.raw == [{"chunk": 1}, {"chunk": 2}]


def test_choices_become_messages_in_index_order() -> None:
    result = ChatResponse.from_updates(
        [text("one", choice_index=1), text("zero", choice_index=0), text("!", choice_index=1)]
    )
    assert [m.text for m in result.messages] == ["zero", "one!"]


def test_empty_stream() -> None:
    result = ChatResponse.from_updates([])
    assert result.messages == []
    assert result.text == ""
    assert result.finish_reason is None


def test_ten_thousand_one_char_updates() -> None:
    chars = [chr(ord("a") + i % 26) for i in range(10_000)]
    result = ChatResponse.from_updates(text(c) for c in chars)
    assert result.text == "".join(chars)
    assert len(result.messages[0].contents) == 1


def test_is_substantive() -> None:
    assert not ChatResponseUpdate().is_substantive
    assert not usage(input_token_count=1).is_substantive
    assert text("a").is_substantive
    assert reasoning("a").is_substantive
    assert ChatResponseUpdate([FunctionCallContent("c", "f")]).is_substantive


def test_update_text_and_reasoning_properties() -> None:
    update = ChatResponseUpdate([TextReasoningContent("r"), TextContent("a"), TextContent("b")])
    assert update.text == "ab"
    assert update.reasoning == "r"


# --- streamed and non-streamed give the same response ---------------------------------------


def _stream_chunks() -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-abc",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "qwen",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    return [
        chunk({"role": "assistant", "content": ""}),
        chunk({"reasoning_content": "The user "}),
        chunk({"reasoning_content": "wants weather."}),
        chunk({"content": "Checking"}),
        chunk({"content": " now."}),
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "id": "call_1", "type": "function", "function": {"name": "w"}},
                    {"index": 0, "function": {"arguments": '{"city": '}},
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Oslo"}'}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "call_2", "function": {"name": "t"}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": "{}"}}]}),
        chunk({}, "tool_calls"),
        {
            "id": "chatcmpl-abc",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "qwen",
            "choices": [],
            "usage": {
                "prompt_tokens": 50,
                "completion_tokens": 20,
                "total_tokens": 70,
                "prompt_tokens_details": {"cached_tokens": 32},
            },
        },
    ]


def _completion_body() -> dict[str, Any]:
    return {
        "id": "chatcmpl-abc",
        "object": "chat.completion",
        "created": 1,
        "model": "qwen",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Checking now.",
                    "reasoning_content": "The user wants weather.",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "w", "arguments": '{"city": "Oslo"}'},
                        },
                        {
                            "id": "call_2",
                            "type": "function",
                            "function": {"name": "t", "arguments": "{}"},
                        },
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {
            "prompt_tokens": 50,
            "completion_tokens": 20,
            "total_tokens": 70,
            "prompt_tokens_details": {"cached_tokens": 32},
        },
    }


def test_streamed_and_non_streamed_give_equal_responses() -> None:
    normalizer = ChunkNormalizer()
    updates = [u for c in _stream_chunks() for u in normalizer.feed(c)]
    updates += normalizer.finish()
    streamed = ChatResponse.from_updates(updates)
    whole = ChatResponse.from_updates(ChunkNormalizer().normalize_completion(_completion_body()))

    assert streamed.messages == whole.messages
    assert streamed.finish_reason == whole.finish_reason == ChatFinishReason.TOOL_CALLS
    assert streamed.usage == whole.usage
    assert streamed.usage == UsageDetails(
        input_token_count=50,
        output_token_count=20,
        total_token_count=70,
        cached_input_token_count=32,
    )
    assert (streamed.response_id, streamed.model_id) == (whole.response_id, whole.model_id)
    assert streamed.messages[0].contents == [
        TextReasoningContent("The user wants weather."),
        TextContent("Checking now."),
        FunctionCallContent("call_1", "w", {"city": "Oslo"}, '{"city": "Oslo"}'),
        FunctionCallContent("call_2", "t", {}, "{}"),
    ]
    assert streamed.raw != whole.raw  # raw differs by nature and is excluded from equality
    assert streamed == whole


def test_long_runs_are_joined_in_blocks_without_losing_order_or_kind() -> None:
    """Runs join their deltas in blocks as they fill; a build() midway must not disturb that."""
    from providers.abstractions.chat_response import ChatResponseBuilder

    builder = ChatResponseBuilder()
    expected_reasoning = [f"r{i} " for i in range(70)]
    expected_text = [f"{i}," for i in range(100)]
    for piece in expected_reasoning:
        builder.add(reasoning(piece))
    for i, piece in enumerate(expected_text):
        builder.add(text(piece))
        if i == 50:
            midway = builder.build()
            assert midway.text == "".join(expected_text[:51])
    response = builder.build()
    assert response.reasoning == "".join(expected_reasoning)
    assert response.text == "".join(expected_text)
    kinds = [type(c) for c in response.messages[0].contents]
    assert kinds == [TextReasoningContent, TextContent]

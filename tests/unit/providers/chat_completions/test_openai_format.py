"""OpenAI chat-completions dicts ↔ the value types (issue #22 part 1).

``ChatMessage.from_openai`` / ``.to_openai()``, ``ChatOptions.from_openai`` / ``.to_openai()``,
``UsageDetails.from_openai`` / ``.to_openai()``, ``FunctionCallContent.from_json``,
``ChatResponse.to_openai()`` and ``ChatResponseUpdate.to_openai_chunk()``; the transcripts
drive the same conversions in ``tests/transcripts/test_openai_format_transcripts.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers import (
    AIContent,
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseFormat,
    ChatResponseUpdate,
    ChatRole,
    ChatToolMode,
    DataContent,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
    ToolDeclaration,
    UriContent,
    UsageContent,
    UsageDetails,
)
from providers.abstractions import contents
from providers.abstractions.openai_format import UNMODELLED_PART
from providers.backends import PROFILES, BackendProfile
from providers.chat_completions import tool_call_accumulator
from providers.chat_completions.normalize import ChunkNormalizer
from providers.chat_completions.request import build_chat_request, messages_to_wire

GENERIC = PROFILES["generic"]
CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}


def as_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


# --- messages: read and written back --------------------------------------------------------

ROUND_TRIPS: list[dict[str, Any]] = [
    {"role": "user", "content": "hi"},
    {"role": "user", "content": ""},
    {"role": "user", "content": "hi", "name": "bob"},
    {"role": "user", "content": "hi", "name": None},
    {"role": "system", "content": "Be brief."},
    {"role": "developer", "content": "Be brief."},
    {"role": "user", "content": [{"type": "text", "text": "hi"}]},
    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is this?", "cache_control": {"type": "ephemeral"}},
            {"type": "image_url", "image_url": {"url": "https://x.test/cat.png", "detail": "low"}},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw=="}},
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            {"type": "input_audio", "input_audio": {"data": "SUQz", "format": "mp3"}},
        ],
    },
    {"role": "user", "content": [{"type": "file", "file": {"file_id": "file-1"}}]},
    {"role": "user", "content": [{"type": "image_url", "image_url": "https://x.test/a.png"}]},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "assistant", "tool_calls": [CALL]},
    {"role": "assistant", "content": "", "tool_calls": [CALL]},
    {"role": "assistant", "content": "Let me look.", "tool_calls": [CALL, {**CALL, "id": "c2"}]},
    {"role": "assistant", "content": "x", "reasoning_content": "thought"},
    {"role": "assistant", "content": "x", "reasoning_content": ""},
    {"role": "assistant", "content": "x", "reasoning_content": None, "reasoning": "vLLM's name"},
    {
        "role": "assistant",
        "content": "x",
        "refusal": None,
        "tool_calls": None,
        "audio": None,
        "function_call": None,
    },
    {"role": "assistant", "content": None},
    {"role": "assistant", "content": []},
    {"role": "assistant", "content": "partial", "prefix": True},
    {"role": "assistant", "tool_calls": [{"id": "c", "type": "custom", "custom": {"name": "f"}}]},
    {"role": "assistant", "tool_calls": [{**CALL, "index": 0}]},
    {"role": "tool", "tool_call_id": "c1", "content": '{"temp": 3}'},
    {"role": "tool", "tool_call_id": "c1", "content": "sunny", "name": "get_weather"},
    {"role": "tool", "content": "no call id"},
    {"role": "function", "name": "f", "content": "legacy"},
]


@pytest.mark.parametrize("message", ROUND_TRIPS, ids=lambda m: as_json(m)[:60])
def test_a_message_read_is_written_back_as_it_was(message: dict[str, Any]) -> None:
    assert as_json(ChatMessage.from_openai(message).to_openai()) == as_json(message)


def test_reading_gives_the_typed_contents() -> None:
    message = ChatMessage.from_openai(
        {
            "role": "assistant",
            "content": "Checking.",
            "reasoning_content": "The user wants weather.",
            "tool_calls": [CALL],
            "refusal": None,
        }
    )
    assert message.role == ChatRole.ASSISTANT
    assert [type(c) for c in message.contents] == [
        TextReasoningContent,
        TextContent,
        FunctionCallContent,
    ]
    assert message.reasoning == "The user wants weather."
    assert message.text == "Checking."
    (call,) = message.tool_calls
    assert (call.call_id, call.name, call.arguments, call.raw_arguments, call.error) == (
        "c1",
        "f",
        {"a": 1},
        '{"a": 1}',
        None,
    )
    assert message.additional_properties == {"refusal": None}


def test_reading_media_and_parts() -> None:
    message = ChatMessage.from_openai(ROUND_TRIPS[8])
    text, url, data, wav, mp3 = message.contents
    assert text == TextContent("What is this?")
    assert url == UriContent("https://x.test/cat.png", "image/*")
    assert data == DataContent(b"\x89PNG", "image/png")
    assert wav == DataContent(b"RIFF", "audio/wav")
    assert mp3 == DataContent(b"ID3", "audio/mpeg")
    (file,) = ChatMessage.from_openai(ROUND_TRIPS[9]).contents
    assert type(file) is AIContent
    assert file.additional_properties == {
        UNMODELLED_PART: {"type": "file", "file": {"file_id": "file-1"}}
    }


def test_non_canonical_base64_stays_a_uri() -> None:
    url = "data:image/png;base64,iVBORw"  # unpadded: writing the bytes back would differ
    message = {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}
    (content,) = ChatMessage.from_openai(message).contents
    assert content == UriContent(url, "image/png")
    assert ChatMessage.from_openai(message).to_openai() == message


def test_a_tool_message_is_a_function_result() -> None:
    message = ChatMessage.from_openai({"role": "tool", "tool_call_id": "c1", "content": "sunny"})
    assert message.role == ChatRole.TOOL
    assert message.contents == [FunctionResultContent("c1", "sunny")]
    assert message.additional_properties is None


def test_malformed_messages_are_refused() -> None:
    with pytest.raises(ValueError, match="role"):
        ChatMessage.from_openai({"content": "no role"})
    with pytest.raises(ValueError, match="object"):
        ChatMessage.from_openai(["user", "hi"])  # type: ignore[arg-type]


def test_a_message_changed_after_reading_is_written_from_its_fields() -> None:
    message = ChatMessage.from_openai(ROUND_TRIPS[8])
    message.contents[1] = UriContent("https://x.test/dog.png", "image/*")
    message.contents[0] = TextContent("Changed?")
    parts = message.to_openai()["content"]
    assert parts[0] == {"type": "text", "text": "Changed?"}  # no stale cache_control
    assert parts[1] == {"type": "image_url", "image_url": {"url": "https://x.test/dog.png"}}
    call = ChatMessage.from_openai({"role": "assistant", "tool_calls": [{**CALL, "index": 0}]})
    call.contents[0] = FunctionCallContent("c9", "g", {"b": 2})
    assert call.to_openai()["tool_calls"] == [
        {"id": "c9", "type": "function", "function": {"name": "g", "arguments": '{"b": 2}'}}
    ]


def test_arguments_that_are_not_an_object_are_replayed_as_an_empty_object() -> None:
    # The documented exception to the round trip: servers cannot take them in a history.
    for arguments in ("", "{oops", "[1]"):
        message = {
            "role": "assistant",
            "tool_calls": [{**CALL, "function": {"name": "f", "arguments": arguments}}],
        }
        written = ChatMessage.from_openai(message).to_openai()
        assert written["tool_calls"][0]["function"]["arguments"] == "{}"


def test_several_results_are_several_messages() -> None:
    message = ChatMessage(
        ChatRole.TOOL,
        [FunctionResultContent("a", 1), FunctionResultContent("b", "two")],
        additional_properties={"x": 1},
    )
    with pytest.raises(ValueError, match="to_openai_messages"):
        message.to_openai()
    assert message.to_openai_messages() == [
        {"role": "tool", "tool_call_id": "a", "content": "1", "x": 1},
        {"role": "tool", "tool_call_id": "b", "content": "two", "x": 1},
    ]


def test_built_messages_are_written_as_the_request_builder_always_wrote_them() -> None:
    call = FunctionCallContent("c1", "get_weather", {"city": "Oslo"}, '{"city":"Oslo"}')
    assert ChatMessage.assistant("", call).to_openai() == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
            }
        ],
    }
    assert ChatMessage(ChatRole.USER, []).to_openai() == {"role": "user", "content": ""}
    thinking = ChatMessage(ChatRole.ASSISTANT, [TextReasoningContent("t"), TextContent("a")])
    assert thinking.to_openai() == {"role": "assistant", "content": "a", "reasoning_content": "t"}


# --- the request builder writes messages through the same mapping -----------------------------


def test_the_request_sends_messages_as_to_openai_writes_them_plus_the_backend_quirks() -> None:
    read = [ChatMessage.from_openai(m) for m in ROUND_TRIPS if m["role"] != "assistant"]
    replaying = BackendProfile("x", replay_reasoning=True)
    assert messages_to_wire(read, replaying) == [
        entry for message in read for entry in message.to_openai_messages()
    ]
    thinking = ChatMessage.from_openai(
        {"role": "assistant", "content": "a", "reasoning_content": "t"}
    )
    assert messages_to_wire([thinking], GENERIC) == [{"role": "assistant", "content": "a"}]
    assert messages_to_wire([thinking], replaying) == [thinking.to_openai()]


def test_extra_message_keys_are_sent_but_never_replace_the_written_ones() -> None:
    message = ChatMessage(
        ChatRole.ASSISTANT,
        [TextContent("a")],
        additional_properties={"prefix": True, "content": "x"},
    )
    assert messages_to_wire([message], GENERIC) == [
        {"role": "assistant", "content": "a", "prefix": True}
    ]


def test_another_producers_bare_content_is_not_sent_as_a_part() -> None:
    # The Responses client keeps an item it does not model as a bare AIContent.
    item = AIContent(
        raw={"type": "web_search_call", "id": "ws_1"}, additional_properties={"type": "x"}
    )
    message = ChatMessage(ChatRole.ASSISTANT, [TextContent("answer"), item])
    assert message.to_openai() == {"role": "assistant", "content": "answer"}


# --- options --------------------------------------------------------------------------------

REQUEST: dict[str, Any] = {
    "model": "m",
    "messages": [{"role": "user", "content": "hi"}],
    "stream": True,
    "stream_options": {"include_usage": True},
    "temperature": 0.2,
    "top_p": 1,
    "top_k": 40,
    "max_tokens": 64,
    "stop": ["</s>"],
    "seed": 7,
    "frequency_penalty": 0.1,
    "presence_penalty": 0.0,
    "tools": [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
        },
        {"type": "function", "function": {"name": "strict", "parameters": {}, "strict": True}},
    ],
    "tool_choice": "required",
    "parallel_tool_calls": False,
    "response_format": {"type": "json_schema", "json_schema": {"name": "out", "schema": {}}},
    "chat_template_kwargs": {"enable_thinking": False},
    "logprobs": None,
    "n": 1,
}


def rebuilt(options: ChatOptions, request: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    return {
        "messages": request["messages"],
        "stream": request["stream"],
        **options.to_openai(**kwargs),
    }


def test_options_read_from_a_request_write_it_back() -> None:
    options = ChatOptions.from_openai(REQUEST)
    assert as_json(rebuilt(options, REQUEST)) == as_json(REQUEST)


def test_options_read_into_typed_fields() -> None:
    options = ChatOptions.from_openai(REQUEST)
    assert options.model_id == "m"
    assert (options.temperature, options.top_p, options.top_k) == (0.2, 1, 40)
    assert (options.max_output_tokens, options.stop_sequences, options.seed) == (64, ["</s>"], 7)
    assert options.tool_mode == ChatToolMode.REQUIRED
    assert options.allow_multiple_tool_calls is False
    assert options.response_format == ChatResponseFormat.json_schema({}, "out")
    # A tool the declaration cannot hold whole (`strict`) stays the dict it was.
    assert options.tools == [
        ToolDeclaration("get_weather", "Weather", REQUEST["tools"][0]["function"]["parameters"]),
        REQUEST["tools"][1],
    ]
    assert options.additional_properties == {
        "stream_options": {"include_usage": True},
        "chat_template_kwargs": {"enable_thinking": False},
        "logprobs": None,
        "n": 1,
    }


def test_option_shapes_the_typed_form_cannot_hold_are_kept_as_given() -> None:
    request = {
        "tool_choice": {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": []}},
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "o", "schema": {}, "strict": "yes"},
        },
        "temperature": None,
        "seed": "7",
        "stop": [1],
    }
    options = ChatOptions.from_openai(request)
    assert options.tool_mode is None
    assert options.response_format is None
    assert options.temperature is None and options.seed is None
    assert options.additional_properties == request
    assert options.to_openai() == request


def test_named_tool_choice_and_a_single_stop_string() -> None:
    options = ChatOptions.from_openai(
        {"tool_choice": {"type": "function", "function": {"name": "f"}}, "stop": "END"}
    )
    assert options.tool_mode == ChatToolMode.require("f")
    assert options.tool_mode is not None and options.tool_mode.function_name == "f"
    assert options.stop_sequences == ["END"]  # the same meaning, as a list


def test_max_completion_tokens_is_the_output_limit() -> None:
    options = ChatOptions.from_openai({"max_completion_tokens": 9})
    assert options.max_output_tokens == 9
    assert options.additional_properties == {}
    assert options.to_openai(max_tokens_field="max_completion_tokens") == {
        "max_completion_tokens": 9
    }
    assert options.to_openai() == {"max_tokens": 9}
    both = ChatOptions.from_openai({"max_tokens": 5, "max_completion_tokens": 9})
    assert both.max_output_tokens == 5
    assert both.to_openai() == {"max_tokens": 5, "max_completion_tokens": 9}


def test_a_request_read_is_sent_as_it_was() -> None:
    request: dict[str, Any] = {
        "model": "m",
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 50,
        "tools": [REQUEST["tools"][0]],
        "tool_choice": "auto",
        "grammar": "root ::= x",
    }
    body = build_chat_request(
        [ChatMessage.from_openai(m) for m in request["messages"]],
        ChatOptions.from_openai(request),
        model_id=None,
        stream=True,
        profile=GENERIC,
    )
    assert as_json(body) == as_json(request)


# --- usage ----------------------------------------------------------------------------------


def test_usage_round_trips() -> None:
    usage = {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 15,
        "prompt_tokens_details": {"cached_tokens": 4, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 2, "accepted_prediction_tokens": 1},
    }
    details = UsageDetails.from_openai(usage)
    assert details == UsageDetails(
        10,
        5,
        15,
        4,
        2,
        {
            "prompt_tokens_details.audio_tokens": 0,
            "completion_tokens_details.accepted_prediction_tokens": 1,
        },
    )
    assert details.to_openai() == usage
    assert UsageDetails.from_openai(details.to_openai()) == details


def test_usage_unknown_counts_are_left_out_and_sglang_reasoning_is_read() -> None:
    assert UsageDetails(input_token_count=3).to_openai() == {"prompt_tokens": 3}
    assert UsageDetails().to_openai() == {}
    sglang = {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3, "reasoning_tokens": 0}
    details = UsageDetails.from_openai(sglang)
    assert details.reasoning_token_count == 0
    assert UsageDetails.from_openai(details.to_openai()) == details
    assert UsageDetails.from_openai({"note": "no counts"}) == UsageDetails()


# --- tool-call arguments --------------------------------------------------------------------


def test_from_json_parses_by_the_streaming_rule() -> None:
    assert contents.parse_arguments is tool_call_accumulator.parse_arguments
    good = FunctionCallContent.from_json("c", "f", '{"city": "Paris"}')
    assert (good.arguments, good.raw_arguments, good.error) == (
        {"city": "Paris"},
        '{"city": "Paris"}',
        None,
    )
    empty = FunctionCallContent.from_json("c", "f", "")
    assert (empty.arguments, empty.error) == ({}, None)
    bad = FunctionCallContent.from_json("c", "f", '{"city": ')
    assert bad.arguments == {} and bad.raw_arguments == '{"city": '
    assert bad.error is not None and "not valid JSON" in bad.error
    listed = FunctionCallContent.from_json("c", "f", "[1]")
    assert listed.error is not None and "not an object" in listed.error


# --- answers --------------------------------------------------------------------------------


def read_chunk(chunk: dict[str, Any]) -> list[ChatResponseUpdate]:
    normalizer = ChunkNormalizer()
    return [*normalizer.feed(json.loads(json.dumps(chunk))), *normalizer.finish()]


def test_an_update_as_a_chunk() -> None:
    update = ChatResponseUpdate(
        [TextReasoningContent("hm"), TextContent("Hi")],
        role=ChatRole.ASSISTANT,
        response_id="r1",
        model_id="m",
        created_at=7,
        choice_index=1,
        additional_properties={"system_fingerprint": "fp", "stop_sequence": None, "obj": object()},
    )
    chunk = update.to_openai_chunk()
    assert chunk == {
        "id": "r1",
        "object": "chat.completion.chunk",
        "created": 7,
        "model": "m",
        "system_fingerprint": "fp",
        "choices": [
            {
                "index": 1,
                "delta": {"role": "assistant", "reasoning_content": "hm", "content": "Hi"},
                "finish_reason": None,
                "stop_sequence": None,
            }
        ],
    }
    (back,) = read_chunk(chunk)
    assert (back.role, back.contents, back.choice_index, back.response_id) == (
        ChatRole.ASSISTANT,
        update.contents,
        1,
        "r1",
    )
    assert back.additional_properties == {"system_fingerprint": "fp"}


def test_usage_alone_is_a_chunk_without_choices() -> None:
    update = ChatResponseUpdate([UsageContent(UsageDetails(1, 2, 3))], response_id="r")
    chunk = update.to_openai_chunk()
    assert chunk["choices"] == []
    assert chunk["usage"] == {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3}
    (back,) = read_chunk(chunk)
    assert back.contents == update.contents


def test_calls_are_written_whole_and_numbered_from_the_index_given() -> None:
    calls = [
        FunctionCallContent.from_json("a", "f", '{"x": 1}'),
        FunctionCallContent.from_json("b", "g", "{broken"),
    ]
    update = ChatResponseUpdate(list(calls), finish_reason=ChatFinishReason.TOOL_CALLS)
    chunk = update.to_openai_chunk(tool_call_index=3)
    entries = chunk["choices"][0]["delta"]["tool_calls"]
    assert [e["index"] for e in entries] == [3]
    assert [e["function"]["arguments"] for e in entries] == ['{"x": 1}']
    # The broken call is flagged: never a tool call on OpenAI's wire, its text instead.
    broken = '<tool_call>\n{"name": "g", "arguments": {broken}\n</tool_call>'
    assert chunk["choices"][0]["delta"]["content"] == broken
    (back,) = read_chunk(chunk)
    assert back.contents == [TextContent(broken), calls[0]]
    assert back.finish_reason == ChatFinishReason.TOOL_CALLS


def test_a_response_as_a_completion_reads_back_the_same() -> None:
    response = ChatResponse(
        [
            ChatMessage(
                ChatRole.ASSISTANT,
                [
                    TextReasoningContent("thinking"),
                    TextContent("Sunny."),
                    FunctionCallContent.from_json("c1", "get_weather", '{"city": "Paris"}'),
                ],
            )
        ],
        response_id="r1",
        model_id="m",
        created_at=5,
        finish_reason=ChatFinishReason.TOOL_CALLS,
        usage=UsageDetails(10, 5, 15, None, 2),
        additional_properties={"stop_sequence": "###"},
    )
    body = response.to_openai()
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"] == {
        "role": "assistant",
        "content": "Sunny.",
        "reasoning_content": "thinking",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
            }
        ],
    }
    back = ChatResponse.from_updates(ChunkNormalizer().normalize_completion(body))
    assert back == response

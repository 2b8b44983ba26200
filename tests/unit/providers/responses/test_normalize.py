"""Responses-API event normalisation, one event family at a time (issue 11 item 2).

Event shapes follow the captures in ``transcripts/{vllm,sglang}/captured--*--responses--*``;
the OpenAI-only names (``response.reasoning.delta``, the summary family, ``error``) follow
OpenAI's documented shapes.
"""

from __future__ import annotations

from typing import Any

import pytest

from providers import (
    AIContent,
    ChatFinishReason,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    ContextLengthExceededError,
    ErrorContent,
    FunctionCallContent,
    InvalidResponseError,
    ServerError,
    TextContent,
    TextReasoningContent,
)
from providers.responses import ResponsesEventNormalizer

RESPONSE = {"id": "resp_1", "model": "m", "created_at": 1700000000, "output": []}
USAGE = {
    "input_tokens": 15,
    "input_tokens_details": {"cached_tokens": 4, "cache_write_tokens": 0},
    "output_tokens": 20,
    "output_tokens_details": {"reasoning_tokens": 10, "output_tokens_per_turn": []},
    "total_tokens": 35,
}


def created() -> dict[str, Any]:
    return {"type": "response.created", "response": {**RESPONSE, "status": "in_progress"}}


def completed(output: list[dict[str, Any]] | None = None, **response: Any) -> dict[str, Any]:
    body = {**RESPONSE, "status": "completed", "output": output or [], "usage": USAGE}
    body.update(response)
    return {"type": "response.completed", "response": body}


def text_delta(delta: str, oi: int = 0) -> dict[str, Any]:
    return {
        "type": "response.output_text.delta",
        "delta": delta,
        "output_index": oi,
        "content_index": 0,
        "item_id": "msg_1",
    }


def message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "id": "msg_1",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def call_item(arguments: str = "", status: str = "completed") -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": arguments,
        "status": status,
    }


def run(events: list[dict[str, Any]]) -> tuple[list[ChatResponseUpdate], ChatResponse]:
    normalizer = ResponsesEventNormalizer("test")
    updates = [u for event in events for u in normalizer.feed(event)]
    updates.extend(normalizer.finish())
    return updates, ChatResponse.from_updates(updates)


def test_text_stream_in_vllm_order() -> None:
    events = [
        created(),
        {"type": "response.in_progress", "response": {**RESPONSE, "status": "in_progress"}},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**message(""), "content": [], "status": "in_progress"},
        },
        {
            "type": "response.content_part.added",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "output_text", "text": ""},
        },
        text_delta("It is"),
        text_delta(" sunny."),
        {
            "type": "response.output_text.done",
            "output_index": 0,
            "content_index": 0,
            "text": "It is sunny.",
        },
        {
            "type": "response.content_part.done",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "output_text", "text": "It is sunny."},
        },
        {"type": "response.output_item.done", "output_index": 0, "item": message("It is sunny.")},
        completed([message("It is sunny.")]),
    ]
    updates, response = run(events)
    assert len(updates) == len(events)  # one update per event, each keeping its event
    assert [u.raw for u in updates] == events
    assert updates[0].role == ChatRole.ASSISTANT
    assert response.text == "It is sunny."
    assert response.finish_reason == ChatFinishReason.STOP
    assert response.response_id == "resp_1"
    assert response.model_id == "m"
    assert response.created_at == 1700000000
    assert response.usage is not None
    assert response.usage.input_token_count == 15
    assert response.usage.cached_input_token_count == 4
    assert response.usage.reasoning_token_count == 10
    assert response.usage.total_token_count == 35
    assert response.usage.additional_counts == {"input_tokens_details.cache_write_tokens": 0}
    assert updates[-1].additional_properties == {"status": "completed"}


@pytest.mark.parametrize(
    "event_type", ["response.reasoning_text.delta", "response.reasoning.delta"]
)
def test_both_reasoning_event_families(event_type: str) -> None:
    events = [
        created(),
        {"type": event_type, "delta": "\nThinking", "output_index": 0, "content_index": 0},
        {"type": event_type, "delta": " hard.\n", "output_index": 0, "content_index": 0},
        {
            "type": event_type.replace(".delta", ".done"),
            "text": "\nThinking hard.\n",
            "output_index": 0,
            "content_index": 0,
        },
        text_delta("Answer.", oi=1),
        completed(),
    ]
    _, response = run(events)
    assert response.reasoning == "\nThinking hard.\n"  # the .done text not counted again
    assert response.text == "Answer."


def test_reasoning_delta_wrapped_in_an_object() -> None:
    _, response = run(
        [
            created(),
            {"type": "response.reasoning.delta", "output_index": 0, "delta": {"text": "wrapped"}},
            completed(),
        ]
    )
    assert response.reasoning == "wrapped"


def test_reasoning_summary_events() -> None:
    events = [
        created(),
        {"type": "response.reasoning_summary_part.added", "output_index": 0, "summary_index": 0},
        {
            "type": "response.reasoning_summary_text.delta",
            "delta": "Summary",
            "output_index": 0,
            "summary_index": 0,
        },
        {
            "type": "response.reasoning_summary_text.done",
            "text": "Summary",
            "output_index": 0,
            "summary_index": 0,
        },
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": {
                "type": "reasoning",
                "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "Summary"}],
            },
        },
        completed(),
    ]
    updates, response = run(events)
    assert response.reasoning == "Summary"
    assert updates[1].contents == []  # summary_part.added: a known lifecycle event, no content


def test_done_events_carry_text_no_delta_sent() -> None:
    # A server sending whole parts instead of deltas loses nothing, and each part counts once.
    events = [
        created(),
        {
            "type": "response.output_text.done",
            "output_index": 0,
            "content_index": 0,
            "text": "Whole.",
        },
        {
            "type": "response.content_part.done",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "output_text", "text": "Whole."},
        },
        {"type": "response.output_item.done", "output_index": 0, "item": message("Whole.")},
        completed([message("Whole.")]),
    ]
    _, response = run(events)
    assert response.text == "Whole."


def test_terminal_output_fills_in_items_never_streamed() -> None:
    _, response = run([created(), completed([message("Only here."), call_item("{}")])])
    assert response.text == "Only here."
    assert [c.name for c in response.tool_calls] == ["get_weather"]
    assert response.finish_reason == ChatFinishReason.TOOL_CALLS


def test_function_call_item_and_argument_deltas() -> None:
    fragments = ['{"', "city", '": "', "Paris", '"}']
    events = [
        created(),
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": call_item("", status="in_progress"),
        },
        *[
            {
                "type": "response.function_call_arguments.delta",
                "delta": f,
                "output_index": 0,
                "item_id": "fc_1",
            }
            for f in fragments
        ],
        {
            "type": "response.function_call_arguments.done",
            "arguments": '{"city": "Paris"}',
            "output_index": 0,
            "item_id": "fc_1",
            "name": "get_weather",
        },
    ]
    updates, _ = run(events)  # no item.done yet: nothing released until then
    calls = [c for u in updates[:-1] for c in u.contents if isinstance(c, FunctionCallContent)]
    assert calls == []
    events.append(
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": call_item('{"city": "Paris"}'),
        }
    )
    events.append(completed([call_item('{"city": "Paris"}')]))
    updates, response = run(events)
    (call,) = response.tool_calls
    assert (call.call_id, call.name, call.arguments) == ("call_1", "get_weather", {"city": "Paris"})
    assert call.raw_arguments == '{"city": "Paris"}'
    assert call.additional_properties == {"item_id": "fc_1"}
    assert response.finish_reason == ChatFinishReason.TOOL_CALLS
    # The last call is held past its item.done until the response's status is known (a token
    # cut would make it incomplete, test_cut_calls.py): it arrives with the terminal update.
    assert not any(isinstance(c, FunctionCallContent) for c in updates[-2].contents)
    assert any(isinstance(c, FunctionCallContent) for c in updates[-1].contents)


def test_call_cut_before_its_item_is_done_is_flushed_by_finish() -> None:
    normalizer = ResponsesEventNormalizer()
    normalizer.feed(
        {
            "type": "response.output_item.added",
            "output_index": 2,
            "item": call_item("", status="in_progress"),
        }
    )
    normalizer.feed(
        {
            "type": "response.function_call_arguments.delta",
            "delta": '{"city": "Pa',
            "output_index": 2,
        }
    )
    (update,) = normalizer.finish()
    (call,) = update.contents
    assert isinstance(call, FunctionCallContent)
    assert call.raw_arguments == '{"city": "Pa'
    assert call.error is not None  # surfaced, never dropped, not executable
    assert normalizer.terminal is False
    assert normalizer.finish() == []


def test_unknown_event_is_kept_not_fatal() -> None:
    unknown = {"type": "response.web_search_call.searching", "output_index": 0, "x": 1}
    updates, response = run([created(), unknown, text_delta("ok"), completed()])
    assert updates[1].contents == []
    assert updates[1].raw is unknown
    assert unknown in response.raw
    assert response.text == "ok"


def test_unknown_output_item_becomes_a_bare_content_with_its_raw() -> None:
    item = {"type": "web_search_call", "id": "ws_1", "status": "completed"}
    _, response = run([created(), completed([item, message("done")])])
    (bare, text) = response.messages[0].contents
    assert type(bare) is AIContent
    assert bare.raw is item
    assert bare.additional_properties == {"type": "web_search_call"}
    assert isinstance(text, TextContent)


def test_refusal_becomes_an_error_content() -> None:
    _, response = run(
        [
            created(),
            {
                "type": "response.refusal.done",
                "output_index": 0,
                "content_index": 0,
                "refusal": "I can't.",
            },
            completed(),
        ]
    )
    (refusal,) = response.messages[0].contents
    assert isinstance(refusal, ErrorContent)
    assert (refusal.message, refusal.code) == ("I can't.", "refusal")


def test_incomplete_for_max_output_tokens_is_length() -> None:
    details = {"reason": "max_output_tokens"}
    events = [
        created(),
        text_delta("It is"),
        {
            "type": "response.incomplete",
            "response": {
                **RESPONSE,
                "status": "incomplete",
                "incomplete_details": details,
                "usage": USAGE,
            },
        },
    ]
    updates, response = run(events)
    assert response.finish_reason == ChatFinishReason.LENGTH
    assert updates[-1].additional_properties == {
        "status": "incomplete",
        "incomplete_details": details,
    }


def test_incomplete_for_content_filter() -> None:
    event = {
        "type": "response.incomplete",
        "response": {
            **RESPONSE,
            "status": "incomplete",
            "incomplete_details": {"reason": "content_filter"},
        },
    }
    _, response = run([created(), event])
    assert response.finish_reason == ChatFinishReason.CONTENT_FILTER


def test_failed_event_raises_the_typed_error() -> None:
    # SGLang's streamed context overflow: HTTP 200, then response.failed.
    error = {
        "code": "server_error",
        "message": "The input (5009 tokens) is longer than the "
        "model's context length (4096 tokens).",
    }
    normalizer = ResponsesEventNormalizer("sglang")
    normalizer.feed(created())
    with pytest.raises(ContextLengthExceededError) as caught:
        normalizer.feed(
            {
                "type": "response.failed",
                "response": {**RESPONSE, "status": "failed", "error": error},
            }
        )
    assert caught.value.prompt_tokens == 5009
    assert caught.value.context_window == 4096
    assert caught.value.status is None
    assert caught.value.backend == "sglang"


def test_failed_event_without_an_error_object_is_a_server_error() -> None:
    with pytest.raises(ServerError):
        ResponsesEventNormalizer().feed({"type": "response.failed", "response": {}})


@pytest.mark.parametrize(
    "event",
    [
        {"type": "error", "code": "server_error", "message": "boom", "sequence_number": 3},
        {"type": "response.error", "error": {"type": "internal_error", "message": "boom"}},
        {"error": {"message": "boom", "code": 500}},  # untyped, as llama.cpp sends it
    ],
    ids=["openai-error", "response.error", "untyped"],
)
def test_error_events_raise(event: dict[str, Any]) -> None:
    with pytest.raises(ServerError):
        ResponsesEventNormalizer().feed(event)


def test_event_name_from_sse_when_payload_has_no_type() -> None:
    updates = ResponsesEventNormalizer().feed(
        {"delta": "hi", "output_index": 0}, "response.output_text.delta"
    )
    assert updates[0].text == "hi"


def test_whole_response_object_gives_the_same_result_as_its_stream() -> None:
    reasoning = {
        "type": "reasoning",
        "id": "rs_1",
        "summary": [],
        "content": [{"type": "reasoning_text", "text": "Think."}],
    }
    body = {
        **RESPONSE,
        "status": "completed",
        "usage": USAGE,
        "output": [reasoning, message("Answer."), call_item('{"city": "Paris"}')],
    }
    streamed = [
        created(),
        {
            "type": "response.reasoning_text.delta",
            "delta": "Think.",
            "output_index": 0,
            "content_index": 0,
        },
        {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
        text_delta("Answer.", oi=1),
        {"type": "response.output_item.done", "output_index": 1, "item": message("Answer.")},
        {
            "type": "response.output_item.done",
            "output_index": 2,
            "item": call_item('{"city": "Paris"}'),
        },
        {"type": "response.completed", "response": body},
    ]
    _, from_stream = run(streamed)
    whole = ChatResponse.from_updates(ResponsesEventNormalizer().normalize_response(body))
    for response in (from_stream, whole):
        assert response.reasoning == "Think."
        assert response.text == "Answer."
        assert [(c.name, c.arguments) for c in response.tool_calls] == [
            ("get_weather", {"city": "Paris"})
        ]
        assert response.finish_reason == ChatFinishReason.TOOL_CALLS
        assert response.usage == from_stream.usage
    assert whole.messages[0].role == ChatRole.ASSISTANT


def test_reasoning_item_with_only_a_summary() -> None:
    item = {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Short."}]}
    body = {**RESPONSE, "status": "completed", "output": [item]}
    response = ChatResponse.from_updates(ResponsesEventNormalizer().normalize_response(body))
    assert response.reasoning == "Short."


@pytest.mark.parametrize(
    ("status", "reason"),
    [("queued", None), ("in_progress", None), ("cancelled", "cancelled"), ("completed", "stop")],
)
def test_response_status_gives_the_finish_reason(status: str, reason: str | None) -> None:
    body = {**RESPONSE, "status": status}
    response = ChatResponse.from_updates(ResponsesEventNormalizer().normalize_response(body))
    assert response.finish_reason == reason
    assert response.additional_properties["status"] == status


def test_failed_response_object_raises() -> None:
    body = {**RESPONSE, "status": "failed", "error": {"code": "server_error", "message": "boom"}}
    with pytest.raises(ServerError):
        ResponsesEventNormalizer().normalize_response(body)


def test_response_object_without_output_is_invalid() -> None:
    with pytest.raises(InvalidResponseError):
        ResponsesEventNormalizer().normalize_response({"id": "resp_1"})


def test_reasoning_is_not_counted_twice_when_a_done_item_repeats_it() -> None:
    reasoning = {"type": "reasoning", "content": [{"type": "reasoning_text", "text": "Why."}]}
    events = [
        created(),
        {"type": "response.reasoning_text.delta", "delta": "Why.", "output_index": 0},
        {
            "type": "response.content_part.done",
            "output_index": 0,
            "content_index": 0,
            "part": {"type": "reasoning_text", "text": "Why."},
        },
        {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
        completed([reasoning]),
    ]
    _, response = run(events)
    assert response.reasoning == "Why."
    assert [type(c) for c in response.messages[0].contents] == [TextReasoningContent]

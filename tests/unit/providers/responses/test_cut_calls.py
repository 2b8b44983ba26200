"""A function call that ``max_output_tokens`` (or a dropped stream) cut must never look complete.

Found on the real vLLM 0.33 (``tests/integration/vllm/test_vllm_responses.py``, scenario
``tool-call-length-cut``): streamed, it sends the cut call's item with its name and
``arguments: ""``, ``function_call_arguments.done`` with ``""``, the item done with
``status: "incomplete"`` and ``response.incomplete``. ``""`` parses as "no arguments", so without
the item's status the caller got ``get_weather({})`` with no error, a call it would run.
"""

from __future__ import annotations

from typing import Any

import pytest

from providers import ChatResponse, FunctionCallContent
from providers.responses import ResponsesEventNormalizer

RESPONSE = {"id": "resp_1", "model": "m", "created_at": 1700000000}
CUT = {"reason": "max_output_tokens"}


def call_item(status: str, arguments: str = "") -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": "fc_1",
        "call_id": "call_1",
        "name": "get_weather",
        "arguments": arguments,
        "status": status,
    }


def streamed(events: list[dict[str, Any]], *, finish: bool = True) -> ChatResponse:
    normalizer = ResponsesEventNormalizer("vllm")
    updates = [update for event in events for update in normalizer.feed(event)]
    if finish:
        updates.extend(normalizer.finish())
    return ChatResponse.from_updates(updates)


def the_call(response: ChatResponse) -> FunctionCallContent:
    (call,) = response.tool_calls
    assert call.name == "get_weather"
    return call


def test_vllm_streamed_cut_call_carries_an_error() -> None:
    """The exact event sequence vLLM 0.33 streamed for the cut call."""
    response = streamed(
        [
            {"type": "response.created", "response": {**RESPONSE, "status": "in_progress"}},
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": call_item("in_progress"),
            },
            {
                "type": "response.function_call_arguments.done",
                "output_index": 0,
                "item_id": "fc_1",
                "arguments": "",
                "name": "get_weather",
            },
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": call_item("incomplete"),
            },
            {
                "type": "response.incomplete",
                "response": {
                    **RESPONSE,
                    "status": "incomplete",
                    "incomplete_details": CUT,
                    "output": [call_item("incomplete")],
                },
            },
        ]
    )
    assert response.finish_reason == "length"
    call = the_call(response)
    assert call.error is not None
    assert call.raw_arguments == ""


def test_whole_response_with_an_incomplete_call_item() -> None:
    body = {
        **RESPONSE,
        "status": "incomplete",
        "incomplete_details": CUT,
        "output": [call_item("incomplete", '{"city": "Paris"}')],
    }
    response = ChatResponse.from_updates(ResponsesEventNormalizer().normalize_response(body))
    call = the_call(response)
    assert call.error is not None  # even arguments that parse may be missing a parameter
    assert call.arguments == {"city": "Paris"}  # kept for the caller to inspect


@pytest.mark.parametrize("terminal", ["response.incomplete", None])
def test_call_never_done_when_the_output_ends(terminal: str | None) -> None:
    """Only the item's name arrived, then ``response.incomplete`` with no output (or the
    stream stopped): the name alone is no call."""
    events: list[dict[str, Any]] = [
        {"type": "response.output_item.added", "output_index": 0, "item": call_item("in_progress")}
    ]
    if terminal is not None:
        events.append(
            {
                "type": terminal,
                "response": {**RESPONSE, "status": "incomplete", "incomplete_details": CUT},
            }
        )
    assert the_call(streamed(events)).error is not None


def test_a_completed_call_without_arguments_is_still_valid() -> None:
    """``arguments: ""`` on a completed item is a call with no arguments, not a cut."""
    response = streamed(
        [
            {
                "type": "response.output_item.done",
                "output_index": 0,
                "item": call_item("completed"),
            },
            {
                "type": "response.completed",
                "response": {**RESPONSE, "status": "completed", "output": [call_item("completed")]},
            },
        ]
    )
    call = the_call(response)
    assert (call.arguments, call.error) == ({}, None)
    assert response.finish_reason == "tool_calls"


def sglang_cut_events(cut_arguments: str = "") -> list[dict[str, Any]]:
    """SGLang 0.5.23's streamed cut: a complete first call, then the second cut before its
    arguments (``""``), yet its item done says ``completed``; then ``response.incomplete``."""
    first = {**call_item("completed", '{"city": "Paris"}'), "id": "fc_0", "call_id": "call_0"}
    cut = {**call_item("completed", cut_arguments), "name": "get_time"}
    return [
        {"type": "response.output_item.added", "output_index": 0, "item": first},
        {"type": "response.output_item.done", "output_index": 0, "item": first},
        {"type": "response.output_item.added", "output_index": 1, "item": call_item("in_progress")},
        {"type": "response.output_item.done", "output_index": 1, "item": cut},
        {
            "type": "response.incomplete",
            "response": {
                **RESPONSE,
                "status": "incomplete",
                "incomplete_details": CUT,
                "output": [first, cut],
            },
        },
    ]


def test_sglang_cut_call_item_said_completed_still_carries_an_error() -> None:
    """Only the last item can hold the cut; the call before it is released as complete as
    soon as the next item starts (an agent may run it while the rest streams)."""
    normalizer = ResponsesEventNormalizer("sglang")
    events = sglang_cut_events()
    released = [normalizer.feed(event)[0] for event in events]
    first_released = [
        c for c in released[2].contents if isinstance(c, FunctionCallContent)
    ]  # at the second item's output_item.added
    assert [(c.call_id, c.error) for c in first_released] == [("call_0", None)]
    assert not any(isinstance(c, FunctionCallContent) for c in released[3].contents)
    response = ChatResponse.from_updates(released)
    assert response.finish_reason == "length"
    complete, cut = response.tool_calls
    assert (complete.name, complete.arguments, complete.error) == (
        "get_weather",
        {"city": "Paris"},
        None,
    )
    assert cut.name == "get_time"
    assert cut.error is not None


def test_the_same_calls_in_a_completed_response_are_both_valid() -> None:
    events = sglang_cut_events('{"tz": "Europe/Paris"}')[:-1]
    events.append(
        {
            "type": "response.completed",
            "response": {**RESPONSE, "status": "completed", "output": []},
        }
    )
    response = streamed(events)
    assert [call.error for call in response.tool_calls] == [None, None]
    assert response.finish_reason == "tool_calls"


def test_sglang_whole_response_cut_inside_the_last_call() -> None:
    """Not streamed, SGLang's qwen3_coder parser returned ``get_weather({'city': 'Paris'})``,
    ``status: completed``, in an ``incomplete`` response: the last call carries ``error``."""
    body = {
        **RESPONSE,
        "status": "incomplete",
        "incomplete_details": CUT,
        "output": [call_item("completed", '{"city": "Paris"}')],
    }
    response = ChatResponse.from_updates(ResponsesEventNormalizer().normalize_response(body))
    call = the_call(response)
    assert call.error is not None
    assert call.arguments == {"city": "Paris"}

"""A malformed chat body is a 400 naming the field, never a quietly different request."""

from __future__ import annotations

from typing import Any

import pytest

from providers.abstractions.errors import InvalidRequestError
from providers.gateway.request_checks import check_chat_body

GOOD: dict[str, Any] = {"model": "main", "messages": [{"role": "user", "content": "hi"}]}


@pytest.mark.parametrize(
    ("change", "param"),
    [
        ({"model": 5}, "model"),
        ({"model": ""}, "model"),
        ({"stream": "yes"}, "stream"),
        ({"stream": 1}, "stream"),
        ({"temperature": "hot"}, "temperature"),
        ({"temperature": True}, "temperature"),
        ({"max_tokens": 1.5}, "max_tokens"),
        ({"seed": False}, "seed"),
        ({"stream_options": []}, "stream_options"),
        ({"stream_options": {"include_usage": "y"}}, "stream_options.include_usage"),
        ({"stop": 3}, "stop"),
        ({"stop": ["a", 1]}, "stop"),
        ({"response_format": "json"}, "response_format"),
        ({"tool_choice": "sometimes"}, "tool_choice"),
        ({"tool_choice": ["auto"]}, "tool_choice"),
        ({"tools": {"name": "f"}}, "tools"),
        ({"tools": [{"type": "function"}]}, "tools[0]"),
        ({"tools": [{"type": "function", "function": {"name": ""}}]}, "tools[0]"),
        ({"messages": []}, "messages"),
        ({"messages": "hi"}, "messages"),
        ({"messages": ["hi"]}, "messages[0]"),
        ({"messages": [{"role": "wizard", "content": "x"}]}, "messages[0].role"),
        ({"messages": [{"content": "x"}]}, "messages[0].role"),
        ({"messages": [{"role": "user", "content": 5}]}, "messages[0].content"),
        ({"messages": [{"role": "user", "content": [{"text": "x"}]}]}, "messages[0].content"),
        ({"messages": [{"role": "tool", "content": "x"}]}, "messages[0].tool_call_id"),
        (
            {"messages": [{"role": "assistant", "tool_calls": [{"function": {}}]}]},
            "messages[0].tool_calls",
        ),
    ],
)
def test_a_malformed_field_is_named(change: dict[str, Any], param: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        check_chat_body({**GOOD, **change})
    assert caught.value.param == param
    assert caught.value.status == 400
    assert caught.value.error_type == "invalid_request_error"
    assert f"`{param}`" in str(caught.value)


def test_a_body_that_is_not_an_object_is_refused() -> None:
    with pytest.raises(InvalidRequestError, match="JSON object"):
        check_chat_body(["model"])


def test_a_well_formed_request_passes_whole() -> None:
    body = {
        **GOOD,
        "stream": True,
        "stream_options": {"include_usage": True},
        "temperature": 0,
        "max_tokens": 10,
        "stop": ["\n"],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
        "tool_choice": {"type": "function", "function": {"name": "f"}},
        "messages": [
            {"role": "system", "content": None},
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "tool_calls": [{"id": "1", "function": {"name": "f"}}]},
            {"role": "tool", "tool_call_id": "1", "content": "ok"},
        ],
    }
    assert check_chat_body(body) is body

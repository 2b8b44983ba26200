"""A tool call cut by the output token limit is surfaced with ``error``, never as a call that
looks complete (vLLM 0.33 and SGLang 0.5.23 both hand over a parseable stub)."""

from __future__ import annotations

from typing import Any

from providers import ChatResponse, ChunkNormalizer
from providers.backends import profile_for
from providers.chat_completions.tool_call_accumulator import CUT_BY_LENGTH


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "c",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _call(index: int, call_id: str | None, name: str | None, arguments: str) -> dict[str, Any]:
    function: dict[str, Any] = {"arguments": arguments}
    if name is not None:
        function["name"] = name
    return {"index": index, "id": call_id, "type": "function", "function": function}


def _stream(*chunks: dict[str, Any]) -> ChatResponse:
    normalizer = ChunkNormalizer(profile_for("vllm"))
    updates = [u for chunk in chunks for u in normalizer.feed(chunk)]
    updates.extend(normalizer.finish())
    return ChatResponse.from_updates(updates)


def test_vllm_hermes_name_only_then_length_is_an_incomplete_call() -> None:
    """What vLLM 0.33's hermes parser streams when max_tokens cuts inside the arguments."""
    response = _stream(
        _chunk({"tool_calls": [_call(0, "chatcmpl-tool-1", "get_weather", "")]}),
        _chunk({}, "length"),
    )
    (call,) = response.tool_calls
    assert (call.name, call.arguments, call.error) == ("get_weather", {}, CUT_BY_LENGTH)
    assert response.finish_reason == "length"


def test_only_the_call_being_written_is_marked() -> None:
    response = _stream(
        _chunk({"tool_calls": [_call(0, "a", "get_weather", '{"city": "Paris"}')]}),
        _chunk({"tool_calls": [_call(1, "b", "get_time", '{"tz": "Eu')]}),
        _chunk({}, "length"),
    )
    first, second = response.tool_calls
    assert first.error is None and first.arguments == {"city": "Paris"}
    assert second.error is not None  # unparseable: its own error wins over the cut note


def test_a_call_finished_by_tool_calls_is_not_marked() -> None:
    response = _stream(
        _chunk({"tool_calls": [_call(0, "a", "get_weather", '{"city": "Paris"}')]}),
        _chunk({}, "tool_calls"),
    )
    assert [c.error for c in response.tool_calls] == [None]


def test_non_streamed_qwen3_coder_stub_with_length_is_marked() -> None:
    """vLLM's non-streamed qwen3_coder answer to a cut call: ``get_weather({})`` + length."""
    payload = {
        "id": "c",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "t",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": "{}"},
                        }
                    ],
                },
                "finish_reason": "length",
            }
        ],
    }
    normalizer = ChunkNormalizer(profile_for("vllm"))
    response = ChatResponse.from_updates(normalizer.normalize_completion(payload))
    (call,) = response.tool_calls
    assert call.error == CUT_BY_LENGTH

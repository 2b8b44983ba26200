"""``OutputWriter``: one writer of output items for the streamed and the non-streamed answer."""

from __future__ import annotations

import json
from typing import Any

from openai.types.responses import Response

from providers import (
    ChatFinishReason,
    ChatResponse,
    ChatResponseUpdate,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
)
from providers.gateway.responses_writing import Frame, OutputWriter


def contents() -> list[Any]:
    recovered = FunctionCallContent.from_json("", "missing", "{}")
    recovered.error = "not offered"
    recovered.raw = "<tool_call>as the model wrote it</tool_call>"
    return [
        TextReasoningContent("a"),
        TextContent("b"),
        FunctionCallContent("", "f", {"x": 1}),  # no id, no argument text
        recovered,
        TextContent("c"),
        TextReasoningContent("d"),
    ]


def without_ids(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in item.items() if k not in ("id", "call_id")} for item in items]


def test_the_streamed_and_the_whole_answer_have_the_same_items() -> None:
    whole = OutputWriter(Frame("m", {}), events=False).answer(
        ChatResponse.from_updates([ChatResponseUpdate(contents())])
    )
    streamed = OutputWriter(Frame("m", {}), events=True)
    streamed.start()
    for content in contents():
        streamed.update(ChatResponseUpdate([content]))
    final = streamed.finish()
    assert without_ids(final["output"]) == without_ids(whole["output"])
    assert [item["type"] for item in whole["output"]] == [
        "reasoning",
        "message",
        "function_call",
        "message",
        "reasoning",
    ]
    assert whole["output"][3]["content"][0]["text"] == (
        "<tool_call>as the model wrote it</tool_call>c"
    )
    Response.model_validate(whole)


def test_a_call_without_an_id_gets_one_and_its_arguments_as_json() -> None:
    response = OutputWriter(Frame("m", {}), events=False).answer(
        ChatResponse.from_updates([ChatResponseUpdate([FunctionCallContent("", "f", {"x": 1})])])
    )
    (call,) = response["output"]
    assert call["call_id"].startswith("call_")
    assert json.loads(call["arguments"]) == {"x": 1}


def test_no_usage_reported_is_null_not_zero_and_nothing_is_written_without_events() -> None:
    writer = OutputWriter(Frame("m", {}), events=False)
    writer.start()
    writer.update(ChatResponseUpdate([TextContent("hi")], finish_reason=ChatFinishReason.STOP))
    response = writer.finish()
    assert response["usage"] is None
    assert response["status"] == "completed"
    assert writer.take() == []
    assert Response.model_validate(response).output_text == "hi"


def test_the_echo_is_repeated_in_the_response() -> None:
    echo = {"temperature": 0.3, "tool_choice": "none", "metadata": {"a": "b"}, "store": False}
    response = OutputWriter(Frame("m", echo), events=False).finish()
    parsed = Response.model_validate(response)
    assert (parsed.temperature, parsed.tool_choice, parsed.metadata) == (0.3, "none", {"a": "b"})
    assert response["store"] is False

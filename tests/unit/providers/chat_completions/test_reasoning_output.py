"""``ReasoningOutput.NONE``: the answer comes back without reasoning, streamed and whole, whatever
field the server put it in; the text and tool calls are untouched."""

from __future__ import annotations

import json
from typing import Any

import httpx
import respx

from providers import (
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    OpenAiCompatibleChatClient,
    TextContent,
    TextReasoningContent,
)
from providers.abstractions.messages import ChatMessage
from providers.abstractions.open_values import ChatRole
from providers.abstractions.reasoning_options import ReasoningOptions, ReasoningOutput
from providers.chat_completions.option_enforcement import Enforcement, enforcement_for
from providers.chat_completions.reasoning_output import (
    drop_reasoning_response,
    drop_reasoning_runs,
)

BASE = "http://llm.test"
CHAT = f"{BASE}/v1/chat/completions"
NO_REASONING = ChatOptions(reasoning=ReasoningOptions(output=ReasoningOutput.NONE))
PLAN = Enforcement("vllm", drop_reasoning=True)


def sse(*deltas: dict[str, Any]) -> bytes:
    chunks = [
        {"id": "c", "created": 1, "model": "m", "choices": [{"index": 0, "delta": delta}]}
        for delta in deltas
    ]
    lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
    return "".join([*lines, "data: [DONE]\n\n"]).encode()


def test_the_plan_asks_for_the_drop_only_for_output_none() -> None:
    profile = OpenAiCompatibleChatClient(BASE).profile
    plan = enforcement_for(NO_REASONING, profile)
    assert plan is not None and plan.drop_reasoning
    for output in (ReasoningOutput.SUMMARY, ReasoningOutput.FULL, None):
        options = ChatOptions(reasoning=ReasoningOptions(output=output))
        assert enforcement_for(options, profile) is None
    assert enforcement_for(ChatOptions(), profile) is None


@respx.mock
async def test_a_stream_comes_back_without_reasoning() -> None:
    stream = sse(
        {"role": "assistant", "reasoning_content": "let me think"},
        {"reasoning_content": " more"},
        {"reasoning": "vLLM's field"},
        {"content": "Paris"},
        {"content": "."},
    )
    respx.post(CHAT).mock(
        return_value=httpx.Response(
            200, content=stream, headers={"content-type": "text/event-stream"}
        )
    )
    async with OpenAiCompatibleChatClient(BASE, "m") as chat:
        updates = [u async for u in chat.get_streaming_response("hi", NO_REASONING)]
    response = ChatResponse.from_updates(updates)
    assert response.text == "Paris."
    assert response.reasoning == ""
    assert not any(
        isinstance(content, TextReasoningContent) for u in updates for content in u.contents
    )


@respx.mock
async def test_a_stream_keeps_its_reasoning_when_not_asked() -> None:
    stream = sse({"reasoning_content": "think"}, {"content": "ok"})
    respx.post(CHAT).mock(
        return_value=httpx.Response(
            200, content=stream, headers={"content-type": "text/event-stream"}
        )
    )
    async with OpenAiCompatibleChatClient(BASE, "m") as chat:
        updates = [u async for u in chat.get_streaming_response("hi", ChatOptions())]
    assert ChatResponse.from_updates(updates).reasoning == "think"


@respx.mock
async def test_a_whole_answer_comes_back_without_reasoning() -> None:
    message = {"role": "assistant", "content": "Paris.", "reasoning_content": "let me think"}
    respx.post(CHAT).mock(
        return_value=httpx.Response(200, json={"choices": [{"index": 0, "message": message}]})
    )
    async with OpenAiCompatibleChatClient(BASE, "m") as chat:
        response = await chat.get_response("hi", NO_REASONING)
        kept = await chat.get_response("hi")
    assert (response.text, response.reasoning) == ("Paris.", "")
    assert kept.reasoning == "let me think"


async def test_the_run_stage_empties_reasoning_only_updates_and_keeps_the_rest() -> None:
    mixed = ChatResponseUpdate([TextReasoningContent("a"), TextContent("b")])
    only = ChatResponseUpdate([TextReasoningContent("c")])
    text = ChatResponseUpdate([TextContent("d")])

    async def runs() -> Any:
        yield [mixed, only]
        yield [text]

    out = [run async for run in drop_reasoning_runs(runs(), PLAN)]
    assert [len(run) for run in out] == [2, 1]  # no update is lost: a watchdog sees each
    assert mixed.contents == [TextContent("b")]
    assert only.contents == [] and not only.is_substantive
    assert text.contents == [TextContent("d")]


def test_the_response_stage_drops_each_messages_reasoning() -> None:
    response = ChatResponse(
        [
            ChatMessage(ChatRole.ASSISTANT, [TextReasoningContent("r"), TextContent("t")]),
            ChatMessage(ChatRole.ASSISTANT, [TextContent("u")]),
        ]
    )
    assert drop_reasoning_response(response, PLAN) is response
    assert [m.contents for m in response.messages] == [[TextContent("t")], [TextContent("u")]]


async def test_the_whitespace_opening_the_answer_goes_with_the_reasoning() -> None:
    """``</think>\\n\\n`` then the answer, split across updates and choices as a server may."""
    updates = [
        ChatResponseUpdate([TextReasoningContent("thinking")]),
        ChatResponseUpdate([TextContent("\n")]),
        ChatResponseUpdate([TextContent("\n")], choice_index=1),
        ChatResponseUpdate([TextContent("\n It")]),
        ChatResponseUpdate([TextContent(" is\n\n sunny.")]),
        ChatResponseUpdate([TextContent("\nB")], choice_index=1),
    ]

    async def runs() -> Any:
        yield updates

    out = [u for run in [r async for r in drop_reasoning_runs(runs(), PLAN)] for u in run]
    first = "".join(u.text for u in out if u.choice_index == 0)
    second = "".join(u.text for u in out if u.choice_index == 1)
    assert (first, second) == ("It is\n\n sunny.", "B")  # inner whitespace untouched


def test_the_whole_answer_loses_its_opening_whitespace_only() -> None:
    response = ChatResponse(
        [
            ChatMessage(
                ChatRole.ASSISTANT,
                [TextReasoningContent("r"), TextContent("\n\n"), TextContent(" A\n")],
            )
        ]
    )
    drop_reasoning_response(response, PLAN)
    assert response.messages[0].contents == [TextContent("A\n")]


@respx.mock
async def test_a_server_that_left_the_reasoning_out_gives_the_same_text() -> None:
    """vLLM with ``include_reasoning: false``: the template's separator opens the content."""
    message = {"role": "assistant", "content": "\n\nParis."}
    respx.post(CHAT).mock(
        return_value=httpx.Response(200, json={"choices": [{"index": 0, "message": message}]})
    )
    async with OpenAiCompatibleChatClient(BASE, "m", backend="vllm") as chat:
        response = await chat.get_response("hi", NO_REASONING)
    assert response.text == "Paris."

"""Each text tool-call format, streamed token by token in ``delta.content`` over a real socket.

The Done-when of the recovery issue: whatever format a model writes its call in, when a server
leaves it in content the caller gets a structured ``FunctionCallContent`` with parsed arguments,
finish reason ``tool_calls``, and no markup in the visible text. The streams are built in vLLM's
chunk shape (from its captures); the texts follow research/FORMATS.md.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers import ChatOptions, ChatResponse, OpenAiCompatibleChatClient, TextReasoningContent
from providers.layers.text_recovery import TextRecoveryChatClient
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer

ARGS = '{"city": "Paris", "days": 3}'
PREAMBLE = "Let me check. "
FORMATS: dict[str, str] = {
    "hermes": f'<tool_call>\n{{"name": "get_weather", "arguments": {ARGS}}}\n</tool_call>',
    "qwen3_coder": (
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
    ),
    "mistral": f'[TOOL_CALLS][{{"name": "get_weather", "arguments": {ARGS}}}]',
    "mistral_v11": f"[TOOL_CALLS]get_weather{ARGS}",
    "llama3_json": f'<|python_tag|>{{"name": "get_weather", "parameters": {ARGS}}}',
    "pythonic": "<|python_start|>[get_weather(city='Paris', days=3)]<|python_end|>",
    "kimi_k2": (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
        f"<|tool_call_argument_begin|>{ARGS}<|tool_call_end|><|tool_calls_section_end|>"
    ),
    "deepseek_v3": (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
        f"```json\n{ARGS}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    ),
    "deepseek_v31": (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>"
        f"{ARGS}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    ),
    "gpt_oss": (
        f"<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{ARGS}<|call|>"
    ),
    "gpt_oss_role_header": (
        "<|start|>assistant to=functions.get_weather<|channel|>commentary<|constrain|>json"
        f"<|message|>{ARGS}<|call|>"
    ),
    "nemotron": f'<TOOLCALL>[{{"name": "get_weather", "arguments": {ARGS}}}]</TOOLCALL>',
}
MARKUP = ("<tool_call", "<function", "[TOOL_CALLS]", "<|", "<｜", "get_weather(")
TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        },
    },
}


def vllm_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {
        "id": "chatcmpl-0123456789abcdef",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [choice],
    }


def vllm_stream(text: str, token: int = 3) -> bytes:
    """``text`` as vLLM streams plain content: role chunk, small deltas, a separate finish."""
    chunks = [vllm_chunk({"role": "assistant", "content": ""})]
    chunks += [
        vllm_chunk({"content": text[start : start + token]}) for start in range(0, len(text), token)
    ]
    chunks.append(vllm_chunk({}, "stop"))
    frames = [f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks]
    return ("".join(frames) + "data: [DONE]\n\n").encode()


@pytest.mark.parametrize("name", sorted(FORMATS))
@pytest.mark.parametrize("configured", ["auto", "named"])
async def test_text_tool_call_reaches_the_caller_structured(name: str, configured: str) -> None:
    body = vllm_stream(PREAMBLE + FORMATS[name])

    def answer(request: ReceivedRequest) -> RecordedReply:
        return RecordedReply(200, body, {"Content-Type": "text/event-stream"})

    fmt = "auto" if configured == "auto" else name.removesuffix("_v11").removesuffix("_role_header")
    async with (
        ReplayServer(
            answer, lambda data: [data[i : i + 7] for i in range(0, len(data), 7)]
        ) as server,
        TextRecoveryChatClient(
            OpenAiCompatibleChatClient(server.base_url, backend="vllm"), text_tool_calls=fmt
        ) as client,
    ):
        options = ChatOptions(tools=[TOOL])
        updates = [u async for u in client.get_streaming_response("weather?", options)]
    response = ChatResponse.from_updates(updates)
    assert [(c.name, c.arguments, c.error) for c in response.tool_calls] == [
        ("get_weather", {"city": "Paris", "days": 3}, None)
    ]
    assert response.finish_reason == "tool_calls"
    assert response.text.strip() == PREAMBLE.strip()
    for markup in MARKUP:
        assert markup not in response.text


async def test_a_whole_harmony_turn_reaches_the_caller_split() -> None:
    # Issue #24: analysis is reasoning, a commentary preamble is the visible text, and the call
    # addressed in the role header is a call; nothing of the markup shows.
    text = (
        "<|channel|>analysis<|message|>Need the weather.<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Let me check.<|end|>"
        + FORMATS["gpt_oss_role_header"]
    )
    body = vllm_stream(text)

    def answer(request: ReceivedRequest) -> RecordedReply:
        return RecordedReply(200, body, {"Content-Type": "text/event-stream"})

    async with (
        ReplayServer(
            answer, lambda data: [data[i : i + 5] for i in range(0, len(data), 5)]
        ) as server,
        TextRecoveryChatClient(
            OpenAiCompatibleChatClient(server.base_url, backend="vllm")
        ) as client,
    ):
        updates = [
            u async for u in client.get_streaming_response("weather?", ChatOptions(tools=[TOOL]))
        ]
    response = ChatResponse.from_updates(updates)
    assert [(c.name, c.arguments, c.error) for c in response.tool_calls] == [
        ("get_weather", {"city": "Paris", "days": 3}, None)
    ]
    assert response.text == "Let me check."
    contents = response.messages[0].contents
    reasoning = [c.text for c in contents if isinstance(c, TextReasoningContent)]
    assert "".join(reasoning) == "Need the weather."
    assert response.finish_reason == "tool_calls"

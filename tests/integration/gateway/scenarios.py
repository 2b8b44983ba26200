"""The model texts the gateway tests send through, the request bodies, and one result shape.

Every client's answer is reduced to :class:`Seen` (what an agent reads: text, reasoning, calls,
finish reason), so one assertion serves openai-python, the Node SDK and curl alike.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx
import openai

from tests.integration.llama_server import forcing_grammar

__all__ = [
    "HARMONY",
    "HERMES",
    "PROMPT",
    "THINK",
    "UNOFFERED",
    "WEATHER_TOOL",
    "Seen",
    "chat_body",
    "forced_fields",
    "python_chat",
    "python_chat_sync",
    "seen_from",
]

PROMPT = "What is the weather in Paris?"
WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
# Short on purpose: each grammar-forced token costs llama-server a pass over the vocabulary.
HERMES = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
THINK = "<think>\nRain.\n</think>\n\nTake an umbrella."
HARMONY = (
    "<|channel|>analysis<|message|>The user wants Paris weather.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>It is sunny in Paris.<|return|>"
)
UNOFFERED = '<tool_call>\n{"name": "delete_files", "arguments": {"path": "/"}}\n</tool_call>'


@dataclass
class Seen:
    """What a client handed its caller."""

    content: str = ""
    reasoning: str = ""
    calls: list[tuple[str, Any]] = field(default_factory=list)
    """``(name, parsed arguments)`` of each ``tool_calls`` entry."""
    call_ids: list[str] = field(default_factory=list)
    finish_reason: str | None = None


def seen_from(result: dict[str, Any]) -> Seen:
    """The Node script's (``node/chat.cjs``) JSON result as :class:`Seen`."""
    assert "error" not in result, result
    calls = result.get("tool_calls") or []
    return Seen(
        content=result.get("content") or "",
        reasoning=result.get("reasoning_content") or "",
        calls=[(call["name"], json.loads(call["arguments"])) for call in calls],
        call_ids=[call["id"] for call in calls],
        finish_reason=result.get("finish_reason"),
    )


def chat_body(*, tools: bool = True, stream: bool = False, **extra: Any) -> dict[str, Any]:
    """A chat-completions body without ``model`` (the caller names one)."""
    body: dict[str, Any] = {"messages": [{"role": "user", "content": PROMPT}], "stream": stream}
    if tools:
        body["tools"] = [WEATHER_TOOL]
    return body | extra


def forced_fields(server_url: str, text: str) -> dict[str, Any]:
    """The body fields that make the tiny llama-server model write exactly ``text``: the
    grammar, the tokenizer's own tokens favoured (fewer, longer tokens: faster), enough
    ``max_tokens``, and ``tool_choice: none`` so the server's parser leaves the text alone
    (and accepts a grammar beside tools)."""
    tokens = httpx.post(f"{server_url}/tokenize", json={"content": text}).json()["tokens"]
    return {
        "grammar": forcing_grammar(text),
        "logit_bias": {str(token): 50 for token in set(tokens)},
        "max_tokens": len(text) + 8,
        "tool_choice": "none",
    }


def _python_seen(completion: Any) -> Seen:
    choice = completion.choices[0]
    message = choice.message
    calls = message.tool_calls or []
    return Seen(
        content=message.content or "",
        reasoning=getattr(message, "reasoning_content", None) or "",
        calls=[(call.function.name, json.loads(call.function.arguments)) for call in calls],
        call_ids=[call.id for call in calls],
        finish_reason=choice.finish_reason,
    )


class _Accumulated:
    """A stream's chunks summed as an agent loop sums them."""

    def __init__(self) -> None:
        self.seen = Seen()
        self.calls: dict[int, dict[str, str]] = {}

    def add(self, chunk: Any) -> None:
        for choice in chunk.choices:
            delta = choice.delta
            self.seen.content += delta.content or ""
            self.seen.reasoning += getattr(delta, "reasoning_content", None) or ""
            for call in delta.tool_calls or []:
                slot = self.calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                slot["id"] = call.id or slot["id"]
                if call.function is not None:
                    slot["name"] += call.function.name or ""
                    slot["arguments"] += call.function.arguments or ""
            self.seen.finish_reason = choice.finish_reason or self.seen.finish_reason

    def done(self) -> Seen:
        for _, call in sorted(self.calls.items()):
            self.seen.calls.append((call["name"], json.loads(call["arguments"])))
            self.seen.call_ids.append(call["id"])
        return self.seen


async def python_chat(base_url: str, model: str, body: dict[str, Any]) -> Seen:
    """``AsyncOpenAI().chat.completions.create``, streamed or not as ``body`` says; unknown
    fields (``grammar``) go in ``extra_body`` as a caller would send them."""
    known = {"messages", "tools", "tool_choice", "max_tokens", "logit_bias", "stream"}
    extra = {key: value for key, value in body.items() if key not in known}
    args = {key: value for key, value in body.items() if key in known}
    async with openai.AsyncOpenAI(base_url=base_url, api_key="unused", max_retries=0) as client:
        if not body.get("stream"):
            return _python_seen(
                await client.chat.completions.create(model=model, extra_body=extra, **args)
            )
        summed = _Accumulated()
        stream = await client.chat.completions.create(model=model, extra_body=extra, **args)
        async for chunk in stream:
            summed.add(chunk)
        return summed.done()


def python_chat_sync(base_url: str, model: str, body: dict[str, Any]) -> Seen:
    """:func:`python_chat` with the sync ``OpenAI`` client."""
    known = {"messages", "tools", "tool_choice", "max_tokens", "logit_bias", "stream"}
    extra = {key: value for key, value in body.items() if key not in known}
    args = {key: value for key, value in body.items() if key in known}
    with openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0) as client:
        if not body.get("stream"):
            return _python_seen(
                client.chat.completions.create(model=model, extra_body=extra, **args)
            )
        summed = _Accumulated()
        for chunk in client.chat.completions.create(model=model, extra_body=extra, **args):
            summed.add(chunk)
        return summed.done()

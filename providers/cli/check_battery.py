"""The compatibility battery of ``oaicompat check``: one request per behaviour that differs
between servers, each judged ``ok``, ``differs`` (works, but not the OpenAI way) or ``failed``.

A check returns its outcome and a one-line detail; an error it does not expect propagates, and
the runner (``providers.cli.check``) records it as ``failed``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Awaitable, Callable
from typing import Any

from capabilities import ModelCapabilities, OpenAiCompatibleCapabilityResolver
from providers.abstractions.chat_client import ChatClient
from providers.abstractions.chat_response import ChatResponse
from providers.abstractions.errors import ContextLengthExceededError, ModelNotFoundError
from providers.abstractions.options import ChatOptions
from providers.cli.honours_samples import WEATHER_TOOL

__all__ = ["BATTERY", "TIME_TOOL", "WEATHER_TOOL", "Check"]

Check = Callable[
    [ChatClient, argparse.Namespace, ModelCapabilities, OpenAiCompatibleCapabilityResolver],
    Awaitable[tuple[str, str]],
]

TIME_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Current time in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


async def _ask(
    client: ChatClient, prompt: str, args: argparse.Namespace, **kw: Any
) -> ChatResponse:
    options = ChatOptions(max_output_tokens=args.max_tokens, **kw)
    updates = [u async for u in client.get_streaming_response(prompt, options)]
    return ChatResponse.from_updates(updates)


def _calls(response: ChatResponse) -> str:
    return "; ".join(f"{c.name}({json.dumps(c.arguments)})" for c in response.tool_calls) or "-"


async def _check_text(client: ChatClient, args: argparse.Namespace, *_: Any) -> tuple[str, str]:
    response = await _ask(client, "Say hello.", args)
    outcome = "ok" if response.text else "differs"
    return outcome, f"{len(response.text)} chars, finish {response.finish_reason}"


async def _check_reasoning(
    client: ChatClient, args: argparse.Namespace, *_: Any
) -> tuple[str, str]:
    response = await _ask(client, "Think step by step: what is 17 * 3?", args)
    if response.reasoning:
        where = "split from the text" if "<think>" not in response.text else "left in the text"
        return "ok", f"{len(response.reasoning)} chars of reasoning, {where}"
    return "differs", "no reasoning (the model or server does not reason here)"


async def _check_tool(client: ChatClient, args: argparse.Namespace, *_: Any) -> tuple[str, str]:
    response = await _ask(client, "What is the weather in Paris?", args, tools=[WEATHER_TOOL])
    if response.tool_calls:
        return "ok", f"{_calls(response)}, finish {response.finish_reason}"
    return "differs", f"no tool call; answered {len(response.text)} chars of text"


async def _check_parallel(client: ChatClient, args: argparse.Namespace, *_: Any) -> tuple[str, str]:
    response = await _ask(
        client,
        "What are the weather and the time in Paris?",
        args,
        tools=[WEATHER_TOOL, TIME_TOOL],
        allow_multiple_tool_calls=True,
    )
    count = len(response.tool_calls)
    return ("ok" if count >= 2 else "differs"), f"{count} call(s): {_calls(response)}"


async def _check_usage(client: ChatClient, args: argparse.Namespace, *_: Any) -> tuple[str, str]:
    usage = (await _ask(client, "Say hello.", args)).usage
    if usage is None:
        return "differs", "no usage reported on the stream"
    detail = (
        f"in {usage.input_token_count}, out {usage.output_token_count}, "
        f"cached {usage.cached_input_token_count}"
    )
    return ("ok" if usage.input_token_count else "differs"), detail


async def _check_overlong(
    client: ChatClient, args: argparse.Namespace, caps: ModelCapabilities, _: Any
) -> tuple[str, str]:
    window = caps.context_window.value or 32768
    prompt = "weather " * min(int(window * 1.5) + 100, 400_000)
    try:
        response = await _ask(client, prompt, args)
    except ContextLengthExceededError as exc:
        sizes = f"prompt_tokens {exc.prompt_tokens}, context_window {exc.context_window}"
        return "ok", f"ContextLengthExceededError (status {exc.status}), {sizes}"
    return "differs", f"accepted ({len(response.text)} chars, finish {response.finish_reason})"


async def _check_model_id(
    client: ChatClient,
    args: argparse.Namespace,
    caps: ModelCapabilities,
    resolver: OpenAiCompatibleCapabilityResolver,
) -> tuple[str, str]:
    wrong = "oaicompat-no-such-model"
    try:
        await resolver.validate_model(wrong)
    except ModelNotFoundError as exc:
        return "ok", f"ModelNotFoundError: {str(exc).splitlines()[0][:120]}"
    if caps.model_field_ignored:
        return "differs", "the server ignores the model field (answers with its one model)"
    return "differs", "accepted an unknown model id"


BATTERY: tuple[tuple[str, Check], ...] = (
    ("plain text", _check_text),
    ("reasoning", _check_reasoning),
    ("tool call", _check_tool),
    ("parallel tool calls", _check_parallel),
    ("usage", _check_usage),
    ("over-long prompt", _check_overlong),
    ("wrong model id", _check_model_id),
)
"""In report order; the first, plain text, decides the exit code."""

"""What the fault tests share: canned stream pieces, the injected sleep, and a consumer that
keeps every update the caller saw together with the error that ended the stream."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from providers import ChatResponseUpdate, OpenAiCompatibleChatClient, ProviderError
from providers.chat_completions.client import Timeouts
from providers.layers.retry import RetryingChatClient, RetryPolicy
from tests.faults.server import Reply, chunk, sse

ROOT = Path(__file__).resolve().parents[2]
CAPTURED_OVERFLOW = (
    ROOT / "transcripts/llamacpp/captured--qwen25-plain--error-context-exceeded.raw"
).read_bytes()
PROMPT = "What is the weather in Paris? secret-prompt-7d1f"

FAST = Timeouts(connect=2, first_token=5, idle=5, total=20)
"""Short enough that a bug hangs a test for seconds, not minutes."""

ROLE = sse(chunk({"role": "assistant", "content": ""}))
HEL = sse(chunk({"content": "Hel"}))
LO = sse(chunk({"content": "lo"}))
STOP = sse(chunk({}, "stop"))
DONE = sse("[DONE]")
HELLO = [ROLE, HEL, LO, STOP, DONE]
TOOL_START = sse(
    chunk(
        {
            "tool_calls": [
                {
                    "index": 0,
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": '{"city": "Par'},
                }
            ]
        }
    )
)
TOOL_REST = sse(chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'is"}'}}]}))
TOOL_DONE = sse(chunk({}, "tool_calls"))
COMPLETION = json.dumps(
    {
        "id": "chatcmpl-whole",
        "object": "chat.completion",
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hello"},
                "finish_reason": "stop",
            }
        ],
    }
).encode()


class Waits(list[float]):
    """The injected sleep: records each wait instead of waiting."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


def stream_reply(*pieces: bytes | object, end: str = "complete") -> Reply:
    return Reply(pieces=list(pieces), end=end)  # type: ignore[arg-type]


def whole(body: bytes = COMPLETION, status: int = 200, **headers: str) -> Reply:
    return Reply(status, [body], headers=headers, content_type="application/json")


def error_reply(status: int, payload: object, **headers: str) -> Reply:
    return whole(json.dumps(payload).encode(), status, **headers)


def unavailable(status: int = 503, **headers: str) -> Reply:
    return error_reply(
        status,
        {"error": {"code": status, "message": "Loading model", "type": "unavailable_error"}},
        **headers,
    )


def client_for(
    base_url: str, waits: Waits, policy: RetryPolicy | None = None, **budgets: float | None
) -> RetryingChatClient:
    """The real client (short budgets, overridable) under the retry layer, sleeping into
    ``waits``, with a jitter source fixed at 0.5 so every backoff is exact."""
    timeouts = dataclasses.replace(FAST, **budgets)
    inner = OpenAiCompatibleChatClient(base_url, "m", timeouts=timeouts)
    return RetryingChatClient(inner, policy, sleep=waits, random=lambda: 0.5)


async def consume(
    stream: AsyncIterator[ChatResponseUpdate],
    on_update: Callable[[ChatResponseUpdate], None] | None = None,
) -> tuple[list[ChatResponseUpdate], ProviderError | None]:
    """Every update the caller got, and the error that ended the stream (if any)."""
    seen: list[ChatResponseUpdate] = []
    try:
        async for update in stream:
            seen.append(update)
            if on_update is not None:
                on_update(update)
    except ProviderError as error:
        return seen, error
    return seen, None


def seen_text(updates: list[ChatResponseUpdate]) -> str:
    return "".join(u.text for u in updates)


def roles(updates: list[ChatResponseUpdate]) -> int:
    return sum(1 for u in updates if u.role is not None)


def assert_no_prompt(error: ProviderError) -> None:
    assert "secret-prompt" not in str(error)
    assert "secret-prompt" not in error.user_message

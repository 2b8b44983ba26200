"""A real llama-server killed mid-stream: the caller gets ``StreamInterruptedError`` holding what
it already received, and the retry layer does not retry (output had reached the caller).

The server is function-scoped (it dies in the test); the model text is forced by a GBNF
grammar, long enough that generation is still running when the first content update arrives.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from providers import ChatOptions, OpenAiCompatibleChatClient, StreamInterruptedError
from providers.chat_completions.client import Timeouts
from providers.layers.retry import RetryingChatClient

LONG_TEXT = "The quick brown fox jumps over the lazy dog. " * 120


def forced(text: str, max_tokens: int) -> ChatOptions:
    """Options whose grammar makes the random-weight model emit exactly ``text``."""
    literal = json.dumps(text, ensure_ascii=True)  # GBNF string literals accept JSON escapes
    return ChatOptions(
        max_output_tokens=max_tokens, additional_properties={"grammar": f"root ::= {literal}"}
    )


@pytest.fixture
def doomed_server(rig: dict[str, Any]) -> Iterator[Any]:
    """A server of its own, since the test kills it."""
    from tests.integration.llama_server import LlamaServer

    with LlamaServer(rig["model"], chat_template_file=rig["templates"]["qwen25"]) as server:
        yield server


async def test_server_killed_mid_stream_raises_interrupted_with_the_partial(
    doomed_server: Any,
) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    inner = OpenAiCompatibleChatClient(
        doomed_server.base_url,
        backend="llamacpp",
        timeouts=Timeouts(connect=5, first_token=60, idle=30, total=120),
    )
    seen: list[str] = []
    async with RetryingChatClient(inner, sleep=sleep) as client:
        with pytest.raises(StreamInterruptedError) as caught:
            async for update in client.get_streaming_response("Say it.", forced(LONG_TEXT, 3000)):
                seen.append(update.text)
                if update.text and doomed_server.running:
                    # SIGKILL, not LlamaServer.stop()'s SIGTERM: no chance to end the stream.
                    doomed_server._process.send_signal(signal.SIGKILL)
    error = caught.value
    partial = error.partial_response
    assert partial is not None
    received = "".join(seen)
    assert received  # the first content update at least
    assert partial.text == received  # everything the caller got, nothing else
    assert LONG_TEXT.startswith(partial.text)
    assert len(partial.text) < len(LONG_TEXT)  # cut short
    assert partial.finish_reason is None
    assert waits == []  # not retried: output had reached the caller
    assert error.retry_attempts == 0
    assert error.backend == "llamacpp"

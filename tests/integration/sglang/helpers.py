"""What every SGLang scenario test does: script the model text, ask through our standard
pipeline (streamed or not), and check usage against what the scripted scheduler really did."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from providers import ChatClient, ChatResponse, create_chat_client
from tests.integration.rigs.scenarios import Scenario, run
from tests.integration.rigs.sglang.server import SglangServer

STREAMING = [True, False]
STREAMING_IDS = ["stream", "nonstream"]


@asynccontextmanager
async def pipeline(
    server: SglangServer, model_id: str | None = None, **kwargs: Any
) -> AsyncIterator[ChatClient]:
    """The standard pipeline (``create_chat_client``) against ``server``, closed afterwards.

    Without the retry layer: a retried request would reach the scheduler twice, and the tests
    count what reached it. ``kwargs`` go to ``create_chat_client`` (``text_tool_calls=None``…).
    """
    client = create_chat_client(
        server.base_url, model_id or server.model_id, backend="sglang", retry=None, **kwargs
    )
    try:
        yield client
    finally:
        await client.aclose()


async def run_scenario(
    server: SglangServer, scenario: Scenario, *, streaming: bool
) -> ChatResponse:
    """Script ``scenario.model_text``, send its request, and check what reached the scheduler."""
    server.script(scenario.model_text)
    before = len(server.prompts())
    async with pipeline(server) as client:
        response = await run(client, scenario, streaming=streaming)
    received = server.prompts()[before:]
    assert len(received) == 1, f"expected one request at the scheduler, got {received!r}"
    assert received[0].stream is streaming
    assert received[0].max_new_tokens == scenario.max_output_tokens
    return response


def assert_usage(response: ChatResponse, server: SglangServer) -> None:
    """Usage is what the scheduler did for the last request: its prompt ids, and the scripted
    ids it emitted (plus the end-of-sequence id, which SGLang counts, on a stop finish).

    ``cached_input_token_count`` stays ``None``: SGLang sends ``prompt_tokens_details: null``
    without ``--enable-cache-report``, and an unreported count is unknown, not 0.
    """
    received = server.prompts()[-1]
    usage = response.usage
    assert usage is not None, "SGLang reports usage; the client must pass it on"
    if response.finish_reason == "length":
        expected_output = received.max_new_tokens
    else:
        expected_output = received.script_token_count + 1
    assert usage.input_token_count == received.prompt_tokens
    assert usage.output_token_count == expected_output
    assert usage.total_token_count == received.prompt_tokens + (expected_output or 0)
    assert usage.cached_input_token_count is None

"""A llama-server that is still loading its model: readiness waits it out, a request is told
to come back later.

``llama-server`` binds its port first and answers everything with ``503 {"error": {"message":
"Loading model", "type": "unavailable_error"}}`` until the model is loaded. Even the tiny model
takes a while there — most of it is building the 151,936-token Qwen2 vocabulary — some 0.5 to
2.5 s on two cores, so a server started without waiting and polled at once is reliably caught
loading, with no bigger model needed. The test fails (it does not pass vacuously) if it never
saw the 503.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from capabilities import wait_until_ready
from providers import BackendUnavailableError, ChatOptions, OpenAiCompatibleChatClient
from providers.layers.retry import RetryPolicy
from providers.transport.endpoint import Endpoint
from tests.integration.llama_server import LlamaServer, forcing_grammar

POLL = 0.01  # seconds between /health polls: the loading window is ~50 of them at the least


def forced(text: str) -> ChatOptions:
    return ChatOptions(
        max_output_tokens=len(text) + 4, additional_properties={"grammar": forcing_grammar(text)}
    )


@pytest.fixture
def loading_server(rig: dict[str, Any]) -> Iterator[LlamaServer]:
    """Spawned, not waited for: the test meets it while the port is closed, then loading."""
    server = LlamaServer(rig["model"], chat_template_file=rig["templates"]["qwen25"])
    server.start(wait=False)
    try:
        yield server
    finally:
        server.stop()


async def test_readiness_waits_through_loading_and_early_requests_get_a_retryable_503(
    loading_server: LlamaServer,
) -> None:
    started = time.monotonic()
    seen: list[int] = []  # every /health status wait_until_ready got, in order

    async def note(response: httpx.Response) -> None:
        seen.append(response.status_code)

    endpoint = Endpoint.from_base_url(loading_server.base_url)
    async with (
        httpx.AsyncClient(event_hooks={"response": [note]}) as http,
        OpenAiCompatibleChatClient(
            loading_server.base_url, backend="llamacpp", validate_model=True
        ) as patient,
        OpenAiCompatibleChatClient(loading_server.base_url, backend="llamacpp") as eager,
    ):
        readiness = asyncio.create_task(
            wait_until_ready(http, endpoint, budget_seconds=60, poll_interval=POLL)
        )
        # validate_model=True: the client's first request waits for readiness by itself.
        patient_answer = asyncio.create_task(patient.get_response("Ready?", forced("Ready.")))
        while 503 not in seen and not readiness.done():
            await asyncio.sleep(POLL / 2)
        assert 503 in seen, f"the loading state was never observed (statuses: {seen})"

        # Now, while it loads: a plain client gets a typed error the retry layer would retry.
        with pytest.raises(BackendUnavailableError) as whole:
            await eager.get_response("Too early?", forced("No."))
        with pytest.raises(BackendUnavailableError) as streamed:
            async for _ in eager.get_streaming_response("Too early?", forced("No.")):
                pass  # pragma: no cover - the 503 comes before any update

        ready = await readiness
        answer = await patient_answer
    loaded_after = time.monotonic() - started

    for error in (whole.value, streamed.value):
        assert error.status == 503
        assert error.backend == "llamacpp"
        assert "Loading model" in str(error)
        partial = error.partial_response  # the stream's is an empty response, the call's None
        assert partial is None or (partial.text, partial.tool_calls) == ("", [])
        assert RetryPolicy().retry_reason(error) == "http_503"

    assert ready.status == 200
    assert ready.attempts >= 2 and ready.waited_seconds > 0
    assert seen[-1] == 200 and set(seen[:-1]) == {503}, seen  # loading, loading…, ready
    assert answer.text == "Ready."
    assert answer.finish_reason == "stop"
    print(  # the loading window this run saw, for the report
        f"\nloading: {len(seen) - 1} x 503 over {ready.waited_seconds:.2f} s of polling; "
        f"answered {loaded_after:.2f} s after the test began"
    )

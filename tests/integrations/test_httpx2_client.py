"""The wire client with an ``httpx2.AsyncClient`` as ``http_client`` (openai-python 3's HTTP
library): requests go through the caller's client (its event hooks see them), answers and
errors come back as with httpx's.
"""

from __future__ import annotations

from typing import Any

import pytest

from providers import ProviderConnectionError, ServerError, create_chat_client
from tests.integrations.frameworks import require
from tests.integrations.replay_turns import SCENARIOS, TwoTurnServer
from tests.integrations.servers import serve_recording

httpx2 = require("httpx2")


async def test_requests_go_through_the_callers_httpx2_client() -> None:
    seen: list[str] = []

    async def record(request: Any) -> None:
        seen.append(f"{request.method} {request.url.path}")

    hooks = {"request": [record]}
    async with (
        TwoTurnServer(SCENARIOS["vllm"]) as server,
        httpx2.AsyncClient(event_hooks=hooks) as http,
    ):
        client = create_chat_client(
            f"{server.base_url}/v1", "served", backend="vllm", http_client=http
        )
        updates = [u async for u in client.get_streaming_response("Weather in Paris?")]
        answer = await client.get_response("And now?")
        await client.aclose()
        assert not http.is_closed  # the caller's client stays the caller's
    assert seen == ["POST /v1/chat/completions"] * 2
    assert [c.name for u in updates for c in u.contents if hasattr(c, "name")] == ["get_weather"]
    assert answer.text == "It is sunny in Paris."
    assert answer.usage is not None and answer.usage.output_token_count == 20


async def test_a_mid_stream_error_keeps_its_type_and_partial_answer() -> None:
    recording = serve_recording("vllm", "reconstructed--error-midstream")
    async with recording as server, httpx2.AsyncClient() as http:
        client = create_chat_client(
            f"{server.base_url}/v1", "served", backend="vllm", http_client=http
        )
        with pytest.raises(ServerError) as caught:
            _ = [u async for u in client.get_streaming_response("hi")]
    partial = caught.value.partial_response
    assert partial is not None and partial.text == "Hello!"


async def test_httpx2s_connection_error_is_a_provider_connection_error() -> None:
    async with httpx2.AsyncClient() as http:
        client = create_chat_client(
            "http://127.0.0.1:9/v1", "served", backend="vllm", http_client=http, retry=None
        )
        with pytest.raises(ProviderConnectionError):
            await client.get_response("hi")

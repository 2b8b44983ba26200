"""In-stream error envelopes that say "invalid request" (issue #24 part 4).

Groq and OpenRouter send a request they reject after the 200 as a ``data: {"error": …}`` event
with ``type: "invalid_request_error"`` and ``status_code: 400``. Typed as a server error it would
be retried, and fail the same way again; it is an ``InvalidRequestError``, which the retry
policy refuses.
"""

from __future__ import annotations

from typing import Any

import pytest
import respx

from providers import InvalidRequestError, OpenAiCompatibleChatClient
from providers.layers.retry import RetryPolicy
from tests.unit.providers.chat_completions.test_client import CHAT, chunk, client, sse, streaming

__all__ = ["client"]  # the fixture, re-used

GROQ = {
    "error": {
        "message": "Failed to call a function. Please adjust your prompt.",
        "type": "invalid_request_error",
        "code": "tool_use_failed",
        "status_code": 400,
    }
}
OPENROUTER = {
    "id": "gen-1",
    "object": "chat.completion.chunk",
    "error": {"code": "provider_error", "message": "Provider returned error"},
    "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
    "status_code": 400,
}


@respx.mock
@pytest.mark.parametrize("event", [GROQ, OPENROUTER], ids=["groq", "openrouter"])
async def test_invalid_request_event_is_typed_and_not_retried(
    client: OpenAiCompatibleChatClient, event: dict[str, Any]
) -> None:
    respx.post(CHAT).mock(return_value=streaming(sse(chunk({"content": "Let me"}), event)))
    with pytest.raises(InvalidRequestError) as info:
        async for _ in client.get_streaming_response("x"):
            pass
    error = info.value
    assert error.status == 400
    assert error.partial_response is not None
    assert error.partial_response.text == "Let me"
    assert RetryPolicy().retry_reason(error) is None

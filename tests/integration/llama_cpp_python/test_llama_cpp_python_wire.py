"""What llama-cpp-python's server really sends, and what the pipeline makes of it.

Detection from its real ``/v1/models``, usage (in the JSON answer, never in a stream), the
model id it echoes, its errors (an OpenAI-style 400 for a context overflow, a stream that simply
ends when the overflow is found after the 200), and the structured tool calls of its
``chatml-function-calling`` handler. docs/wire.md §7 sums these up.
"""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

import httpx
import pytest

from capabilities import Backend, Source, detect_backend
from providers import (
    ChatClient,
    ChatOptions,
    ChatResponse,
    ChatToolMode,
    ContextLengthExceededError,
    ProviderError,
    create_chat_client,
)
from providers.config import OaicompatConfig, client_for
from providers.transport.endpoint import Endpoint
from tests.integration.llama_cpp_python.server import MODEL_ALIAS, LlamaCppPythonServer
from tests.integration.llama_cpp_python.test_llama_cpp_python_scenarios import (
    BACKEND,
    forcing,
    pipeline,
)
from tests.integration.rigs.scenarios import PROMPT, SCENARIOS, assert_matches, run

PINNED_WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "enum": ["Paris"]},
                "unit": {"type": "string", "enum": ["celsius"]},
            },
            "required": ["city", "unit"],
        },
    },
}
"""One value per argument: the handler's grammar, built from the schema, fixes the call."""


async def test_detection_names_it_from_its_model_listing(
    lcp_server: LlamaCppPythonServer,
) -> None:
    async with httpx.AsyncClient() as http:
        found = await detect_backend(http, Endpoint.from_base_url(f"{lcp_server.base_url}/v1"))
    assert (found.backend, found.source) == (Backend.LLAMA_CPP_PYTHON, Source.MODELS)
    assert found.version is None  # it states its version nowhere on the wire


@pytest.mark.parametrize("streaming", [False, True], ids=["json", "stream"])
async def test_usage_only_in_the_json_answer(
    lcp_server: LlamaCppPythonServer, streaming: bool
) -> None:
    """``stream_options.include_usage`` is dropped unread: a stream never has usage."""
    scenario = SCENARIOS["text"]
    extra = await forcing(lcp_server.base_url, scenario.model_text)
    async with aclosing(pipeline(lcp_server)) as client:
        response = await run(client, scenario, streaming=streaming, **extra)
    assert_matches(response, scenario)
    if streaming:
        assert response.usage is None
    else:
        assert response.usage is not None
        assert response.usage.output_token_count == 6  # It, is, sunny, in, Paris, .
        assert response.usage.input_token_count and response.usage.input_token_count > 5


async def test_any_model_id_is_answered_by_the_loaded_model_and_echoed(
    lcp_server: LlamaCppPythonServer,
) -> None:
    scenario = SCENARIOS["text"]
    extra = await forcing(lcp_server.base_url, scenario.model_text)
    client = create_chat_client(lcp_server.base_url, "no-such-model", backend=BACKEND, retry=None)
    async with aclosing(client):
        response = await run(client, scenario, streaming=False, **extra)
    assert_matches(response, scenario)
    assert response.model_id == "no-such-model"


async def test_configured_backend_name(lcp_server: LlamaCppPythonServer) -> None:
    """``backend: llama-cpp-python`` in a configuration file reaches the wire client."""
    config = OaicompatConfig.model_validate(
        {
            "backends": {
                "local": {
                    "base_url": f"{lcp_server.base_url}/v1",
                    "model_id": MODEL_ALIAS,
                    "backend": BACKEND,
                    "retry": {"max_attempts": 1},
                }
            },
            "roles": {"main": "local"},
        }
    )
    scenario = SCENARIOS["text"]
    extra = await forcing(lcp_server.base_url, scenario.model_text)
    async with aclosing(client_for(config, "main")) as client:
        response = await run(client, scenario, streaming=True, **extra)
    assert_matches(response, scenario)


@pytest.mark.parametrize("streaming", [False, True], ids=["json", "stream"])
async def test_context_overflow(lcp_server: LlamaCppPythonServer, streaming: bool) -> None:
    """Not streamed: 400 ``context_length_exceeded``, typed with both counts. Streamed: the
    overflow is found after the 200 event-stream answer began, and the server just ends it
    (no event, no ``[DONE]``): a typed error all the same, never a silent empty answer."""
    options = ChatOptions(max_output_tokens=16)
    async with aclosing(pipeline(lcp_server)) as client:
        with pytest.raises(ProviderError) as caught:
            if streaming:
                [u async for u in client.get_streaming_response("Paris " * 5000, options)]
            else:
                await client.get_response("Paris " * 5000, options)
    if not streaming:
        assert isinstance(caught.value, ContextLengthExceededError)
        assert caught.value.status == 400
        assert caught.value.context_window == lcp_server.n_ctx


async def _call(client: ChatClient, mode: ChatToolMode, *, streaming: bool) -> ChatResponse:
    options = ChatOptions(max_output_tokens=60, tools=[PINNED_WEATHER_TOOL], tool_mode=mode)
    if not streaming:
        return await client.get_response(PROMPT, options)
    updates = [u async for u in client.get_streaming_response(PROMPT, options)]
    return ChatResponse.from_updates(updates)


NAMED = ChatToolMode.require("get_weather")


@pytest.mark.parametrize(
    ("mode", "streaming"),
    [(ChatToolMode.AUTO, False), (NAMED, False), (NAMED, True)],
    ids=["auto-json", "named-json", "named-stream"],
)
async def test_function_calling_handler_answers_structured_calls(
    lcp_function_calling_server: LlamaCppPythonServer, mode: ChatToolMode, streaming: bool
) -> None:
    async with aclosing(pipeline(lcp_function_calling_server)) as client:
        response = await _call(client, mode, streaming=streaming)
    calls = [(c.name, c.arguments, c.error) for c in response.tool_calls]
    assert calls == [("get_weather", {"city": "Paris", "unit": "celsius"}, None)]
    assert response.finish_reason == "tool_calls"


async def test_function_calling_handler_refuses_auto_in_a_stream(
    lcp_function_calling_server: LlamaCppPythonServer,
) -> None:
    """``tool_choice: auto`` with ``stream: true`` raises inside the handler after the 200:
    the stream ends with nothing, and the caller gets a typed error."""
    async with aclosing(pipeline(lcp_function_calling_server)) as client:
        with pytest.raises(ProviderError):
            await _call(client, ChatToolMode.AUTO, streaming=True)


async def test_a_second_request_ends_a_running_stream_without_a_finish(
    lcp_server: LlamaCppPythonServer,
) -> None:
    """``interrupt_requests`` (on by default): a request that arrives while a stream runs makes
    the server send ``[DONE]`` at once, with no finish chunk. The caller sees it as a response
    whose ``finish_reason`` is ``None`` and whose text is a strict prefix of the model's."""
    long_text = "It is sunny in Paris. " * 8
    extra = await forcing(lcp_server.base_url, long_text)
    options = ChatOptions(max_output_tokens=120, additional_properties=extra)
    async with aclosing(pipeline(lcp_server)) as client, aclosing(pipeline(lcp_server)) as other:
        stream = client.get_streaming_response(PROMPT, options)
        updates = [await anext(stream)]
        while not updates[-1].text:
            updates.append(await anext(stream))
        second = await other.get_response(PROMPT, ChatOptions(max_output_tokens=1))
        updates += [update async for update in stream]
    cut = ChatResponse.from_updates(updates)
    assert second.finish_reason == "length"
    assert cut.finish_reason is None
    assert long_text.startswith(cut.text) and len(cut.text) < len(long_text)

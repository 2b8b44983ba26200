"""The streaming client against a real llama-server (grammar-forced model text)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers import (
    ChatClient,
    ChatOptions,
    ChatResponse,
    ContextLengthExceededError,
    OpenAiCompatibleChatClient,
    TextRecoveryChatClient,
)

REASONING_TEXT = (
    "<think>\nThe user asks for the weather in Paris.\n</think>\n\nIt is sunny in Paris."
)
UNICODE_TEXT = 'Line one\u2028line two\u2029para\u0085next: "\u2028" done.'


def forced(text: str, max_tokens: int = 120) -> ChatOptions:
    """Options whose GBNF grammar makes the random-weight model emit exactly ``text``."""
    literal = json.dumps(text, ensure_ascii=True)  # GBNF string literals accept JSON escapes
    return ChatOptions(
        max_output_tokens=max_tokens, additional_properties={"grammar": f"root ::= {literal}"}
    )


async def stream(
    client: ChatClient,
    options: ChatOptions,
    prompt: str = "What is the weather in Paris?",
) -> ChatResponse:
    return ChatResponse.from_updates(
        [u async for u in client.get_streaming_response(prompt, options)]
    )


async def test_reasoning_split_by_the_server_streamed_and_not(reasoning_server: Any) -> None:
    async with OpenAiCompatibleChatClient(reasoning_server.base_url, backend="llamacpp") as client:
        streamed = await stream(client, forced(REASONING_TEXT))
        whole = await client.get_response("What is the weather in Paris?", forced(REASONING_TEXT))
    for response in (streamed, whole):
        assert response.reasoning.strip() == "The user asks for the weather in Paris."
        assert response.text.strip() == "It is sunny in Paris."
        assert response.finish_reason == "stop"
        assert "<think>" not in response.text
    assert streamed.reasoning == whole.reasoning
    assert streamed.text == whole.text
    assert streamed.usage is not None and whole.usage is not None
    assert streamed.usage.input_token_count == whole.usage.input_token_count
    assert streamed.usage.cached_input_token_count is not None  # llama.cpp always reports it
    timings = streamed.additional_properties["timings"]  # kept for the telemetry layer
    assert timings["predicted_n"] == streamed.usage.output_token_count


async def test_unicode_line_separators_arrive_intact(plain_server: Any) -> None:
    async with OpenAiCompatibleChatClient(plain_server.base_url, backend="llamacpp") as client:
        streamed = await stream(client, forced(UNICODE_TEXT))
        whole = await client.get_response("hi", forced(UNICODE_TEXT))
    assert streamed.text == UNICODE_TEXT
    assert whole.text == UNICODE_TEXT


async def test_length_cut_keeps_the_partial_text(plain_server: Any) -> None:
    async with OpenAiCompatibleChatClient(plain_server.base_url, backend="llamacpp") as client:
        response = await stream(client, forced("Answer one two three four five six.", 3))
    assert response.finish_reason == "length"
    assert response.usage is not None and response.usage.output_token_count == 3
    assert "Answer one two three four five six.".startswith(response.text)
    assert response.text


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_context_overflow_is_typed_with_sizes(plain_server: Any, streaming: bool) -> None:
    prompt = "weather " * 5000
    async with OpenAiCompatibleChatClient(plain_server.base_url, backend="llamacpp") as client:
        with pytest.raises(ContextLengthExceededError) as caught:
            if streaming:
                await stream(client, ChatOptions(max_output_tokens=4), prompt)
            else:
                await client.get_response(prompt, ChatOptions(max_output_tokens=4))
    error = caught.value
    assert error.status == 400
    assert error.context_window == 4096
    assert error.prompt_tokens is not None and error.prompt_tokens > 4096


def test_rig_reports_what_it_runs(rig: dict[str, Any]) -> None:
    assert rig["binary"].exists()
    assert rig["model"].stat().st_size > 1_000_000
    assert all(path.exists() for path in rig["templates"].values())


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_reasoning_split_by_server_or_left_in_content_gives_the_same_answer(
    reasoning_server: Any, think_in_content_server: Any, streaming: bool
) -> None:
    """The same model text, with the server's reasoning parser on and off, reaches the caller
    identically through the standard recovery layer."""
    results = []
    for server in (reasoning_server, think_in_content_server):
        inner = OpenAiCompatibleChatClient(server.base_url, backend="llamacpp")
        async with TextRecoveryChatClient(inner) as client:
            if streaming:
                results.append(await stream(client, forced(REASONING_TEXT)))
            else:
                results.append(await client.get_response("weather?", forced(REASONING_TEXT)))
    split, in_content = results
    assert "</think>" in _wire_content(in_content), "the none server must leave tags in content"
    assert "</think>" not in _wire_content(split)
    for response in results:
        assert response.reasoning == "The user asks for the weather in Paris."
        assert response.text == "It is sunny in Paris."
        assert response.finish_reason == "stop"
    # Token counts may differ: grammar sampling can tokenise the same text differently.
    for response in results:
        assert response.usage is not None and response.usage.output_token_count


def _wire_content(response: ChatResponse) -> str:
    """The ``content`` text exactly as the server sent it (streamed chunks or one message)."""
    chunks = response.raw if isinstance(response.raw, list) else [response.raw]
    parts = []
    for chunk in chunks:
        for choice in chunk.get("choices") or ():
            part = (choice.get("delta") or choice.get("message") or {}).get("content")
            if isinstance(part, str):
                parts.append(part)
    return "".join(parts)

"""Tool calls a live llama-server leaves in ``content`` come out structured through the standard
pipeline (``create_chat_client``: telemetry, retry, text recovery over the wire client).

The request offers the tools with ``tool_choice: "none"``, so the server's own tool parser stays
out of the way (and llama-server accepts a grammar beside the tools), while the recovery layer
knows which calls it may make executable (issue #20: with no tools offered, markup stays text).
The ``grammar`` field forces the model to write the markup as plain text: Hermes
``<tool_call>\\n{json}\\n</tool_call>`` or Qwen3-Coder's XML. Each test first checks that the
markup really travelled in ``delta.content`` / ``message.content`` (otherwise it would prove
nothing about recovery), then that the caller got ``FunctionCallContent``s, finish reason
``tool_calls`` and no markup in any text — streamed and not.
"""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

import httpx
import pytest

from providers import ChatOptions, ChatResponse, ChatResponseUpdate, ChatToolMode, ToolDeclaration
from providers.abstractions.chat_client import ChatClient
from providers.factory import create_chat_client
from tests.integration.llama_server import forcing_grammar

PROMPT = "What is the weather in Paris?"
# Short on purpose: each grammar-forced token costs a pass over the 151,936-token vocabulary.
HERMES_WEATHER = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
)
HERMES_TIME = '<tool_call>\n{"name": "get_time", "arguments": {"tz": "CET"}}\n</tool_call>'
CODER_WEATHER = (
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n"
    "</tool_call>"
)
WEATHER = ("get_weather", {"city": "Paris"})
TIME = ("get_time", {"tz": "CET"})
MARKUP = ("<tool_call", "</tool_call", "<function", "</function", "<parameter", '{"name"')
TOOLS = [
    ToolDeclaration(
        "get_weather", parameters={"type": "object", "properties": {"city": {"type": "string"}}}
    ),
    ToolDeclaration(
        "get_time", parameters={"type": "object", "properties": {"tz": {"type": "string"}}}
    ),
]


async def forced(base_url: str, text: str) -> ChatOptions:
    """The model writes exactly ``text`` (the grammar), cut into the tokens the tokenizer itself
    would cut it into (``logit_bias`` +50 on those, from the server's ``/tokenize``).

    The grammar alone lets the random model take any token that fits, mostly short ones: some
    45 tokens for the Hermes call instead of its 24. Every forced token costs the server a pass
    over the whole vocabulary, so this saves a third to a half of the time, and the stream is
    chunked much as a real Qwen model would chunk it (``<tool_call>`` is four tokens in this
    vocabulary, so the tag still arrives split across chunks).
    """
    async with httpx.AsyncClient() as http:
        answer = await http.post(f"{base_url}/tokenize", json={"content": text})
    tokens: list[int] = answer.json()["tokens"]
    return ChatOptions(
        tools=list(TOOLS),
        tool_mode=ChatToolMode.NONE,  # the server parses nothing; the grammar is allowed
        max_output_tokens=len(text) + 8,  # every token is at least one character
        additional_properties={
            "grammar": forcing_grammar(text),
            "logit_bias": {str(token): 50 for token in set(tokens)},
        },
    )


async def ask(
    client: ChatClient, options: ChatOptions, *, streaming: bool
) -> tuple[ChatResponse, list[ChatResponseUpdate]]:
    if not streaming:
        return await client.get_response(PROMPT, options), []
    updates = [u async for u in client.get_streaming_response(PROMPT, options)]
    return ChatResponse.from_updates(updates), updates


def wire_content(response: ChatResponse) -> str:
    """``content`` exactly as the server sent it (the raw chunks, or the raw message)."""
    chunks = response.raw if isinstance(response.raw, list) else [response.raw]
    parts = []
    for chunk in chunks:
        for choice in (chunk or {}).get("choices") or ():
            part = (choice.get("delta") or choice.get("message") or {}).get("content")
            if isinstance(part, str):
                parts.append(part)
    return "".join(parts)


def assert_recovered(
    response: ChatResponse,
    updates: list[ChatResponseUpdate],
    *,
    sent: str,
    text: str,
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    assert wire_content(response) == sent, "the server must have left the markup in content"
    got = [(call.name, call.arguments) for call in response.tool_calls]
    assert got == calls
    assert all(call.error is None for call in response.tool_calls)
    ids = [call.call_id for call in response.tool_calls]
    assert all(ids) and len(set(ids)) == len(ids), f"call ids must be present and distinct: {ids}"
    assert response.text == text
    assert response.finish_reason == "tool_calls"
    assert response.usage is not None and response.usage.output_token_count
    for update in updates:  # streamed: not one delta may carry markup to the caller
        assert not any(marker in update.text for marker in MARKUP), update.text
    assert not any(marker in response.text for marker in MARKUP)


@pytest.mark.parametrize(
    ("text_tool_calls", "markup", "call"),
    [("hermes", HERMES_WEATHER, WEATHER), ("qwen3_coder", CODER_WEATHER, WEATHER)],
    ids=["hermes", "qwen3_coder"],
)
@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
async def test_a_tool_call_written_as_text_reaches_the_caller_structured(
    plain_server: Any,
    text_tool_calls: str,
    markup: str,
    call: tuple[str, dict[str, Any]],
    streaming: bool,
) -> None:
    client = create_chat_client(
        plain_server.base_url, backend="llamacpp", text_tool_calls=text_tool_calls
    )
    async with aclosing(client):
        options = await forced(plain_server.base_url, markup)
        response, updates = await ask(client, options, streaming=streaming)
    assert_recovered(response, updates, sent=markup, text="", calls=[call])


@pytest.mark.parametrize(
    ("before", "markup", "calls", "streaming"),
    [
        ("Checking both.\n", f"{HERMES_WEATHER}\n{HERMES_TIME}", [WEATHER, TIME], True),
        ("On it.\n", CODER_WEATHER, [WEATHER], False),
    ],
    ids=["hermes-pair-stream", "qwen3_coder-nonstream"],
)
async def test_text_before_the_calls_with_the_format_detected(
    plain_server: Any,
    before: str,
    markup: str,
    calls: list[tuple[str, dict[str, Any]]],
    streaming: bool,
) -> None:
    """``text_tool_calls="auto"`` (the default): the format is recognised from the text; the
    sentence before the calls stays text, without the newline the model put after it."""
    client = create_chat_client(plain_server.base_url, backend="llamacpp")
    async with aclosing(client):
        options = await forced(plain_server.base_url, before + markup)
        response, updates = await ask(client, options, streaming=streaming)
    assert_recovered(response, updates, sent=before + markup, text=before.rstrip("\n"), calls=calls)

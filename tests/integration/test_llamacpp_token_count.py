"""``count_tokens`` on a real llama-server (issue 36): the count is the server's own.

Two independent references: the server's ``/tokenize`` of its own ``/apply-template`` rendering
(asked here by hand, not through the client), and the ``prompt_tokens`` the server reports when
it actually runs the same conversation. The session's plain chat server (Qwen2.5 template) is
used, so no server is started for this module.
"""

from __future__ import annotations

from typing import Any

import httpx

from providers import AIFunction, ChatMessage, ChatOptions, OpenAiCompatibleChatClient
from tests.integration.llama_server import forcing_grammar

CONVERSATION = [
    ChatMessage.system("You answer in one word."),
    ChatMessage.user("What colour is the sky on a clear day?"),
    ChatMessage.assistant("Blue."),
    ChatMessage.user("And grass? Ünïcödé 漢字 too."),
]
WIRE = [
    {"role": "system", "content": "You answer in one word."},
    {"role": "user", "content": "What colour is the sky on a clear day?"},
    {"role": "assistant", "content": "Blue."},
    {"role": "user", "content": "And grass? Ünïcödé 漢字 too."},
]


async def server_tokens(base_url: str) -> list[int]:
    """The server's tokens of its own rendering of ``WIRE``, asked route by route."""
    async with httpx.AsyncClient() as http:
        rendered = await http.post(f"{base_url}/apply-template", json={"messages": WIRE})
        prompt = rendered.json()["prompt"]
        assert "Ünïcödé 漢字" in prompt and "<|im_start|>assistant" in prompt
        answer = await http.post(
            f"{base_url}/tokenize",
            json={"content": prompt, "add_special": True, "parse_special": True},
        )
    tokens: list[int] = answer.json()["tokens"]
    return tokens


async def test_count_tokens_is_the_servers_tokenize_of_its_template(plain_server: Any) -> None:
    async with OpenAiCompatibleChatClient(plain_server.base_url, backend="llamacpp") as client:
        counted = await client.count_tokens(CONVERSATION)
        ran = await client.get_response(
            CONVERSATION,
            ChatOptions(
                max_output_tokens=2,
                additional_properties={"grammar": forcing_grammar("Green")},
            ),
        )
    tokens = await server_tokens(plain_server.base_url)
    assert counted.count == len(tokens)
    assert counted.exact is True
    assert counted.source == "llamacpp:/apply-template+/tokenize"
    # And what the server itself counts when it runs the same conversation.
    assert ran.usage is not None
    assert ran.usage.input_token_count == counted.count


async def test_a_longer_conversation_counts_more(plain_server: Any) -> None:
    async with OpenAiCompatibleChatClient(plain_server.base_url, backend="llamacpp") as client:
        short = await client.count_tokens(CONVERSATION[:2])
        longer = await client.count_tokens(CONVERSATION)
    assert 0 < short.count < longer.count


def get_weather(city: str) -> str:
    """Current weather in a city."""
    return f"Sunny in {city}"


async def test_the_tools_are_counted_as_the_server_renders_them(plain_server: Any) -> None:
    with_tools = ChatOptions(max_output_tokens=1, tools=[AIFunction.from_callable(get_weather)])
    async with OpenAiCompatibleChatClient(plain_server.base_url, backend="llamacpp") as client:
        bare = await client.count_tokens(CONVERSATION)
        counted = await client.count_tokens(CONVERSATION, with_tools)
        ran = await client.get_response(CONVERSATION, with_tools)
    assert counted.count > bare.count
    assert ran.usage is not None
    assert ran.usage.input_token_count == counted.count

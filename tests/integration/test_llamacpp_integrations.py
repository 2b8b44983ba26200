"""The framework integrations against a live llama-server: a tool call it leaves in content.

As in ``test_llamacpp_text_tool_calls``, the request offers the tool with ``tool_choice:
"none"`` (so the server's own parser stays out and it accepts a ``grammar``) and the grammar
makes the model write Hermes ``<tool_call>`` markup as plain text. Through ``ChatOaicompat``
LangChain gets a real ``tool_calls`` entry; through ``OaicompatTransport`` the OpenAI SDK gets a
``tool_calls`` delta; neither sees the markup.
"""

from __future__ import annotations

from typing import Any

import httpx

from providers.factory import create_chat_client
from providers.integrations.openai import OaicompatTransport
from tests.integration.test_llamacpp_text_tool_calls import HERMES_WEATHER, MARKUP, PROMPT, forced
from tests.integrations.frameworks import require


async def forcing_kwargs(base_url: str) -> dict[str, Any]:
    options = await forced(base_url, HERMES_WEATHER)
    return {**options.additional_properties, "max_tokens": options.max_output_tokens}


def get_weather(city: str) -> str:
    """The current weather in a city."""
    return f"sunny in {city}"


async def test_chat_oaicompat_recovers_the_call_live(plain_server: Any) -> None:
    require("langchain_core")
    from providers.integrations.langchain import ChatOaicompat

    kwargs = await forcing_kwargs(plain_server.base_url)
    client = create_chat_client(plain_server.base_url, backend="llamacpp", telemetry=False)
    model = ChatOaicompat(client=client, model_kwargs=kwargs, owns_client=True)
    bound = model.bind_tools([get_weather], tool_choice="none")
    whole = await bound.ainvoke(PROMPT)
    chunks = [chunk async for chunk in bound.astream(PROMPT)]
    await model.aclose()
    streamed = sum(chunks[1:], chunks[0])
    for message in (whole, streamed):
        assert [(c["name"], c["args"]) for c in message.tool_calls] == [
            ("get_weather", {"city": "Paris"})
        ]
        assert message.invalid_tool_calls == []
        assert not any(tag in str(message.content) for tag in MARKUP)
        assert message.response_metadata["finish_reason"] == "tool_calls"
        assert message.usage_metadata and message.usage_metadata["output_tokens"] > 0


async def test_the_transport_recovers_the_call_live(plain_server: Any) -> None:
    openai = require("openai")
    kwargs = await forcing_kwargs(plain_server.base_url)
    pipeline = create_chat_client(plain_server.base_url, backend="llamacpp", telemetry=False)
    transport = OaicompatTransport(pipeline, owns_client=True)
    client = openai.AsyncOpenAI(
        api_key="unused",
        base_url=f"{plain_server.base_url}/v1",
        http_client=httpx.AsyncClient(transport=transport),
    )
    tool = {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
    stream = await client.chat.completions.create(
        model="tiny",
        messages=[{"role": "user", "content": PROMPT}],
        tools=[tool],
        tool_choice="none",
        stream=True,
        extra_body=kwargs,
    )
    chunks = [chunk async for chunk in stream]
    await client.close()
    await transport.aclose()
    deltas = [choice.delta for chunk in chunks for choice in chunk.choices]
    calls = [call for delta in deltas for call in delta.tool_calls or ()]
    assert [(c.function.name, c.function.arguments) for c in calls] == [
        ("get_weather", '{"city": "Paris"}')
    ]
    assert not "".join(delta.content or "" for delta in deltas)
    assert chunks[-1].choices[0].finish_reason == "tool_calls"

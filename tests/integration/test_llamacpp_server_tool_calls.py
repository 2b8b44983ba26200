"""Structured ``tool_calls`` from llama.cpp's own tool-call grammar and parser.

With ``tools`` in the request, a ``--jinja`` server builds a grammar from the template's call
format and the tools' JSON schemas, and parses the output back into ``tool_calls``. Every
argument here is an ``enum``, so whatever the random-weight model picks is checkable.

One llama.cpp fact shapes the request: ``tool_choice: "required"`` does *not* make the call come
first. The grammar this build derives from the Qwen2.5 template is
``root ::= "<|im_start|>assistant\\n" space until-"<tool_call>\\n"? tool-calls``: any text may
precede the call, and a random model never writes ``<tool_call>`` by chance (in this vocabulary
it is four tokens). So the conversation ends with an assistant message ``"<tool_call>\\n"``,
which llama.cpp continues (assistant prefill): the grammar accepts that prefix and the model is
inside the call from its first token. The grammar, the parser and the ``tool_calls`` chunks are
all the server's own.

Two more facts of this build are met with ``logit_bias`` (see ``steering_bias``): the grammar
keeps ``tool-calls ::= (tool-call space)+`` even with ``parallel_tool_calls: false``, so a random
model may go on to a second call — in one token, even, such as ``><`` closing the first tag and
opening the next — and run out of tokens inside it; and every JSON gap admits a run of
whitespace, so a call took 50 to 160 tokens (some 40 with the bias).
"""

from __future__ import annotations

from contextlib import aclosing
from typing import Any

from providers import ChatMessage, ChatOptions, ChatResponse, FunctionCallContent
from providers.abstractions.options import ChatToolMode
from providers.factory import create_chat_client
from tests.integration.tiny_model import BYTE_LEVEL_WHITESPACE, token_id, vocabulary

CITIES = ["Paris", "London", "Tokyo"]
UNITS = ["celsius", "fahrenheit"]
WEATHER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "enum": CITIES},
        "unit": {"type": "string", "enum": UNITS},
    },
    "required": ["city", "unit"],
    "additionalProperties": False,
}
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city",
        "parameters": WEATHER_SCHEMA,
    },
}
CONVERSATION = [
    ChatMessage.user("What is the weather in Paris?"),
    ChatMessage.assistant("<tool_call>\n"),  # prefill: see the module docstring
]


def steering_bias() -> dict[str, int]:
    """``logit_bias`` that ends the answer after one call and keeps it short.

    The end-of-turn token gets +100: the grammar accepts it only once a call is complete, so it
    ends the answer right there. For that moment to come at a token boundary, no token may run
    on past a ``>`` (``><``, ``>\\n``: 545 of them, -100); ``>`` appears only in the closing
    tag. Whitespace-only tokens (422) get -100 too.
    """
    bias = {
        str(index): -100
        for index, token in enumerate(vocabulary())
        if token and (set(token) <= BYTE_LEVEL_WHITESPACE or ">" in token[:-1])
    }
    bias[str(token_id("<|im_end|>"))] = 100
    return bias


def options() -> ChatOptions:
    return ChatOptions(
        max_output_tokens=80,
        tools=[WEATHER_TOOL],
        tool_mode=ChatToolMode.REQUIRED,
        allow_multiple_tool_calls=False,
        additional_properties={"logit_bias": steering_bias()},
    )


def schema_violations(arguments: Any, schema: dict[str, Any]) -> list[str]:
    """What in ``arguments`` breaks ``schema`` (an object of enum-valued properties only; the
    one shape used here, so no JSON-Schema library is needed)."""
    if not isinstance(arguments, dict):
        return [f"not an object: {arguments!r}"]
    properties: dict[str, Any] = schema["properties"]
    problems = [f"missing {key}" for key in schema["required"] if key not in arguments]
    for key, value in arguments.items():
        if key not in properties:
            problems.append(f"unexpected property {key}")
        elif value not in properties[key]["enum"]:
            problems.append(f"{key}={value!r} not in {properties[key]['enum']}")
    return problems


def the_call(response: ChatResponse) -> FunctionCallContent:
    assert len(response.tool_calls) == 1, response.tool_calls
    call = response.tool_calls[0]
    assert call.name == "get_weather"
    assert call.error is None, call.error
    assert schema_violations(call.arguments, WEATHER_SCHEMA) == []
    assert call.call_id  # llama.cpp generates one
    assert response.finish_reason == "tool_calls"
    assert response.text == ""
    return call


def wire_arguments(response: ChatResponse) -> str | None:
    """The ``function.arguments`` text of the server's structured ``tool_calls`` (the deltas
    joined, or the message's), or ``None`` when the server sent no ``tool_calls`` at all."""
    chunks = response.raw if isinstance(response.raw, list) else [response.raw]
    parts: list[str] | None = None
    for chunk in chunks:
        for choice in (chunk or {}).get("choices") or ():
            for call in (choice.get("delta") or choice.get("message") or {}).get(
                "tool_calls"
            ) or ():
                parts = (parts or []) + [call.get("function", {}).get("arguments") or ""]
    return None if parts is None else "".join(parts)


async def test_the_servers_own_tool_call_streamed_and_not(plain_server: Any) -> None:
    client = create_chat_client(plain_server.base_url, backend="llamacpp")
    async with aclosing(client):
        updates = [u async for u in client.get_streaming_response(CONVERSATION, options())]
        whole = await client.get_response(CONVERSATION, options())
    streamed = ChatResponse.from_updates(updates)
    calls = [the_call(response) for response in (streamed, whole)]
    # The server's own tool_calls, not markup we recovered; the exact argument text it sent is
    # kept (replayed verbatim in the history).
    assert [wire_arguments(r) for r in (streamed, whole)] == [c.raw_arguments for c in calls]
    # The same shape either way; the values are the model's (random) enum picks.
    assert [sorted(call.arguments) for call in calls] == [["city", "unit"], ["city", "unit"]]
    assert calls[0].call_id != calls[1].call_id
    for response in (streamed, whole):
        assert response.usage is not None and response.usage.output_token_count

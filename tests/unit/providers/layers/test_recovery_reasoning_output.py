"""``ReasoningOutput.NONE`` through text recovery: reasoning a server left in ``<think>`` tags is
recovered, then dropped like the reasoning a server splits off, streamed and whole."""

from __future__ import annotations

from providers import (
    ChatFinishReason,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    TextContent,
    TextRecoveryChatClient,
)
from providers.abstractions.reasoning_options import ReasoningOptions, ReasoningOutput
from tests.unit.scripted_client import ScriptedClient, collect

NO_REASONING = ChatOptions(reasoning=ReasoningOptions(output=ReasoningOutput.NONE))


def _tagged() -> list[ChatResponseUpdate | BaseException]:
    return [
        ChatResponseUpdate([TextContent("<think>\nThe user asks.\n</think>\n\n")]),
        ChatResponseUpdate([TextContent("It is sunny.")], finish_reason=ChatFinishReason.STOP),
    ]


async def test_recovered_reasoning_is_dropped_from_a_stream() -> None:
    client = TextRecoveryChatClient(ScriptedClient(_tagged()))
    seen, error = await collect(client.get_streaming_response("weather?", NO_REASONING))
    assert error is None
    response = ChatResponse.from_updates(seen)
    assert (response.reasoning, response.text) == ("", "It is sunny.")


async def test_recovered_reasoning_is_dropped_from_a_whole_answer() -> None:
    whole = ChatResponse.from_updates([u for u in _tagged() if isinstance(u, ChatResponseUpdate)])
    client = TextRecoveryChatClient(ScriptedClient(whole))
    response = await client.get_response("weather?", NO_REASONING)
    assert (response.reasoning, response.text) == ("", "It is sunny.")


async def test_without_the_option_the_recovered_reasoning_stays() -> None:
    client = TextRecoveryChatClient(ScriptedClient(_tagged()))
    seen, _ = await collect(client.get_streaming_response("weather?", ChatOptions()))
    assert ChatResponse.from_updates(seen).reasoning.strip() == "The user asks."

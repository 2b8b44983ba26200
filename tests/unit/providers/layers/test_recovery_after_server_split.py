"""``reasoning_tags="deepseek_r1"`` over a server that already split the reasoning (vLLM's and
SGLang's ``deepseek_r1`` parsers): the answer stays the answer."""

from __future__ import annotations

from providers import (
    ChatFinishReason,
    ChatResponse,
    ChatResponseUpdate,
    TextContent,
    TextReasoningContent,
    TextRecoveryChatClient,
)
from tests.unit.scripted_client import ScriptedClient, collect


def _split_by_server() -> list[ChatResponseUpdate | BaseException]:
    return [
        ChatResponseUpdate([TextReasoningContent("\nThe user asks.")]),
        ChatResponseUpdate([TextReasoningContent("\n")]),
        ChatResponseUpdate([TextContent("\n\nIt is ")]),
        ChatResponseUpdate([TextContent("sunny.")], finish_reason=ChatFinishReason.STOP),
    ]


async def test_server_split_answer_is_not_read_as_reasoning_when_streamed() -> None:
    client = TextRecoveryChatClient(
        ScriptedClient(_split_by_server()), reasoning_tags="deepseek_r1"
    )
    seen, error = await collect(client.get_streaming_response("weather?"))
    assert error is None
    response = ChatResponse.from_updates(seen)
    assert response.text == "It is sunny."
    assert response.reasoning.strip() == "The user asks."


async def test_server_split_answer_is_not_read_as_reasoning_when_not_streamed() -> None:
    whole = ChatResponse.from_updates(
        [u for u in _split_by_server() if isinstance(u, ChatResponseUpdate)]
    )
    client = TextRecoveryChatClient(ScriptedClient(whole), reasoning_tags="deepseek_r1")
    response = await client.get_response("weather?")
    assert response.text == "It is sunny."
    assert response.reasoning.strip() == "The user asks."


async def test_without_server_reasoning_the_r1_text_still_starts_in_reasoning() -> None:
    """The control: the same mode on a server that left everything in content."""
    stream: list[ChatResponseUpdate | BaseException] = [
        ChatResponseUpdate([TextContent("The user asks.\n</think>\n\n")]),
        ChatResponseUpdate([TextContent("It is sunny.")], finish_reason=ChatFinishReason.STOP),
    ]
    client = TextRecoveryChatClient(ScriptedClient(stream), reasoning_tags="deepseek_r1")
    seen, _ = await collect(client.get_streaming_response("weather?"))
    response = ChatResponse.from_updates(seen)
    assert (response.reasoning.strip(), response.text) == ("The user asks.", "It is sunny.")

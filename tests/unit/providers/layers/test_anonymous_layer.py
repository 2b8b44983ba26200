"""One-off middleware (issue 31).

``ChatClientBuilder.use(get_response=..., get_streaming_response=...)`` makes an
``AnonymousDelegatingChatClient``, as MEAI's ``Use`` overload does; a function given alone
stands for both methods (the other derived from it, as in MEAI), and ``use_text_recovery`` is
the text-recovery layer's name beside the old ``use_text_tool_calls``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from providers import (
    ChatClient,
    ChatFinishReason,
    ChatInput,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    ConfigurationError,
    OpenAiCompatibleChatClient,
    RetryingChatClient,
    TextContent,
    TextRecoveryChatClient,
    UsageDetails,
)
from providers.builder import ChatClientBuilder
from providers.layers.anonymous import AnonymousDelegatingChatClient
from telemetry import TelemetryChatClient

USAGE = UsageDetails(input_token_count=3, output_token_count=2, total_token_count=5)


class Inner:
    """Answers "it is sunny" either way, recording which method was called."""

    def __init__(self) -> None:
        self.called: list[str] = []

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        self.called.append("get_response")
        return ChatResponse(
            [ChatMessage(ChatRole.ASSISTANT, [TextContent("it is sunny")])],
            response_id="r1",
            model_id="m",
            created_at=7,
            finish_reason=ChatFinishReason.STOP,
            usage=USAGE,
        )

    async def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        self.called.append("get_streaming_response")
        for piece in ["it is", " sunny"]:
            yield ChatResponseUpdate([TextContent(piece)], ChatRole.ASSISTANT)

    async def aclose(self) -> None:
        pass


async def shout_whole(
    messages: ChatInput, options: ChatOptions | None, inner: ChatClient
) -> ChatResponse:
    response = await inner.get_response(messages, options)
    response.messages = [ChatMessage(ChatRole.ASSISTANT, [TextContent(response.text.upper())])]
    return response


async def shout_stream(
    messages: ChatInput, options: ChatOptions | None, inner: ChatClient
) -> AsyncIterator[ChatResponseUpdate]:
    async for update in inner.get_streaming_response(messages, options):
        yield ChatResponseUpdate([TextContent(update.text.upper())], update.role)


async def _streamed(client: ChatClient) -> list[ChatResponseUpdate]:
    return [update async for update in client.get_streaming_response("weather?")]


async def test_both_functions_each_stand_for_their_method() -> None:
    inner = Inner()
    client = (
        ChatClientBuilder(inner)
        .use(get_response=shout_whole, get_streaming_response=shout_stream)
        .build()
    )
    assert isinstance(client, AnonymousDelegatingChatClient)
    assert (await client.get_response("weather?")).text == "IT IS SUNNY"
    assert [u.text for u in await _streamed(client)] == ["IT IS", " SUNNY"]
    assert inner.called == ["get_response", "get_streaming_response"]


async def test_a_stream_function_alone_gives_whole_answers_too() -> None:
    """MEAI: without ``getResponseFunc``, a whole answer is the stream coalesced."""
    inner = Inner()
    client = ChatClientBuilder(inner).use(get_streaming_response=shout_stream).build()
    assert [u.text for u in await _streamed(client)] == ["IT IS", " SUNNY"]
    assert (await client.get_response("weather?")).text == "IT IS SUNNY"
    assert inner.called == ["get_streaming_response", "get_streaming_response"]


async def test_a_whole_answer_function_alone_streams_that_answer() -> None:
    """MEAI: without ``getStreamingResponseFunc``, a stream is the whole answer as updates,
    which coalesce back into the same response (ids, finish reason, usage kept)."""
    inner = Inner()
    client = ChatClientBuilder(inner).use(get_response=shout_whole).build()
    whole = await client.get_response("weather?")
    streamed = ChatResponse.from_updates(await _streamed(client))
    assert inner.called == ["get_response", "get_response"]
    assert streamed.text == whole.text == "IT IS SUNNY"
    assert (streamed.response_id, streamed.model_id, streamed.created_at) == ("r1", "m", 7)
    assert streamed.finish_reason == ChatFinishReason.STOP
    assert streamed.usage == USAGE


async def test_a_one_off_layer_is_honoured_inside_the_library_layers() -> None:
    """Read update by update by the runs-passing layers around it, never bypassed."""
    client = (
        ChatClientBuilder(Inner())
        .use_telemetry()
        .use_retry()
        .use(get_streaming_response=shout_stream)
        .use_text_recovery()
        .build()
    )
    assert ChatResponse.from_updates(await _streamed(client)).text == "IT IS SUNNY"


def test_use_needs_a_factory_or_functions_not_both() -> None:
    builder = ChatClientBuilder(Inner())
    with pytest.raises(ConfigurationError, match="use"):
        builder.use()
    with pytest.raises(ConfigurationError, match="not both"):
        builder.use(RetryingChatClient, get_response=shout_whole)
    with pytest.raises(ConfigurationError):
        AnonymousDelegatingChatClient(Inner())


def test_use_text_recovery_and_its_former_name() -> None:
    core = OpenAiCompatibleChatClient("http://llm.test/v1", "m")
    client = ChatClientBuilder(core).use_text_recovery("qwen3_coder", reasoning_tags="off").build()
    assert isinstance(client, TextRecoveryChatClient)
    assert (client.text_tool_calls, client.reasoning_tags) == ("qwen3_coder", "off")
    assert ChatClientBuilder.use_text_tool_calls is ChatClientBuilder.use_text_recovery
    assert isinstance(
        ChatClientBuilder(core).use_telemetry().use_text_tool_calls().build(), TelemetryChatClient
    )

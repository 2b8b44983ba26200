"""Service lookup and capabilities through every layer (issue 22 part 4: MEAI's ``GetService``).

A framework holds the outermost client; it must reach the wire client, any one layer, the
backend's ``ChatClientMetadata`` and ``get_capabilities()`` through the standard pipeline and the
fallback client, whatever sits in between.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import respx

from providers import (
    ChatClientBuilder,
    ChatClientMetadata,
    FallbackChatClient,
    OpenAiCompatibleChatClient,
    OpenAiCompatibleResponsesClient,
    RetryingChatClient,
    TelemetryChatClient,
    TextRecoveryChatClient,
    create_chat_client,
)
from providers.abstractions.services import service_of
from tests.unit.providers.chat_completions.test_client_capabilities import BASE, vllm_routes

MODEL = "Qwen/Qwen3-0.6B"


@pytest.fixture
def vllm() -> Iterator[respx.MockRouter]:
    with respx.mock(base_url="http://vllm.test", assert_all_called=False) as mock:
        vllm_routes(mock)
        yield mock


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_the_standard_pipeline_offers_each_layer_and_the_wire_client(api: str) -> None:
    client = create_chat_client(BASE, MODEL, backend="vllm", api=api, text_tool_calls="auto")
    wire_type = OpenAiCompatibleChatClient if api == "chat" else OpenAiCompatibleResponsesClient
    try:
        wire = client.get_service(wire_type)  # type: ignore[attr-defined]
        assert isinstance(wire, wire_type)
        for layer in (TelemetryChatClient, RetryingChatClient, TextRecoveryChatClient):
            assert isinstance(client.get_service(layer), layer)  # type: ignore[attr-defined]
        assert client.get_service(FallbackChatClient) is None  # type: ignore[attr-defined]
        metadata = client.get_service(ChatClientMetadata)  # type: ignore[attr-defined]
        assert metadata == ChatClientMetadata("vllm", "http://vllm.test/v1", MODEL)
    finally:
        await client.aclose()


async def test_metadata_never_carries_the_user_info_of_base_url() -> None:
    async with OpenAiCompatibleChatClient("http://u:secret-pw@host:8000", "m") as client:
        metadata = client.get_service(ChatClientMetadata)
    assert metadata is not None and metadata.base_url == "http://host:8000/v1"


async def test_capabilities_through_the_standard_pipeline(vllm: respx.MockRouter) -> None:
    client = create_chat_client(BASE, MODEL)
    try:
        caps = await client.get_capabilities()  # type: ignore[attr-defined]
    finally:
        await client.aclose()
    assert caps.backend.value == "vllm"
    assert caps.context_window.value == 4096


async def test_the_fallback_client_answers_for_its_main_backend(vllm: respx.MockRouter) -> None:
    main = create_chat_client(BASE, MODEL)
    other = OpenAiCompatibleChatClient("http://other.test/v1", "small", backend="llamacpp")
    client = ChatClientBuilder(main).use_fallback(other).build()
    try:
        assert client.get_service(FallbackChatClient) is client  # type: ignore[attr-defined]
        metadata = service_of(client, ChatClientMetadata)
        assert metadata is not None and metadata.model_id == MODEL
        caps = await client.get_capabilities()
        assert caps.context_window.value == 4096
    finally:
        await client.aclose()


async def test_a_callers_own_inner_client_is_found_or_passed_over() -> None:
    class Bare:
        """A client of the caller's own: no get_service, no get_capabilities."""

        async def get_response(self, messages: object, options: object = None) -> object:
            raise NotImplementedError

        def get_streaming_response(
            self, messages: object, options: object = None
        ) -> AsyncIterator[object]:
            raise NotImplementedError

        async def aclose(self) -> None:
            pass

    bare = Bare()
    layered = ChatClientBuilder(bare).use_retry().build()  # type: ignore[arg-type]
    assert service_of(layered, Bare) is bare
    assert service_of(layered, ChatClientMetadata) is None
    with pytest.raises(NotImplementedError, match="Bare reports no capabilities"):
        await layered.get_capabilities()  # type: ignore[attr-defined]

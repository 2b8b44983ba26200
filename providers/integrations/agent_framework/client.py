"""``OaicompatChatClient``: an oaicompat ``ChatClient`` as a Microsoft Agent Framework chat client.

Agent Framework builds its public clients from layers over a raw client: chat middleware
outermost, then function invocation (the tool loop), then telemetry (OpenTelemetry spans), then
the client that talks to the service. This class is that stack with the oaicompat pipeline as
the service, so an ``Agent`` gets the framework's tool loop, middleware and telemetry on top of
what the pipeline recovers (reasoning from tags, llama.cpp's calls left in the text).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from typing import Any, ClassVar, Generic

from agent_framework import (
    BaseChatClient,
    ChatMiddlewareLayer,
    ChatResponse,
    ChatResponseUpdate,
    FinishReason,
    FunctionInvocationLayer,
    Message,
    ResponseStream,
)
from agent_framework import ChatOptions as FrameworkOptions
from agent_framework.observability import ChatTelemetryLayer
from typing_extensions import TypeVar

from providers.abstractions import (
    ChatClient,
    ChatClientMetadata,
    ChatFinishReason,
    ChatRole,
    ProviderError,
)
from providers.abstractions import ChatResponse as OaicompatResponse
from providers.abstractions.delegating import close_stream
from providers.abstractions.services import service_of
from providers.integrations._pipeline import client_from_config
from providers.integrations.agent_framework.contents import (
    to_chat_messages,
    to_chat_options,
    to_framework_contents,
    to_framework_error,
    to_framework_usage,
)

__all__ = ["OaicompatChatClient", "OaicompatChatOptions"]


# Without the framework installed (mypy in a light venv) the base is Any, which takes no `total`.
class OaicompatChatOptions(FrameworkOptions[Any], total=False):  # type: ignore[call-arg, unused-ignore]
    """Agent Framework's options, plus ``extra_body``: keys sent as they are in the request body
    (``chat_template_kwargs``, a llama.cpp ``grammar``)."""

    extra_body: dict[str, Any]


OptionsT = TypeVar("OptionsT", bound=Mapping[str, Any], default=OaicompatChatOptions)


class OaicompatChatClient(  # type: ignore[misc, unused-ignore]
    ChatMiddlewareLayer[OptionsT],
    FunctionInvocationLayer[OptionsT],
    ChatTelemetryLayer[OptionsT],
    BaseChatClient[OptionsT],
    Generic[OptionsT],
):
    """``OaicompatChatClient(client).as_agent(...)``, or ``OaicompatChatClient.from_config(...)``.

    ``client`` is any oaicompat ``ChatClient`` (the standard pipeline, a fallback, a client of
    your own). ``middleware`` and ``function_invocation_configuration`` are the framework's.
    """

    OTEL_PROVIDER_NAME: ClassVar[str] = "oaicompat"

    def __init__(
        self,
        client: ChatClient,
        *,
        middleware: Sequence[Any] | None = None,
        function_invocation_configuration: Any | None = None,
        **kwargs: Any,
    ) -> None:
        self.client = client
        self.metadata = service_of(client, ChatClientMetadata) or ChatClientMetadata()
        kwargs.setdefault("otel_provider_name", self.metadata.provider_name or "oaicompat")
        super().__init__(
            middleware=middleware,
            function_invocation_configuration=function_invocation_configuration,
            **kwargs,
        )

    @classmethod
    def from_config(
        cls, path: str | os.PathLike[str], role: str = "main", **client_kwargs: Any
    ) -> OaicompatChatClient[OaicompatChatOptions]:
        """The client for ``role`` of an oaicompat YAML file, over the standard pipeline
        (without oaicompat's telemetry unless ``telemetry=True``: the framework's telemetry
        layer traces each call)."""
        return OaicompatChatClient(client_from_config(path, role, **client_kwargs))

    def service_url(self) -> str:
        return self.metadata.base_url or "Unknown"

    async def aclose(self) -> None:
        await self.client.aclose()

    def _inner_get_response(
        self,
        *,
        messages: Sequence[Message],
        stream: bool,
        options: Mapping[str, Any],
        **kwargs: Any,
    ) -> Awaitable[ChatResponse[Any]] | ResponseStream[ChatResponseUpdate, ChatResponse[Any]]:
        if stream:
            return self._build_response_stream(
                self._stream(messages, options), response_format=options.get("response_format")
            )
        return self._response(messages, options)

    async def _response(
        self, messages: Sequence[Message], options: Mapping[str, Any]
    ) -> ChatResponse[Any]:
        options = await self._validate_options(options)
        chat = to_chat_messages(messages, options.get("instructions"))
        try:
            response = await self.client.get_response(chat, to_chat_options(options))
        except ProviderError as error:
            raise to_framework_error(error) from error
        return _framework_response(response, options.get("response_format"))

    async def _stream(
        self, messages: Sequence[Message], options: Mapping[str, Any]
    ) -> AsyncIterator[ChatResponseUpdate]:
        """The pipeline's updates, one framework update each; closing this generator (the
        framework's ``ResponseStream.close()``, a ``break``, a cancel) closes the upstream."""
        options = await self._validate_options(options)
        chat = to_chat_messages(messages, options.get("instructions"))
        updates = self.client.get_streaming_response(chat, to_chat_options(options))
        try:
            async for update in updates:
                yield ChatResponseUpdate(
                    contents=to_framework_contents(update.contents),
                    role="assistant",
                    response_id=update.response_id,
                    model=update.model_id,
                    finish_reason=_finish(update.finish_reason),
                    raw_representation=update,
                )
        except ProviderError as error:
            raise to_framework_error(error) from error
        finally:
            await close_stream(updates)


def _framework_response(response: OaicompatResponse, response_format: Any) -> ChatResponse[Any]:
    messages = [
        Message("assistant", to_framework_contents(m.contents))
        for m in response.messages
        if m.role == ChatRole.ASSISTANT
    ]
    return ChatResponse(
        messages=messages,
        response_id=response.response_id,
        model=response.model_id,
        finish_reason=_finish(response.finish_reason),
        usage_details=to_framework_usage(response.usage) if response.usage else None,
        response_format=response_format,
        raw_representation=response,
    )


def _finish(reason: ChatFinishReason | None) -> FinishReason | None:
    """OpenAI's names are the framework's too (``stop``, ``length``, ``tool_calls``…)."""
    return FinishReason(reason.value) if reason is not None else None

"""``OaicompatModel``: an oaicompat ``ChatClient`` as a pydantic-ai ``Model``.

pydantic-ai's own OpenAI model sends and reads the wire itself, so it gets none of what the
oaicompat pipeline recovers (reasoning from ``<think>`` tags, tool calls a server left in the
text, a server's quirks); this model hands the request to the pipeline instead and maps its
typed answer onto pydantic-ai's parts. The agent loop, tool execution, retries of bad tool
arguments and output validation stay pydantic-ai's.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, ClassVar

import anyio

from providers.integrations._extras import missing_extra

try:
    from pydantic_ai.messages import ModelMessage, ModelResponse, ModelResponseStreamEvent
    from pydantic_ai.models import (
        Model,
        ModelRequestParameters,
        StreamedResponse,
        check_allow_model_requests,
    )
    from pydantic_ai.profiles import ModelProfile, ModelProfileSpec
    from pydantic_ai.settings import ModelSettingName, ModelSettings
    from pydantic_ai.tools import RunContext
except ModuleNotFoundError as error:
    raise missing_extra(error, "providers.integrations.pydantic_ai", "pydantic-ai") from error

from providers.abstractions import (
    ChatClient,
    ChatClientMetadata,
    ChatMessage,
    ChatOptions,
    ChatResponseUpdate,
    FunctionCallContent,
    ProviderError,
    TextContent,
    TextReasoningContent,
    UsageContent,
)
from providers.abstractions.delegating import close_stream
from providers.abstractions.services import capabilities_of, service_of
from providers.integrations._pipeline import client_from_config
from providers.integrations.pydantic_ai.convert import (
    FINISH_REASONS,
    to_chat_messages,
    to_chat_options,
    to_model_error,
    to_model_response,
    to_request_usage,
    tool_call_part,
)
from providers.integrations.pydantic_ai.profile import backend_profile

__all__ = ["OaicompatModel"]


class OaicompatModel(Model):
    """A pydantic-ai model answered by an oaicompat client (a pipeline, a fallback, any
    ``ChatClient``): ``Agent(OaicompatModel(client))`` or ``OaicompatModel.from_config(...)``.

    ``context_window`` is the one given here, else what ``await model.probe_capabilities()``
    learned from the server; it is never probed implicitly (that costs requests).

    The profile pydantic-ai checks requests against comes from the backend's row
    (``profile.backend_profile``: ``NativeOutput`` where the server enforces a JSON Schema,
    ``thinking`` everywhere); ``profile=`` overrides it, as on any pydantic-ai model.
    """

    unsupported_settings: ClassVar[frozenset[ModelSettingName]] = frozenset(
        {"timeout", "max_retries", "service_tier", "citations"}
    )
    """What this model does not send: the pipeline's own timeouts and retry layer govern
    (``request_timeout`` and ``first_event_timeout``, which pydantic-ai enforces itself, still
    apply), and no backend here has service tiers or citations. pydantic-ai warns when a
    request sets ``timeout`` or ``max_retries``, since ignoring those changes what it
    guarantees."""

    def __init__(
        self,
        client: ChatClient,
        *,
        model_name: str | None = None,
        context_window: int | None = None,
        settings: ModelSettings | None = None,
        profile: ModelProfileSpec | None = None,
    ) -> None:
        super().__init__(settings=settings, profile=profile)
        self.client = client
        self._metadata = _metadata_of(client)
        self._model_name = model_name or self._metadata.model_id or "default"
        self._context_window = context_window

    @classmethod
    def from_config(
        cls,
        path: str | os.PathLike[str] = "oaicompat.yaml",
        role: str = "main",
        *,
        telemetry: bool = False,
        settings: ModelSettings | None = None,
        profile: ModelProfileSpec | None = None,
        **client_kwargs: Any,
    ) -> OaicompatModel:
        """The model for ``role`` of an oaicompat YAML file, over the standard pipeline
        (without oaicompat's telemetry, unless ``telemetry=True``: pydantic-ai instruments)."""
        client = client_from_config(path, role, telemetry=telemetry, **client_kwargs)
        return cls(client, settings=settings, profile=profile)

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def system(self) -> str:
        """The backend (``llamacpp``, ``vllm``…), for ``gen_ai.system``."""
        return self._metadata.provider_name or "openai"

    @property
    def base_url(self) -> str | None:
        return self._metadata.base_url

    @property
    def context_window(self) -> int | None:
        return self._context_window

    def _settings_overriding_thinking(
        self, model_settings: Mapping[str, object]
    ) -> tuple[str, ...]:
        # `openai_reasoning_effort` wins over `thinking` (`to_reasoning`), as on OpenAIChatModel;
        # naming it lets pydantic-ai warn when it comes from a broader layer than `thinking`.
        return ("openai_reasoning_effort",) if "openai_reasoning_effort" in model_settings else ()

    def _provider_model_profile(self) -> ModelProfile:
        """The backend row's profile, where a pydantic-ai provider's would be: the layer under
        the caller's ``profile=``, which still wins."""
        return backend_profile(self._metadata.provider_name, self._model_name)

    async def probe_capabilities(self) -> Any:
        """Ask the server (through every layer) what it serves; remembers the context window."""
        capabilities = await capabilities_of(self.client)
        if self._context_window is None:
            self._context_window = capabilities.context_window.value
        return capabilities

    async def aclose(self) -> None:
        await self.client.aclose()

    def _outgoing(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> tuple[list[ChatMessage], ChatOptions, ModelRequestParameters]:
        check_allow_model_requests()
        settings, parameters = self.prepare_request(model_settings, model_request_parameters)
        instructions = self._get_instruction_parts(messages, parameters) or []
        chat = to_chat_messages(messages, [part.content for part in instructions])
        conversation = _conversation_id(messages, run_context)
        always_thinks = self.profile.get("thinking_always_enabled", False)
        options = to_chat_options(settings, parameters, conversation, always_thinks=always_thinks)
        return chat, options, parameters

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        chat, options, _ = self._outgoing(messages, model_settings, model_request_parameters)
        try:
            response = await self.client.get_response(chat, options)
        except ProviderError as error:
            raise to_model_error(error, self.model_name) from error
        return to_model_response(response, self.model_name, self.system)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        chat, options, parameters = self._outgoing(
            messages, model_settings, model_request_parameters, run_context
        )
        updates = self.client.get_streaming_response(chat, options)
        try:
            yield _Stream(
                model_request_parameters=parameters,
                _model=self._model_name,
                _provider=self.system,
                _url=self.base_url,
                _updates=updates,
            )
        finally:
            # Leaving the context (a finished run, a `break`, a cancel) must release the
            # upstream request at once, even from a scope that is being cancelled.
            with anyio.CancelScope(shield=True):
                await close_stream(updates)


@dataclass
class _Stream(StreamedResponse):
    """The pipeline's updates as pydantic-ai's part events; usage arrives cumulative."""

    _model: str = ""
    _provider: str = ""
    _url: str | None = None
    _updates: AsyncIterator[ChatResponseUpdate] | None = None
    _timestamp: datetime = field(default_factory=lambda: datetime.now(UTC))

    def __post_init__(self) -> None:
        # Declared "not received yet": a stream that ends without usage is then reported as
        # unmeasured (see `StreamedResponse.usage`) instead of as zero tokens.
        self._usage_received = False

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        assert self._updates is not None
        try:
            async for update in self._updates:
                for event in self._events(update.contents):
                    yield event
                if update.finish_reason is not None:
                    self.finish_reason = FINISH_REASONS.get(update.finish_reason.value)
                if update.response_id:
                    self.provider_response_id = update.response_id
        except ProviderError as error:
            raise to_model_error(error, self._model) from error

    def _events(self, contents: Sequence[Any]) -> list[ModelResponseStreamEvent]:
        events: list[ModelResponseStreamEvent] = []
        manager = self._parts_manager
        for content in contents:
            if isinstance(content, TextReasoningContent) and content.text:
                events += manager.handle_thinking_delta(vendor_part_id=None, content=content.text)
            elif isinstance(content, TextContent) and content.text:
                events += manager.handle_text_delta(vendor_part_id=None, content=content.text)
            elif isinstance(content, FunctionCallContent):
                part = tool_call_part(content)
                events.append(
                    manager.handle_tool_call_part(
                        vendor_part_id=content.call_id,
                        tool_name=part.tool_name,
                        args=part.args,
                        tool_call_id=content.call_id,
                    )
                )
            elif isinstance(content, UsageContent):
                self._add_usage(to_request_usage(content.details), reported=True, cumulative=True)
        return events

    async def close_stream(self) -> None:
        await close_stream(self._updates)

    @property
    def model_name(self) -> str:
        return self._model

    @property
    def provider_name(self) -> str | None:
        return self._provider

    @property
    def provider_url(self) -> str | None:
        return self._url

    @property
    def timestamp(self) -> datetime:
        return self._timestamp


def _conversation_id(
    messages: Sequence[ModelMessage], run_context: RunContext[Any] | None
) -> str | None:
    """The conversation this request continues, as pydantic-ai resolved it for the run (the
    ``conversation_id`` given to ``Agent.run``, the one the history carries, or a fresh one per
    run): two runs that open with the same words are two conversations, and every request of
    one run, and of a run continuing its history, is the same one. ``request`` has no run
    context; pydantic-ai stamps the id on the messages, so the newest one says."""
    if run_context is not None and run_context.conversation_id:
        return run_context.conversation_id
    return next((m.conversation_id for m in reversed(messages) if m.conversation_id), None)


def _metadata_of(client: ChatClient) -> ChatClientMetadata:
    return service_of(client, ChatClientMetadata) or ChatClientMetadata()

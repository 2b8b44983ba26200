"""``OaicompatChatClient``: an oaicompat ``ChatClient`` as a Microsoft Agent Framework chat client.

Agent Framework builds its public clients from layers over a raw client: function invocation
(the tool loop) outermost, then chat middleware (once per model call), then telemetry
(OpenTelemetry spans), then the client that talks to the service; the stock OpenAI clients stack
them in that order, so a chat middleware sees each request of a tool loop and the tools see the
run's session. This class is that stack with the oaicompat pipeline as the service, so an
``Agent`` gets the framework's tool loop, middleware and telemetry on top of what the pipeline
recovers (reasoning from tags, llama.cpp's calls left in the text).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic

from typing_extensions import TypeVar

from providers.abstractions import (
    ChatClient,
    ChatClientMetadata,
    ChatFinishReason,
    ChatOptions,
    ChatRole,
    ProviderError,
)
from providers.abstractions import ChatResponse as OaicompatResponse
from providers.abstractions.delegating import close_stream
from providers.abstractions.services import service_of
from providers.integrations._extras import missing_extra
from providers.integrations._pipeline import client_from_config

try:
    from agent_framework import (
        AgentSession,
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
except ModuleNotFoundError as error:  # pragma: no cover - exercised in a subprocess
    raise missing_extra(
        error, "providers.integrations.agent_framework", "agent-framework"
    ) from error

from providers.integrations.agent_framework.contents import (
    to_chat_messages,
    to_framework_contents,
    to_framework_error,
    to_framework_usage,
)
from providers.integrations.agent_framework.options import to_chat_options

__all__ = ["OaicompatChatClient", "OaicompatChatOptions"]


# Without the framework installed (mypy in a light venv) the base is Any, which takes no `total`.
class OaicompatChatOptions(FrameworkOptions[Any], total=False):  # type: ignore[call-arg, unused-ignore]
    """Agent Framework's options, plus what the stock OpenAI client takes beside them:
    ``extra_body`` (keys sent as they are in the request body: ``chat_template_kwargs``, a
    llama.cpp ``grammar``), ``extra_headers`` (HTTP headers for the request), and
    ``reasoning_effort`` or ``reasoning`` (``{"effort", "summary"}``), mapped per model family
    (``ChatOptions.reasoning``)."""

    extra_body: dict[str, Any]
    extra_headers: dict[str, str]
    reasoning_effort: str
    reasoning: dict[str, str]


_SESSION_KEY = "oaicompat_conversation_id"
"""The ``client_kwargs`` entry that carries the run's session id down to the request: the
framework's chat middleware layer takes the session out of ``client_kwargs`` before the raw
client sees them."""


OptionsT = TypeVar("OptionsT", bound=Mapping[str, Any], default=OaicompatChatOptions)


class OaicompatChatClient(  # type: ignore[misc, unused-ignore]
    FunctionInvocationLayer[OptionsT],
    ChatMiddlewareLayer[OptionsT],
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
        cls,
        path: str | os.PathLike[str] = "oaicompat.yaml",
        role: str = "main",
        *,
        telemetry: bool = False,
        **client_kwargs: Any,
    ) -> OaicompatChatClient[OaicompatChatOptions]:
        """The client for ``role`` of an oaicompat YAML file, over the standard pipeline
        (without oaicompat's telemetry unless ``telemetry=True``: the framework's telemetry
        layer traces each call)."""
        return OaicompatChatClient(
            client_from_config(path, role, telemetry=telemetry, **client_kwargs)
        )

    if not TYPE_CHECKING:
        # Hidden from the type checker, so callers keep the framework's typed overloads.

        def get_response(self, messages, **kwargs):
            """The framework's ``get_response``, with the run's session id kept for the
            request: an agent run with ``session=`` passes its ``AgentSession`` in
            ``client_kwargs``, and its id becomes ``ChatOptions.conversation_id`` (the
            session-affinity key) unless the options name one."""
            kwargs["client_kwargs"] = _with_session_key(kwargs.get("client_kwargs"))
            return super().get_response(messages, **kwargs)

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
        """``kwargs`` are the run's ``client_kwargs``: ``extra_headers`` is read as the stock
        client reads it (HTTP headers for each request of the run), the session id as above."""
        call = _Call(kwargs.get("extra_headers"), kwargs.get(_SESSION_KEY))
        if stream:
            return self._build_response_stream(
                self._stream(messages, options, call),
                response_format=options.get("response_format"),
            )
        return self._response(messages, options, call)

    async def _response(
        self, messages: Sequence[Message], options: Mapping[str, Any], call: _Call
    ) -> ChatResponse[Any]:
        options = await self._validate_options(options)
        chat = to_chat_messages(messages, options.get("instructions"))
        request = call.options(options)
        try:
            response = await self.client.get_response(chat, request)
        except ProviderError as error:
            raise to_framework_error(error) from error
        return _framework_response(response, options.get("response_format"), _offered(request))

    async def _stream(
        self, messages: Sequence[Message], options: Mapping[str, Any], call: _Call
    ) -> AsyncIterator[ChatResponseUpdate]:
        """The pipeline's updates, one framework update each; closing this generator (the
        framework's ``ResponseStream.close()``, a ``break``, a cancel) closes the upstream."""
        options = await self._validate_options(options)
        chat = to_chat_messages(messages, options.get("instructions"))
        request = call.options(options)
        offered = _offered(request)
        updates = self.client.get_streaming_response(chat, request)
        try:
            async for update in updates:
                yield ChatResponseUpdate(
                    contents=to_framework_contents(update.contents, offered),
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


class _Call:
    """What one call's ``client_kwargs`` add to its options: headers and the session id."""

    __slots__ = ("conversation_id", "headers")

    def __init__(self, headers: Any, conversation_id: Any) -> None:
        self.headers: Mapping[str, Any] | None = headers
        self.conversation_id = conversation_id if isinstance(conversation_id, str) else None

    def options(self, options: Mapping[str, Any]) -> ChatOptions:
        return to_chat_options(options, headers=self.headers, conversation_id=self.conversation_id)


def _with_session_key(client_kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    """``client_kwargs`` with the id of the caller's session. A session the agent made up for a
    run without one (it marks those in a private entry, read here with the pinned version's
    name) is left out: such a run keeps the key of its opening, as a plain request would, so
    one-shot runs that open alike still share a prefix cache."""
    kwargs = dict(client_kwargs or {})
    session = kwargs.get("session")
    made_up = kwargs.get("_approval_session_is_authoritative") is False
    if isinstance(session, AgentSession) and not made_up:
        service_id = session.service_session_id
        kwargs[_SESSION_KEY] = service_id if isinstance(service_id, str) else session.session_id
    return kwargs


def _offered(request: ChatOptions) -> frozenset[str]:
    return frozenset(tool.name for tool in request.tool_declarations())


def _framework_response(
    response: OaicompatResponse, response_format: Any, offered: frozenset[str]
) -> ChatResponse[Any]:
    messages = [
        Message("assistant", to_framework_contents(m.contents, offered))
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

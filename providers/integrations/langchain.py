"""``ChatOaicompat``: an oaicompat pipeline as a LangChain chat model.

``ChatOaicompat.from_config("oaicompat.yaml", role="main")`` or ``ChatOaicompat(client=...)``
over any ``ChatClient``; ``bind_tools`` and ``create_agent`` work as with any LangChain chat
model. What the pipeline fixes reaches LangChain: llama.cpp's ``<tool_call>`` text arrives as
``tool_calls`` (streamed as ``tool_call_chunks``, each call whole), reasoning sits in
``additional_kwargs["reasoning_content"]`` instead of the answer, a call the pipeline flags
(cut by ``max_tokens``, unparseable, a tool that was not offered) is an ``invalid_tool_call``
that the agent will not run, and usage is ``usage_metadata``.

Errors are LangChain's and oaicompat's at once (``_langchain_convert.langchain_error``).
Closing a stream (``break`` out of ``astream``, a cancelled task) closes the upstream request.
The sync methods run the async pipeline on ``SyncChatClient``'s private loop thread, so they
work in plain scripts, threads and inside a running loop alike.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, Self

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.chat_models import (
    agenerate_from_stream,
    generate_from_stream,
)
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr

from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.contents import FunctionCallContent, UsageContent
from providers.abstractions.delegating import DelegatingChatClient
from providers.abstractions.errors import ProviderError
from providers.abstractions.options import ChatOptions
from providers.abstractions.sync_client import SyncChatClient
from providers.abstractions.usage import UsageDetails
from providers.config import client_for, load_config
from providers.integrations._langchain_convert import (
    ai_message,
    call_chunk,
    langchain_error,
    reported_usage,
    response_metadata,
    to_chat_messages,
    usage_metadata,
)

__all__ = ["ChatOaicompat"]


class ChatOaicompat(BaseChatModel):
    """A LangChain ``BaseChatModel`` over an oaicompat ``ChatClient``.

    ``model_kwargs``: OpenAI request keys sent with every call (``temperature``,
    ``chat_template_kwargs``…), read by ``ChatOptions.from_openai``; a call's own keyword
    arguments win. ``streaming``: ``invoke`` streams upstream and coalesces.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: Any = Field(exclude=True)
    """The pipeline (a ``ChatClient``)."""
    model_kwargs: dict[str, Any] = Field(default_factory=dict)
    streaming: bool = False
    owns_client: bool = False
    """Whether ``aclose``/``close`` close ``client`` (``from_config`` sets it)."""

    _sync: SyncChatClient | None = PrivateAttr(default=None)

    @classmethod
    def from_config(
        cls,
        path: str | os.PathLike[str] = "oaicompat.yaml",
        *,
        role: str = "main",
        telemetry: bool = False,
        **fields: Any,
    ) -> Self:
        """The configured role's standard pipeline as a chat model that owns it. oaicompat's
        telemetry is off unless asked for: LangChain's callbacks and tracers instrument the
        call. ``fields`` are the model's (``model_kwargs``, ``streaming``…)."""
        client = client_for(load_config(path), role, telemetry=telemetry)
        return cls(client=client, owns_client=True, **fields)

    @property
    def _llm_type(self) -> str:
        return "oaicompat"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_kwargs": self.model_kwargs}

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | dict[str, Any] | bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Offer ``tools`` (OpenAI's shape, as ``convert_to_openai_tool`` writes it).
        ``tool_choice``: ``"auto"``, ``"none"``, ``"required"`` (``"any"`` and ``True`` mean
        it too) or a tool's name."""
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = _tool_choice(tool_choice)
        return super().bind(tools=formatted, **kwargs)

    def _options(self, stop: list[str] | None, kwargs: dict[str, Any]) -> ChatOptions:
        request = {**self.model_kwargs, **kwargs}
        request.pop("stream", None)
        if stop:
            request["stop"] = stop
        return ChatOptions.from_openai(request)

    @property
    def sync_client(self) -> SyncChatClient:
        """The blocking face of ``client``, made on first sync use."""
        if self._sync is None:
            client = self.client if self.owns_client else _Borrowed(self.client)
            self._sync = SyncChatClient(client)
        return self._sync

    # --- async -------------------------------------------------------------------------------

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.streaming:
            stream = self._astream(messages, stop, run_manager, **kwargs)
            return await agenerate_from_stream(stream)
        options = self._options(stop, kwargs)
        try:
            response = await self.client.get_response(to_chat_messages(messages), options)
        except ProviderError as error:
            raise langchain_error(error) from error
        return _result(response)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        options = self._options(stop, kwargs)
        updates = self.client.get_streaming_response(to_chat_messages(messages), options)
        chunks = _Chunks()
        try:
            async for update in updates:
                chunk = chunks.of(update)
                if chunk is not None:
                    if run_manager is not None:
                        await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
                    yield chunk
        except ProviderError as error:
            raise langchain_error(error) from error
        finally:
            close = getattr(updates, "aclose", None)
            if close is not None:
                await close()
        yield chunks.last()

    async def aclose(self) -> None:
        """End the sync methods' loop thread, and close the pipeline if this model owns it
        (``from_config``)."""
        sync, self._sync = self._sync, None
        if sync is not None:
            sync.close()
        if self.owns_client:
            await self.client.aclose()

    # --- sync --------------------------------------------------------------------------------

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        if self.streaming:
            return generate_from_stream(self._stream(messages, stop, run_manager, **kwargs))
        options = self._options(stop, kwargs)
        try:
            response = self.sync_client.get_response(to_chat_messages(messages), options)
        except ProviderError as error:
            raise langchain_error(error) from error
        return _result(response)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        options = self._options(stop, kwargs)
        updates = self.sync_client.get_streaming_response(to_chat_messages(messages), options)
        chunks = _Chunks()
        try:
            for update in updates:
                chunk = chunks.of(update)
                if chunk is not None:
                    if run_manager is not None:
                        run_manager.on_llm_new_token(chunk.text, chunk=chunk)
                    yield chunk
        except ProviderError as error:
            raise langchain_error(error) from error
        finally:
            close = getattr(updates, "close", None)
            if close is not None:
                close()
        yield chunks.last()

    def close(self) -> None:
        """``aclose`` for blocking code: ends the loop thread of the sync methods and closes
        the pipeline if this model owns it. Inside a running event loop, await ``aclose``."""
        sync, self._sync = self._sync, None
        if sync is not None:
            sync.close()  # an owned client was lent whole: this closes it
        elif self.owns_client:
            asyncio.run(self.client.aclose())


class _Borrowed(DelegatingChatClient):
    """The caller's client, lent to ``SyncChatClient``: closing the loop thread must not
    close a client this model does not own."""

    async def aclose(self) -> None:
        return None


def _tool_choice(choice: str | dict[str, Any] | bool) -> str | dict[str, Any]:
    if isinstance(choice, dict):
        return choice
    if choice is True or choice == "any":
        return "required"
    if choice in ("auto", "none", "required"):
        return str(choice)
    return {"type": "function", "function": {"name": choice}}


def _result(response: ChatResponse) -> ChatResult:
    message = ai_message(response)
    info = {"finish_reason": str(response.finish_reason)} if response.finish_reason else None
    generation = ChatGeneration(message=message, generation_info=info)
    output = {"model_name": response.model_id, "token_usage": reported_usage(response.usage)}
    return ChatResult(generations=[generation], llm_output=output)


class _Chunks:
    """A stream's updates as LangChain chunks: text, reasoning and whole calls as they come;
    usage, finish reason and model once, in the last chunk (LangChain adds chunks up, so a
    field sent twice would count twice)."""

    def __init__(self) -> None:
        self.calls = 0
        self.usage: UsageDetails | None = None
        self.finish_reason: object = None
        self.model_id: str | None = None
        self.response_id: str | None = None

    def of(self, update: ChatResponseUpdate) -> ChatGenerationChunk | None:
        """Hot path: one call per update."""
        self.response_id = self.response_id or update.response_id
        self.model_id = self.model_id or update.model_id
        if update.finish_reason is not None:
            self.finish_reason = update.finish_reason
        calls = []
        for content in update.contents:
            if isinstance(content, FunctionCallContent):
                calls.append(call_chunk(content, self.calls))
                self.calls += 1
            elif isinstance(content, UsageContent):
                details = content.details
                self.usage = details if self.usage is None else self.usage.updated_with(details)
        text, reasoning = update.text, update.reasoning
        if not (text or reasoning or calls):
            return None
        kwargs = {"reasoning_content": reasoning} if reasoning else {}
        message = AIMessageChunk(
            content=text, additional_kwargs=kwargs, tool_call_chunks=calls, id=self.response_id
        )
        return ChatGenerationChunk(message=message)

    def last(self) -> ChatGenerationChunk:
        message = AIMessageChunk(
            content="",
            id=self.response_id,
            response_metadata=response_metadata(self.finish_reason, self.model_id),
        )
        if self.usage is not None:
            message.usage_metadata = usage_metadata(self.usage)
        info = {"finish_reason": str(self.finish_reason)} if self.finish_reason else None
        return ChatGenerationChunk(message=message, generation_info=info)

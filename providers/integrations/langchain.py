"""``ChatOaicompat``: an oaicompat pipeline as a LangChain chat model.

``ChatOaicompat.from_config("oaicompat.yaml", role="main")`` or ``ChatOaicompat(client=...)``
over any ``ChatClient``; ``bind_tools`` and ``create_agent`` work as with any LangChain chat
model. What the pipeline fixes reaches LangChain: llama.cpp's ``<tool_call>`` text arrives as
``tool_calls`` (streamed as ``tool_call_chunks``, each call whole), reasoning sits in
``additional_kwargs["reasoning_content"]`` instead of the answer, a call the pipeline flags
(cut by ``max_tokens``, unparseable, a tool that was not offered) is an ``invalid_tool_call``
that the agent will not run (an answer with nothing else shows the call's text as its
content, so the agent's answer is never silently empty), and usage is ``usage_metadata``.
``ChatOpenAI``'s request settings (``extra_body``, ``default_headers``/``extra_headers``,
``reasoning_effort``/``reasoning``, tools given as functions) and LangChain's ``thread_id``
carry over (``_langchain_options``).

Errors are LangChain's and oaicompat's at once (``_langchain_convert.langchain_error``).
Closing a stream (``break`` out of ``astream``, a cancelled task) closes the upstream request.
The sync methods run the async pipeline on ``SyncChatClient``'s private loop thread, so they
work in plain scripts, threads and inside a running loop alike.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any, Self

from providers.integrations._extras import missing_extra

try:
    from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
    from langchain_core.language_models import BaseChatModel, LanguageModelInput
    from langchain_core.language_models.chat_models import (
        agenerate_from_stream,
        generate_from_stream,
    )
    from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
    from langchain_core.outputs import ChatGenerationChunk, ChatResult
    from langchain_core.runnables import Runnable, RunnableConfig, ensure_config
    from langchain_core.tools import BaseTool
    from langchain_core.utils.function_calling import convert_to_openai_tool
except ModuleNotFoundError as error:
    raise missing_extra(error, "providers.integrations.langchain", "langchain") from error
from pydantic import ConfigDict, Field, PrivateAttr, field_validator, model_validator

from providers.abstractions.delegating import DelegatingChatClient
from providers.abstractions.errors import ProviderError
from providers.abstractions.options import ChatOptions
from providers.abstractions.sync_client import SyncChatClient
from providers.config import client_for, load_config
from providers.integrations._langchain_convert import (
    StreamChunks,
    chat_result,
    langchain_error,
    to_chat_messages,
)
from providers.integrations._langchain_options import (
    carried_fields,
    chat_options,
    openai_tool_choice,
)

__all__ = ["ChatOaicompat"]


class ChatOaicompat(BaseChatModel):
    """A LangChain ``BaseChatModel`` over an oaicompat ``ChatClient``.

    ``model_kwargs``: OpenAI request keys sent with every call (``temperature``,
    ``chat_template_kwargs``…), read by ``ChatOptions.from_openai``; a call's own keyword
    arguments win. ``ChatOpenAI``'s request fields given to the constructor (``temperature=``,
    ``max_tokens=``…) go there too; any other unknown keyword is refused, never ignored.
    ``streaming``: ``invoke`` streams upstream and coalesces. ``extra_body``,
    ``default_headers``, ``reasoning_effort`` and ``reasoning`` mean what they mean on
    ``ChatOpenAI`` (``_langchain_options``); so do the call arguments ``extra_body`` and
    ``extra_headers``. LangChain's ``thread_id`` (``config["configurable"]``) is the request's
    ``conversation_id``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    client: Any = Field(exclude=True)
    """The pipeline (a ``ChatClient``)."""
    model_kwargs: dict[str, Any] = Field(default_factory=dict)
    streaming: bool = False
    extra_body: dict[str, Any] | None = None
    """Keys merged into every request body at the top level (``{"chat_template_kwargs":
    {"enable_thinking": False}}``), over the others, as ``ChatOpenAI`` merges its own."""
    default_headers: Any = Field(default=None, exclude=True, repr=False)
    """HTTP headers sent with every request (a call's ``extra_headers`` win): a mapping of
    names to str values. Kept out of ``repr`` and dumps, and checked here rather than by
    pydantic, whose error would quote the value (a credential, often)."""
    reasoning_effort: str | None = None
    """``"none"``, ``"low"``, ``"medium"``, ``"high"``, ``"xhigh"``: ``ChatOptions.reasoning``."""
    reasoning: dict[str, Any] | None = None
    """``{"effort": ..., "summary": ...}`` as on ``ChatOpenAI``: the effort as
    ``reasoning_effort``; a summary asks for reasoning output ``SUMMARY``."""
    owns_client: bool = False
    """Whether ``aclose``/``close`` close ``client`` (``from_config`` sets it)."""

    _sync: SyncChatClient | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _request_fields(cls, values: Any) -> Any:
        """``ChatOpenAI(temperature=0)`` carried over (``carried_fields``)."""
        return carried_fields(_field_names(cls), values) if isinstance(values, dict) else values

    @field_validator("default_headers", mode="before")
    @classmethod
    def _headers_mapping(cls, value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, Mapping) or not all(
            isinstance(name, str) and isinstance(given, str) for name, given in value.items()
        ):
            raise TypeError("ChatOaicompat: default_headers must map header names to str values")
        return dict(value)

    @classmethod
    def from_config(
        cls,
        path: str | os.PathLike[str] = "oaicompat.yaml",
        role: str = "main",
        *,
        telemetry: bool = False,
        **fields: Any,
    ) -> Self:
        """The configured role's standard pipeline as a chat model that owns it. oaicompat's
        telemetry is off unless asked for: LangChain's callbacks and tracers instrument the
        call. ``fields`` are the model's (``model_kwargs``, ``streaming``…), checked before
        the pipeline is built (an unknown one must not leave it open)."""
        carried_fields(_field_names(cls), dict(fields))
        client = client_for(load_config(path), role, telemetry=telemetry)
        return cls(client=client, owns_client=True, **fields)

    def _get_invocation_params(
        self, stop: list[str] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """What LangChain's callbacks and tracers are given: a call's ``extra_headers`` by
        name only (a header value is often a credential)."""
        params = super()._get_invocation_params(stop=stop, **kwargs)
        headers = params.get("extra_headers")
        if isinstance(headers, Mapping):
            params["extra_headers"] = dict.fromkeys(headers, "***")
        return params

    @property
    def _llm_type(self) -> str:
        return "oaicompat"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"model_kwargs": self.model_kwargs}
        for name in ("extra_body", "reasoning_effort", "reasoning"):
            if getattr(self, name) is not None:
                params[name] = getattr(self, name)
        return params

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
            kwargs["tool_choice"] = openai_tool_choice(tool_choice)
        return super().bind(tools=formatted, **kwargs)

    def _options(self, stop: list[str] | None, kwargs: dict[str, Any]) -> ChatOptions:
        settings = {
            key: value
            for key, value in (
                ("extra_body", self.extra_body),
                ("default_headers", self.default_headers),
                ("reasoning_effort", self.reasoning_effort),
                ("reasoning", self.reasoning),
            )
            if value is not None
        }
        return chat_options({**settings, **self.model_kwargs}, kwargs, stop)

    # --- the run's thread: LangChain's ``thread_id`` as the request's ``conversation_id`` -----

    def invoke(
        self,
        input: LanguageModelInput,  # noqa: A002 (LangChain's name: callers pass input=)
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> AIMessage:
        return super().invoke(input, config, stop=stop, **_with_thread(config, kwargs))

    async def ainvoke(
        self,
        input: LanguageModelInput,  # noqa: A002 (LangChain's name: callers pass input=)
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> AIMessage:
        return await super().ainvoke(input, config, stop=stop, **_with_thread(config, kwargs))

    def stream(
        self,
        input: LanguageModelInput,  # noqa: A002 (LangChain's name: callers pass input=)
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> Iterator[AIMessageChunk]:
        return super().stream(input, config, stop=stop, **_with_thread(config, kwargs))

    def astream(
        self,
        input: LanguageModelInput,  # noqa: A002 (LangChain's name: callers pass input=)
        config: RunnableConfig | None = None,
        *,
        stop: list[str] | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[AIMessageChunk]:
        return super().astream(input, config, stop=stop, **_with_thread(config, kwargs))

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
        return chat_result(response)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        options = self._options(stop, kwargs)
        updates = self.client.get_streaming_response(to_chat_messages(messages), options)
        chunks = StreamChunks()
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
        last = chunks.last()
        if run_manager is not None and last.text:
            await run_manager.on_llm_new_token(last.text, chunk=last)
        yield last

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
        return chat_result(response)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        options = self._options(stop, kwargs)
        updates = self.sync_client.get_streaming_response(to_chat_messages(messages), options)
        chunks = StreamChunks()
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
        last = chunks.last()
        if run_manager is not None and last.text:
            run_manager.on_llm_new_token(last.text, chunk=last)
        yield last

    def close(self) -> None:
        """``aclose`` for blocking code: ends the loop thread of the sync methods and closes
        the pipeline if this model owns it. Inside a running event loop, await ``aclose``."""
        sync, self._sync = self._sync, None
        if sync is not None:
            sync.close()  # an owned client was lent whole: this closes it
        elif self.owns_client:
            asyncio.run(self.client.aclose())


def _field_names(cls: type[BaseChatModel]) -> set[str]:
    fields = cls.model_fields
    return set(fields) | {field.alias for field in fields.values() if field.alias}


def _with_thread(config: RunnableConfig | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with ``conversation_id``: the one given, else the run's ``thread_id``.
    LangChain hands a chat model's ``_generate`` no ``configurable``, so it is read here, where
    the run's config is (the one passed, or the one LangGraph set for the running node)."""
    if "conversation_id" in kwargs:
        return kwargs
    thread = ensure_config(config).get("configurable", {}).get("thread_id")
    return kwargs if thread is None else {**kwargs, "conversation_id": str(thread)}


class _Borrowed(DelegatingChatClient):
    """The caller's client, lent to ``SyncChatClient``: closing the loop thread must not
    close a client this model does not own."""

    async def aclose(self) -> None:
        return None

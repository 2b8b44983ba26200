"""``TextRecoveryChatClient``: reasoning and tool calls that a server left in plain text.

A server whose reasoning or tool parser is off, misconfigured or buggy (vLLM's streaming hermes
bug, vllm#31871; SGLang without ``--tool-call-parser``; any server when the request carries no
tools) streams ``<think>…</think>`` and ``<tool_call>…</tool_call>`` as ``delta.content``. This
layer runs the ``ReasoningParser`` and then the ``TextToolCallParser`` over that text, so the
caller gets ``TextReasoningContent`` and ``FunctionCallContent`` whatever the server did.

Each of ``reasoning_tags`` and ``text_tool_calls`` is ``"auto"`` (the default: recover only
while the server gives no structured field of that kind), ``"off"``, or a format name.
Ordinary text is released as it arrives; only a suffix that may become a marker is held. When
calls were recovered, the finish reason becomes ``tool_calls``. Streamed and non-streamed
answers go through the same per-choice state (``providers.layers.choice_recovery``), so they
cannot disagree; this module is the layer around it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from providers.abstractions.chat_client import ChatClient, ChatInput
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.delegating import DelegatingChatClient, close_stream
from providers.abstractions.errors import ProviderError
from providers.abstractions.open_values import ChatFinishReason
from providers.abstractions.options import ChatOptions
from providers.layers.choice_recovery import AUTO, OFF, ChoiceRecovery

__all__ = ["TextRecoveryChatClient"]


class TextRecoveryChatClient(DelegatingChatClient):
    """Recovers reasoning tags and tool calls from plain text; see the module docstring."""

    def __init__(
        self,
        inner: ChatClient,
        *,
        reasoning_tags: str = AUTO,
        text_tool_calls: str = AUTO,
        block_whitespace: bool = True,
    ) -> None:
        super().__init__(inner)
        self.reasoning_tags = reasoning_tags
        self.text_tool_calls = text_tool_calls
        self.block_whitespace = block_whitespace
        self._passthrough = (
            reasoning_tags == OFF and text_tool_calls == OFF and not block_whitespace
        )

    def _recovery(self, options: ChatOptions | None) -> ChoiceRecovery:
        tools = options.tool_declarations() if options is not None and options.tools else None
        return ChoiceRecovery(
            self.reasoning_tags, self.text_tool_calls, tools, self.block_whitespace
        )

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        try:
            response = await self.inner.get_response(messages, options)
        except ProviderError as exc:
            self._recover_partial(exc, options)
            raise
        return self._recover(response, options)

    def _recover(self, response: ChatResponse, options: ChatOptions | None) -> ChatResponse:
        """A whole response through the same per-choice state the stream uses."""
        if self._passthrough:
            return response
        recovered = False
        updates = []
        for index, message in enumerate(response.messages):
            recovery = self._recovery(options)
            contents = recovery.process(list(message.contents))
            contents.extend(recovery.finish())
            recovered |= recovery.calls_recovered
            updates.append(ChatResponseUpdate(contents, message.role, choice_index=index))
        rebuilt = ChatResponse.from_updates(updates)  # re-merges text the parsers split
        rebuilt.response_id = response.response_id
        rebuilt.model_id = response.model_id
        rebuilt.created_at = response.created_at
        rebuilt.usage = response.usage
        rebuilt.additional_properties = response.additional_properties
        rebuilt.raw = response.raw
        rebuilt.finish_reason = ChatFinishReason.TOOL_CALLS if recovered else response.finish_reason
        return rebuilt

    def _recover_partial(self, error: ProviderError, options: ChatOptions | None) -> None:
        if error.partial_response is not None:
            error.partial_response = self._recover(error.partial_response, options)

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        if self._passthrough:  # (nothing to recover: no generator level of ours)
            return self.inner.get_streaming_response(messages, options)
        return self._recovering(messages, options)

    async def _recovering(
        self, messages: ChatInput, options: ChatOptions | None
    ) -> AsyncIterator[ChatResponseUpdate]:
        """The inner stream with its updates edited in place as they pass, then what the
        parsers still hold if it ended without a finish chunk."""
        recovery = _StreamRecovery(self, options)
        stream: AsyncIterator[ChatResponseUpdate] | None = None
        try:
            stream = self.inner.get_streaming_response(messages, options)
            edit = recovery.edit
            async for update in stream:
                edit(update)
                yield update
        except ProviderError as error:
            # The inner partial response is raw text; give the caller the recovered view.
            self._recover_partial(error, options)
            raise
        finally:
            await close_stream(stream)
        for update in recovery.tails():
            yield update


class _StreamRecovery:
    """One stream's recoveries, one per choice: updates are edited in place as they pass."""

    __slots__ = (
        "_client",
        "_first",
        "_first_index",
        "_index",
        "_last",
        "_options",
        "_others",
        "_recovery",
    )

    def __init__(self, client: TextRecoveryChatClient, options: ChatOptions | None) -> None:
        self._client = client
        self._options = options
        # One recovery per choice; nearly every stream has one choice, so the first is kept
        # aside and the dict is made only for a second.
        self._first: ChoiceRecovery | None = None
        self._first_index = 0
        self._others: dict[int, ChoiceRecovery] | None = None
        self._index = -1  # the choice of the previous update, and its recovery
        self._recovery: ChoiceRecovery | None = None
        self._last: ChatResponseUpdate | None = None

    def _choice(self, index: int) -> ChoiceRecovery:
        self._index = index
        if self._first is None:
            self._first_index = index
            recovery = self._first = self._client._recovery(self._options)
        elif index == self._first_index:
            recovery = self._first
        else:
            if self._others is None:
                self._others = {}
            found = self._others.get(index)
            if found is None:
                found = self._others[index] = self._client._recovery(self._options)
            recovery = found
        self._recovery = recovery
        return recovery

    def edit(self, update: ChatResponseUpdate) -> None:
        recovery = self._recovery
        if update.choice_index != self._index or recovery is None:
            recovery = self._choice(update.choice_index)
        if update.contents:
            update.contents = recovery.process(update.contents)
        if update.finish_reason is not None:
            update.contents.extend(recovery.finish())
            if recovery.calls_recovered:
                update.finish_reason = ChatFinishReason.TOOL_CALLS
        self._last = update

    def tails(self) -> list[ChatResponseUpdate]:
        """What the parsers still hold when the stream ended without a finish chunk."""
        choices = {self._first_index: self._first} if self._first is not None else {}
        if self._others:
            choices.update(self._others)
        last = self._last
        tails = []
        for index, recovery in choices.items():
            tail = recovery.finish()
            if tail:
                tails.append(
                    ChatResponseUpdate(
                        tail,
                        response_id=last.response_id if last else None,
                        model_id=last.model_id if last else None,
                        choice_index=index,
                    )
                )
        return tails

"""``TextRecoveryChatClient``: reasoning and tool calls that a server left in plain text.

A server whose reasoning or tool parser is off, misconfigured or buggy (vLLM's streaming hermes
bug, vllm#31871; SGLang without ``--tool-call-parser``; any server when the request carries no
tools) streams ``<think>…</think>`` and ``<tool_call>…</tool_call>`` as ``delta.content``. This
layer runs the ``ReasoningParser`` and then the ``TextToolCallParser`` over that text, so the
caller gets ``TextReasoningContent`` and ``FunctionCallContent`` whatever the server did.

Each of ``reasoning_tags`` and ``text_tool_calls`` is ``"auto"`` (the default: recover only
while the server gives no structured field of that kind), ``"off"``, or a format name.
Ordinary text is released as it arrives; only a suffix that may become a marker is held. Streamed
and non-streamed answers go through the same per-choice state
(``providers.layers.choice_recovery``), so they cannot disagree; this module is the layer around
it.

A recovered call is executable only if the caller asked for it (issue #20): calls are recovered
only when the request offered tools (``tools`` not empty, ``tool_mode`` not ``none``), a call
naming another tool carries ``error``, and markup inside a think block or a Markdown code fence
is no call. The finish reason becomes ``tool_calls`` only when an executable call was recovered:
the layer invents that reason, and it must not tell an agent loop to run calls that carry
``error`` (they are in the contents all the same). ``limits`` bound what a stream may make the
layer hold (``max_held_text_bytes``: an unclosed block waiting for its end) and how many calls
it recovers (``max_tool_calls``); past either, ``ResponseTooLargeError`` with the partial
response (what the caller received, then what was held). Under ``ReasoningOutput.NONE`` the
reasoning it recovers is dropped as the wire client drops the server's.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import suppress
from typing import TYPE_CHECKING

from providers.abstractions.chat_client import ChatClient, ChatInput
from providers.abstractions.chat_response import (
    ChatResponse,
    ChatResponseBuilder,
    ChatResponseUpdate,
)
from providers.abstractions.contents import TextContent, TextReasoningContent
from providers.abstractions.delegating import DelegatingChatClient
from providers.abstractions.errors import ProviderError
from providers.abstractions.limits import DEFAULT_LIMITS, Limits
from providers.abstractions.open_values import ChatFinishReason
from providers.abstractions.options import ChatOptions
from providers.abstractions.reasoning_options import ReasoningOutput

if TYPE_CHECKING:
    from providers.chat_completions.option_enforcement import Enforcement
from providers.abstractions.response_update import TextKind
from providers.abstractions.update_runs import UpdateRuns, close_stream, runs_of, updates_of
from providers.layers.choice_recovery import AUTO, OFF, ChoiceRecovery, LimitPassed
from providers.text_tool_calls import offered_tools

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
        limits: Limits | None = None,
    ) -> None:
        super().__init__(inner)
        self.reasoning_tags = reasoning_tags
        self.text_tool_calls = text_tool_calls
        self.block_whitespace = block_whitespace
        self.limits = limits or DEFAULT_LIMITS
        self._passthrough = (
            reasoning_tags == OFF and text_tool_calls == OFF and not block_whitespace
        )

    def _recovery(self, options: ChatOptions | None, *, stream: bool) -> ChoiceRecovery:
        # A whole response is in memory already (within the body limit): nothing to bound
        # in what the parsers hold while they read it.
        limits = self.limits
        return ChoiceRecovery(
            self.reasoning_tags,
            self.text_tool_calls,
            offered_tools(options),
            self.block_whitespace,
            max_held_bytes=limits.max_held_text_bytes if stream else None,
            max_calls=limits.max_tool_calls,
            max_json_depth=limits.max_json_depth,
        )

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        try:
            response = await self.inner.get_response(messages, options)
        except ProviderError as exc:
            self._recover_partial(exc, options)
            raise
        recovered = self._recover(response, options)
        if not _drops(options):
            return recovered
        # deferred: the reasoning-output stage, for requests that ask for no reasoning only
        from providers.chat_completions.reasoning_output import drop_reasoning_response

        return drop_reasoning_response(recovered, _no_plan())

    def _recover(
        self, response: ChatResponse, options: ChatOptions | None, *, broken: bool = False
    ) -> ChatResponse:
        """A whole response through the same per-choice state the stream uses (``broken``:
        a failed request's partial response, ``ChoiceRecovery.finish``)."""
        if self._passthrough:
            return response
        recovered = False
        updates = []
        for index, message in enumerate(response.messages):
            recovery = self._recovery(options, stream=False)
            try:
                contents = recovery.process(list(message.contents))
                contents.extend(recovery.finish(broken=broken))
            except LimitPassed as passed:
                passed.error.partial_response = response  # as received: nothing was sent
                raise passed.error from None
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
            # (Past a limit, the error in hand is still the one to report; its partial stays.)
            with suppress(ProviderError):
                error.partial_response = self._recover(error.partial_response, options, broken=True)

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        if self._passthrough:  # (nothing to recover: no generator level of ours)
            return self.inner.get_streaming_response(messages, options)
        return updates_of(self._streaming_runs(messages, options))

    def _streaming_runs(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> UpdateRuns:
        if self._passthrough:
            return runs_of(self.inner, messages, options)
        runs = self._recovering(messages, options)
        if not _drops(options):
            return runs
        # deferred: the reasoning-output stage, for requests that ask for no reasoning only
        from providers.chat_completions.reasoning_output import drop_reasoning_runs

        return drop_reasoning_runs(runs, _no_plan())

    async def _recovering(self, messages: ChatInput, options: ChatOptions | None) -> UpdateRuns:
        """The inner runs with their updates edited in place as they pass, then what the
        parsers still hold if the stream ended without a finish chunk."""
        recovery = _StreamRecovery(self, options)
        stream: UpdateRuns | None = None
        try:
            stream = runs_of(self.inner, messages, options)
            edit = recovery.edit_run
            async for run in stream:
                edit(run)
                yield run
        except ProviderError as error:
            # The inner partial response is raw text; give the caller the recovered view
            # (a limit of this layer's own has it already).
            if error is not recovery.failure:
                self._recover_partial(error, options)
            raise
        finally:
            await close_stream(stream)
        tails = recovery.tails()
        if tails:
            yield tails


def _drops(options: ChatOptions | None) -> bool:
    """``ReasoningOutput.NONE``: reasoning this layer recovers from ``<think>`` tags must not
    reach the caller either (the wire client dropped only what the server split off)."""
    reasoning = options.reasoning if options is not None else None
    return reasoning is not None and reasoning.output == ReasoningOutput.NONE


def _no_plan() -> Enforcement:
    """The plan the reasoning-output stage reads: drop, on behalf of this layer."""
    # deferred: the enforcement planner, for requests that ask for no reasoning only
    from providers.chat_completions.option_enforcement import Enforcement

    return Enforcement("text recovery", drop_reasoning=True)


_TEXT_RUN = 256
"""Plain texts gathered before they are added to the partial response as one."""


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
        "_partial",
        "_recovery",
        "_texts",
        "_texts_kind",
        "failure",
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
        # What the caller received, for the partial response of a limit passed here (the inner
        # client's own partial response is out of reach from this side of its stream). Plain
        # text handed on as it came, nearly every update, is gathered in ``_texts`` and added
        # in runs: the builder's ``add`` per update would double the cost of this layer.
        self._partial = ChatResponseBuilder(keep_raw=False)
        self._texts: list[str] = []
        self._texts_kind: TextKind = TextContent
        self.failure: ProviderError | None = None

    def _choice(self, index: int) -> ChoiceRecovery:
        if self._texts:
            self._fold()
        self._index = index
        if self._first is None:
            self._first_index = index
            recovery = self._first = self._client._recovery(self._options, stream=True)
        elif index == self._first_index:
            recovery = self._first
        else:
            if self._others is None:
                self._others = {}
            found = self._others.get(index)
            if found is None:
                found = self._others[index] = self._client._recovery(self._options, stream=True)
            recovery = found
        self._recovery = recovery
        return recovery

    def edit_run(self, run: list[ChatResponseUpdate]) -> None:
        """``edit`` each update of a run (``update_runs``).

        Hot path: the usual updates, plain texts (or server reasoning) that every stage would
        hand on as they are, are recognised by the choice's recovery a stretch at a time
        (``ChoiceRecovery.take_passing``) and only gathered for the partial response; any
        other goes through ``edit``."""
        texts = self._texts
        position, end = 0, len(run)
        while position < end:
            recovery = self._recovery
            if recovery is not None:
                position = recovery.take_passing(
                    run, position, self._index, self._texts_kind, texts
                )
                if len(texts) >= _TEXT_RUN:
                    self._fold()
                if position == end:
                    break
            self.edit(run[position])  # (which may change the recovery, choice and kind)
            position += 1
        if run:
            self._last = run[-1]

    def edit(self, update: ChatResponseUpdate) -> None:
        """One update that ``edit_run`` did not take inline: a plain one, if it can, stays
        plain (``_edit_plain``); anything else goes through the choice's ``process``."""
        recovery = self._recovery
        if update.choice_index != self._index or recovery is None:
            recovery = self._choice(update.choice_index)
        text = update.plain_text  # (a plain update's text: no list made)
        if text and self._edit_plain(update, recovery, text):
            return
        contents = [] if text == "" else update.contents  # ("": plain and empty, no list made)
        try:
            if contents:
                update.contents = recovery.process(contents)
            if update.finish_reason is not None:
                update.contents.extend(recovery.finish())
                if recovery.calls_recovered:
                    update.finish_reason = ChatFinishReason.TOOL_CALLS
        except LimitPassed as passed:
            raise self._failed(passed, update.choice_index) from None
        self._last = update
        update.make_plain()  # (the caller may keep it: as small as an update not edited)
        text = update.plain_text
        if text is not None:  # (plain: one text, or nothing to show)
            if text:
                self._gather(text, update.head.kind)
            return
        if (
            update.finish_reason is None
            and update.role is None
            and update.additional_properties is None
        ):
            contents = update.contents
            if len(contents) == 1:
                only = contents[0]
                kind = type(only)
                if (kind is TextContent or kind is TextReasoningContent) and (
                    only.additional_properties is None
                ):
                    self._gather(only.text, kind)  # type: ignore[attr-defined]
                    return
        if self._texts:
            self._fold()
        self._partial.add(update)

    def _edit_plain(self, update: ChatResponseUpdate, recovery: ChoiceRecovery, text: str) -> bool:
        """A plain update (one ``text``, not empty) that only the edges stage may change: edited
        as a string, so it stays plain, and gathered. ``False``: it needs ``process``."""
        kind = update.head.kind
        try:
            if kind is TextContent:
                edited = recovery.edit_text(text)
            else:
                edited = recovery.edit_reasoning(text)
        except LimitPassed as passed:
            raise self._failed(passed, update.choice_index) from None
        if edited is None:
            return False
        if edited is not text:
            update.replace_text(edited)
            text = edited
        self._last = update
        if text:
            self._gather(text, kind)
        return True

    def _gather(self, text: str, kind: TextKind) -> None:
        """Keep a text handed on as it came for the partial response, with the adjacent
        ones of its kind: the builder's ``add`` per update would double this layer's cost."""
        if kind is not self._texts_kind:
            if self._texts:
                self._fold()
            self._texts_kind = kind
        texts = self._texts
        texts.append(text)
        if len(texts) == _TEXT_RUN:
            self._fold()

    def _fold(self) -> None:
        text = self._texts_kind("".join(self._texts))
        self._texts.clear()
        self._partial.add(ChatResponseUpdate([text], choice_index=self._index))

    def _failed(self, passed: LimitPassed, index: int) -> ProviderError:
        """The limit's error, with what the caller received and what was held back."""
        if self._texts:
            self._fold()
        self._partial.add(ChatResponseUpdate(passed.unsent, choice_index=index))
        passed.error.partial_response = self._partial.build()
        self.failure = passed.error
        return passed.error

    def tails(self) -> list[ChatResponseUpdate]:
        """What the parsers still hold when the stream ended without a finish chunk."""
        choices = {self._first_index: self._first} if self._first is not None else {}
        if self._others:
            choices.update(self._others)
        last = self._last
        tails = []
        for index, recovery in choices.items():
            try:
                tail = recovery.finish()
            except LimitPassed as passed:
                raise self._failed(passed, index) from None
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

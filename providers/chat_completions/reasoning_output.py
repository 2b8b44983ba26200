"""``ReasoningOutput.NONE``, enforced here: the answer reaches the caller without reasoning text.

No server can stop a model from thinking when its template says it thinks, and only vLLM has a
key that leaves reasoning out of the answer (``include_reasoning: false``, sent by the request
builder where the backend row names it). So whatever the server does, the client drops every
``TextReasoningContent`` from the answer, streamed and whole: the caller asked for none, and
gets none, not "none on vLLM". The text, tool calls and usage are untouched.

An update that held only reasoning is kept, emptied (a caller's watchdog sees the stream alive,
and ``is_substantive`` says it carries nothing). ``raw`` stays the server's chunk as received:
it is the wire record, not the answer.

``ReasoningOutput.SUMMARY`` needs no stage: no server here makes a summary, so the full text is
returned (the option's documented fallback).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from providers.abstractions.contents import TextReasoningContent

if TYPE_CHECKING:
    from providers.abstractions.chat_response import ChatResponse
    from providers.abstractions.response_update import ChatResponseUpdate
    from providers.abstractions.update_runs import UpdateRuns
    from providers.chat_completions.option_enforcement import Enforcement

__all__ = ["drop_reasoning_response", "drop_reasoning_runs"]


async def drop_reasoning_runs(runs: UpdateRuns, plan: Enforcement) -> UpdateRuns:
    """Each run with its updates' reasoning dropped. Per update: one ``plain_text`` test for
    the usual plain update (its kind says whether it is reasoning), a contents scan otherwise."""
    async for run in runs:
        for update in run:
            _drop(update)
        yield run


def drop_reasoning_response(response: ChatResponse, plan: Enforcement) -> ChatResponse:
    """``response`` with every message's reasoning contents dropped."""
    for message in response.messages:
        if any(isinstance(content, TextReasoningContent) for content in message.contents):
            message.contents = [
                content
                for content in message.contents
                if not isinstance(content, TextReasoningContent)
            ]
    return response


def _drop(update: ChatResponseUpdate) -> None:
    if update.plain_text is not None:
        if not update.plain_text or update.head.kind is not TextReasoningContent:
            return  # (plain: one text of the head's kind, or nothing)
    elif not any(isinstance(content, TextReasoningContent) for content in update.contents):
        return
    update.contents = [
        content for content in update.contents if not isinstance(content, TextReasoningContent)
    ]
    update.make_plain()

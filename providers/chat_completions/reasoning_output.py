"""``ReasoningOutput.NONE``, enforced here: the answer reaches the caller without reasoning text.

No server can stop a model from thinking when its template says it thinks, and only vLLM has a
key that leaves reasoning out of the answer (``include_reasoning: false``, sent by the request
builder where the backend row names it). So whatever the server does, the client drops every
``TextReasoningContent`` from the answer, streamed and whole: the caller asked for none, and
gets none, not "none on vLLM". The text, tool calls and usage are untouched.

An update that held only reasoning is kept, emptied (a caller's watchdog sees the stream alive,
and ``is_substantive`` says it carries nothing). ``raw`` stays the server's chunk as received:
it is the wire record, not the answer.

The whitespace that opens the answer goes too: it is the template's separator after the thinking
block (Qwen3's ``</think>\n\n``), which the text recovery layer trims when it sees the block
(``providers.layers.block_whitespace``) but cannot once the block is gone, here or at the server
(vLLM's ``include_reasoning: false`` leaves ``\n\nIt is sunny.``). So the answer reads the same
with and without its reasoning, on every server.

``ReasoningOutput.SUMMARY`` needs no stage: no server here makes a summary, so the full text is
returned (the option's documented fallback).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from providers.abstractions.contents import AIContent, TextContent, TextReasoningContent

if TYPE_CHECKING:
    from providers.abstractions.chat_response import ChatResponse
    from providers.abstractions.response_update import ChatResponseUpdate
    from providers.abstractions.update_runs import UpdateRuns
    from providers.chat_completions.option_enforcement import Enforcement

__all__ = ["drop_reasoning_response", "drop_reasoning_runs"]


async def drop_reasoning_runs(runs: UpdateRuns, plan: Enforcement) -> UpdateRuns:
    """Each run with its updates' reasoning dropped, and each choice's opening whitespace. Per
    update: one ``plain_text`` test for the usual plain update (its kind says whether it is
    reasoning), a contents scan otherwise; a set lookup once the choice's text has begun."""
    begun: set[int] = set()
    async for run in runs:
        for update in run:
            _drop(update)
            if update.choice_index not in begun and _trim_opening(update):
                begun.add(update.choice_index)
        yield run


def drop_reasoning_response(response: ChatResponse, plan: Enforcement) -> ChatResponse:
    """``response`` with every message's reasoning contents dropped, and the whitespace that
    opened its text."""
    for message in response.messages:
        kept = [c for c in message.contents if not isinstance(c, TextReasoningContent)]
        message.contents = _trimmed(kept)[0]
    return response


def _trim_opening(update: ChatResponseUpdate) -> bool:
    """Drop the whitespace before the first text of a choice; ``True`` once text has begun."""
    if update.plain_text == "":
        return False
    contents, begun = _trimmed(update.contents)
    if contents != update.contents:
        update.contents = contents
        update.make_plain()
    return begun


def _trimmed(contents: list[AIContent]) -> tuple[list[AIContent], bool]:
    """``contents`` without the whitespace that opens their text, and whether text began."""
    for index, content in enumerate(contents):
        if not isinstance(content, TextContent):
            continue
        text = content.text.lstrip()
        if text == content.text:
            return contents, True
        rest = contents[index + 1 :]
        if text:
            return [*contents[:index], replace(content, text=text), *rest], True
        trimmed, begun = _trimmed(rest)
        return [*contents[:index], *trimmed], begun
    return contents, False


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

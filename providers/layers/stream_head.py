"""Reading a stream's head: what retry and failover hold back before releasing anything.

Retry and failover make the same promise: a stream may be started again (on the same backend or
another) only while the caller has seen no output, because a second start would repeat or mix
text the caller already has. Both therefore read a stream's *head*, the updates up to and
including the first substantive one, before handing any of it on, and both need the messages
to survive a second attempt. This module is that shared mechanism; the policies (when to try
again, and where) stay with their layers, each an async generator that reads the head with
``read_head``, then yields it and the rest of the stream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Final

from providers.abstractions.chat_client import ChatInput
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.errors import ResponseTooLargeError
from providers.abstractions.limits import DEFAULT_LIMITS
from providers.abstractions.messages import ChatMessage
from providers.abstractions.update_runs import UpdateRuns, close_stream
from providers.transport.output_watch import OutputWatch

__all__ = [
    "HELD_OUTPUT_LIMIT",
    "Head",
    "RunsHead",
    "carries_nothing",
    "read_head",
    "read_head_runs",
    "replayable",
]

HELD_OUTPUT_LIMIT: Final = 64
"""How many updates a head may hold, once the server writes output, before it ends anyway."""

Head = tuple[list[ChatResponseUpdate], bool]
"""A stream's head, and whether more may follow it."""
RunsHead = tuple[list[list[ChatResponseUpdate]], bool]
"""A stream's head as the runs that brought it (``update_runs``), and whether more may follow."""


async def read_head(
    stream: AsyncIterator[ChatResponseUpdate],
    max_held: int = DEFAULT_LIMITS.max_held_updates,
) -> Head:
    """Updates up to and including the one that ends the head, and whether more may follow.

    A substantive update ends it. The deltas of a tool call become a ``FunctionCallContent``
    only when the call is complete, and text recovery holds back the text inside a
    ``<tool_call>`` block, so a long call gives no substantive update until its end; holding
    all of it would keep every fragment (and its raw chunk) of the call in memory. So once more
    than ``HELD_OUTPUT_LIMIT`` updates have arrived and the server is writing output (the wire
    client says so through ``OutputWatch``), the head ends too: a failure in a short call is
    still retried whole, a long one's is not.

    An update that carries nothing (``carries_nothing``: an empty delta, a keepalive) before the
    server writes output is held only if the update held before it carries something: a run of
    them is held as its first. Once output has started, each is held and passed on: a tool
    call's fragments carry nothing yet, but each one's ``raw`` holds its part of the arguments.
    A server that sends a million empty chunks before its first token then costs one held
    update, and its answer reaches the caller (issue 32 item 10; it used to end in
    ``ResponseTooLargeError``). Updates that do carry something before the output starts
    (a role, usage, prefill progress in ``additional_properties``) are held up to ``max_held``
    (``Limits.max_held_updates``): past it the head fails with ``ResponseTooLargeError``, its
    partial response the updates held.

    On any exception the stream is closed before it propagates, so a caller that starts another
    attempt never leaves the abandoned one holding a connection.
    """
    held: list[ChatResponseUpdate] = []
    arrived = 0
    empty_held = False  # the last update held carries nothing
    try:
        with OutputWatch() as watch:
            async for update in stream:
                arrived += 1
                if update.is_substantive or (
                    arrived > HELD_OUTPUT_LIMIT and watch.output_started()
                ):
                    held.append(update)
                    return held, True
                if carries_nothing(update) and not watch.output_started():
                    if empty_held:
                        continue
                    empty_held = True
                else:
                    empty_held = False
                held.append(update)
                if len(held) >= max_held:
                    raise _too_many(held, max_held)
    except BaseException:
        await close_stream(stream)
        raise
    return held, False


async def read_head_runs(
    runs: UpdateRuns, max_held: int = DEFAULT_LIMITS.max_held_updates
) -> RunsHead:
    """``read_head`` over runs: the runs up to and including the one that ends the head (its
    updates after the one that ends it came in the same read, and are held with it). A run
    with updates to leave out (``carries_nothing``) is held as a copy without them."""
    held: list[list[ChatResponseUpdate]] = []
    arrived = count = 0  # updates that arrived, and that are held
    empty_held = False
    started = False  # the server writes output (asked only until it does: it then stays so)
    try:
        with OutputWatch() as watch:
            async for run in runs:
                kept: list[ChatResponseUpdate] | None = None  # the copy, once one is left out
                for position, update in enumerate(run):
                    arrived += 1
                    substantive = update.is_substantive
                    nothing = not substantive and carries_nothing(update)
                    if not started and (nothing or arrived > HELD_OUTPUT_LIMIT):
                        started = watch.output_started()
                    if substantive or (arrived > HELD_OUTPUT_LIMIT and started):
                        if kept is not None:
                            kept += run[position:]
                        held.append(run if kept is None else kept)
                        return held, True
                    if nothing and not started:
                        if empty_held:
                            if kept is None:
                                kept = run[:position]
                            continue
                        empty_held = True
                    else:
                        empty_held = False
                    if kept is not None:
                        kept.append(update)
                    count += 1
                    if count >= max_held:
                        done = run[: position + 1] if kept is None else kept
                        raise _too_many([u for r in [*held, done] for u in r], max_held)
                if kept is None:
                    held.append(run)
                elif kept:
                    held.append(kept)
    except BaseException:
        await close_stream(runs)
        raise
    return held, False


def carries_nothing(update: ChatResponseUpdate) -> bool:
    """No contents, role, finish reason or properties: an empty delta, a keepalive, a tool-call
    fragment's update (its text is in the wire client's accumulator). Only its ``raw`` says
    anything; before output starts, the next such update's says the same. A plain update (one
    text or nothing, no fields) answers from its text: reading ``contents`` would make it a
    list and so take it off every later layer's fast path."""
    text = update.plain_text
    if text is not None:
        return not text
    return (
        update.role is None
        and update.finish_reason is None
        and not update.additional_properties
        and not update.contents
    )


def _too_many(held: list[ChatResponseUpdate], max_held: int) -> ResponseTooLargeError:
    return ResponseTooLargeError(
        f"{len(held)} updates that carry something arrived before the first token: past "
        f"limits.max_held_updates ({max_held})",
        limit="max_held_updates",
        partial_response=ChatResponse.from_updates(held),
    )


def replayable(messages: ChatInput) -> ChatInput:
    """A one-shot iterable of messages would be empty on the second attempt: keep a list."""
    if isinstance(messages, str | ChatMessage | list | tuple):
        return messages
    return list(messages)

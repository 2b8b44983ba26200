"""Holding a stream back until its output starts.

Retry and failover make the same promise: a stream may be started again (on the same backend or
another) only while the caller has seen no output, because a second start would repeat or mix
text the caller already has. Both therefore read a stream's *head*, the updates up to and
including the first substantive one, before releasing anything, and both need the messages to
survive a second attempt. This module is that shared mechanism; the policies stay with their
layers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from providers.chat_client import ChatInput
from providers.chat_response import ChatResponseUpdate
from providers.messages import ChatMessage

__all__ = ["close_stream", "mark_update", "read_head", "replayable"]


async def read_head(
    stream: AsyncIterator[ChatResponseUpdate],
) -> tuple[list[ChatResponseUpdate], bool]:
    """Updates up to and including the first substantive one, and whether more may follow.

    On any exception the stream is closed before it propagates, so a caller that starts another
    attempt never leaves the abandoned one holding a connection.
    """
    held: list[ChatResponseUpdate] = []
    try:
        async for update in stream:
            held.append(update)
            if update.is_substantive:
                return held, True
    except BaseException:
        await close_stream(stream)
        raise
    return held, False


def replayable(messages: ChatInput) -> ChatInput:
    """A one-shot iterable of messages would be empty on the second attempt: keep a list."""
    if isinstance(messages, str | ChatMessage | list | tuple):
        return messages
    return list(messages)


def mark_update(update: ChatResponseUpdate, key: str, value: object) -> None:
    """Set one ``additional_properties`` entry, creating the dict only when needed."""
    if update.additional_properties is None:
        update.additional_properties = {key: value}
    else:
        update.additional_properties[key] = value


async def close_stream(stream: AsyncIterator[ChatResponseUpdate] | None) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()

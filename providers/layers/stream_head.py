"""Holding a stream back until its output starts.

Retry and failover make the same promise: a stream may be started again (on the same backend or
another) only while the caller has seen no output, because a second start would repeat or mix
text the caller already has. Both therefore read a stream's *head*, the updates up to and
including the first substantive one, before releasing anything, and both need the messages to
survive a second attempt. This module is that shared mechanism; the policies stay with their
layers.

``HeldStream`` is the stream both return, subclassed with each layer's policy: it opens the head
(the layer's attempts), releases it, and then hands its stages to the stream it opened, so past
the head the layer adds no generator level to any update (``providers.transport.update_stream``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from providers.abstractions.chat_client import ChatInput
from providers.abstractions.chat_response import ChatResponseUpdate
from providers.abstractions.messages import ChatMessage
from providers.abstractions.options import ChatOptions
from providers.transport.update_stream import StreamStage, StreamStages, UpdateStream, head_ends

__all__ = ["Head", "HeldStream", "close_stream", "mark_update", "read_head", "replayable"]

Head = tuple[list[ChatResponseUpdate], bool]
"""A stream's head, and whether more may follow it."""


class HeldStream(UpdateStream):
    """A stream that is opened, and its head read, on the caller's first ``anext``.

    A layer subclasses it with its policy: ``_open`` starts the first attempt, ``_reopen``
    decides what follows a failed one (another attempt, another backend, or the error), and
    ``_opened`` marks the head and may give a stage of the layer's own for the rest of the
    stream. The first attempt's head is read here, inline: while the server prepares its
    answer the layer holds one coroutine, not a stack of them, however many streams wait.

    The stages added to this stream (by the layers outside) see the head as it is released,
    then move, with the layer's own stage innermost among them, to the opened stream: from
    there on, ``anext`` is that stream's own. A failure while opening reaches the stages here.
    """

    __slots__ = ("_head", "_held_updating", "_released", "messages", "options")

    def __init__(self, messages: ChatInput, options: ChatOptions | None) -> None:
        super().__init__(None, StreamStages())
        self.messages = replayable(messages)
        self.options = options
        # Set once the head is read; a shared empty tuple until then (and again once it is
        # released): nothing per stream while its server prepares the answer.
        self._head: Sequence[ChatResponseUpdate] = ()
        self._released = 0
        self._held_updating: Sequence[StreamStage] = ()

    # ---- the layer's policy ----------------------------------------------------------------

    def _open(self) -> AsyncIterator[ChatResponseUpdate]:
        """The first attempt's stream."""
        raise NotImplementedError

    async def _reopen(
        self, failed: BaseException
    ) -> tuple[AsyncIterator[ChatResponseUpdate] | None, Head]:
        """After the first attempt failed with ``failed`` (its stream already closed): the
        stream settled on instead and its head, read with ``read_head``; or raise."""
        raise failed

    def _opened(self, head: list[ChatResponseUpdate]) -> StreamStage | None:
        """Called once the head is read; the layer's stage for the rest of the stream."""
        return None

    # ---- opening and releasing -------------------------------------------------------------

    async def _first(self) -> ChatResponseUpdate:
        own = self.stages
        stream: AsyncIterator[ChatResponseUpdate] | None = None
        head: list[ChatResponseUpdate] = []
        more = False
        try:
            with own.started():
                failed: BaseException | None = None
                try:  # the first attempt: `read_head`, inline
                    stream = self._open()
                    async for update in stream:
                        head.append(update)
                        if head_ends(stream, update, len(head)):
                            more = True
                            break
                except BaseException as exc:
                    failed = exc
                    try:
                        await close_stream(stream)
                    except BaseException as close_error:  # what `read_head` would raise
                        failed = close_error
                if failed is not None:
                    stream, (head, more) = await self._reopen(failed)
                    failed = None
                stage = self._opened(head)
        except BaseException as exc:
            own.fail(exc)
            raise
        moved = StreamStages()
        if stage is not None:
            moved.add(stage)
        moved.adopt(own)
        if not more:  # the stream ended within its head: the rest is a replay of the head
            await close_stream(stream)
            replay = self._iterator = UpdateStream.over(_listed(head))
            replay.stages.adopt(moved)
            self.stages = replay.stages
            self._next = replay.__anext__
            return await replay.__anext__()
        assert stream is not None
        inner = stream if isinstance(stream, UpdateStream) else UpdateStream.over(stream)
        inner.stages.adopt(moved)
        self.stages = inner.stages
        self._iterator = inner
        self._head = head
        self._held_updating = moved.updating
        return self._release()

    def _release(self) -> ChatResponseUpdate:
        head = self._head
        update = head[self._released]
        self._released += 1
        for stage in self._held_updating:
            stage.on_update(update)
        if self._released == len(head):
            inner = self._iterator
            assert isinstance(inner, UpdateStream)
            # Once the inner stream's `anext` is its producer's own, calling that directly
            # saves a call per update for the rest of the stream.
            self._next = inner._next if inner.settled else inner.__anext__
            self._head = ()
            self._held_updating = ()
        else:
            self._next = self._next_held
        return update

    async def _next_held(self) -> ChatResponseUpdate:
        return self._release()


async def _listed(head: list[ChatResponseUpdate]) -> AsyncIterator[ChatResponseUpdate]:
    for update in head:
        yield update


async def read_head(stream: AsyncIterator[ChatResponseUpdate]) -> Head:
    """Updates up to and including the one that ends the head (``head_ends``: the first
    substantive one, or a long tool call's), and whether more may follow.

    On any exception the stream is closed before it propagates, so a caller that starts another
    attempt never leaves the abandoned one holding a connection.
    """
    held: list[ChatResponseUpdate] = []
    try:
        async for update in stream:
            held.append(update)
            if head_ends(stream, update, len(held)):
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

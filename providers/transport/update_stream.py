"""``UpdateStream``: one stream of updates that every layer works on, instead of wrapping.

A delegating layer written as an async generator over its inner stream costs every update one
more generator resumption, and every open stream one more suspended frame. Measured on the
benchmark machine, each such level added about a tenth of a minimal loop's per-chunk cost and,
across 200 open streams, 70-140 KiB (benchmarks/README.md, "Where the full pipeline's cost
goes"). The layers' own per-update work is far smaller than that.

So a layer that only looks at or edits updates (text recovery, telemetry, a retry's error
annotation) adds a ``StreamStage`` to the stream it got from below and hands the same stream
on. The stages run synchronously, in order from the innermost layer outwards, inside the one
generator that produces the updates: the wire client's own, or ``over()``'s for a stream from a
client that knows nothing of stages. The order of events each stage sees is the one a stack of
generators would give it:

- ``on_start`` once, on the caller's first ``anext``, before the request is sent; a context it
  returns is current while that first update is awaited (an OpenTelemetry span);
- ``on_update`` for every update, after the stages inside it, before the caller gets it;
- ``on_end`` when the stream ends normally; the updates it returns pass the stages outside it;
- ``on_failure`` when an exception ends the stream instead, and also for ``GeneratorExit`` or
  ``CancelledError`` when the caller stops early. A stage whose ``on_end`` already ran gets no
  ``on_failure``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
from contextlib import AbstractContextManager, ExitStack, nullcontext
from typing import Any

from providers.abstractions.chat_response import ChatResponseUpdate
from providers.transport.timeouts import OutputProgress

__all__ = [
    "HELD_OUTPUT_LIMIT",
    "StreamStage",
    "StreamStages",
    "UpdateStream",
    "as_update_stream",
    "head_ends",
]

_NO_CONTEXT: AbstractContextManager[Any] = nullcontext()


class StreamStage:
    """What a layer does to a stream it does not wrap; override the hooks it needs.

    Hooks are synchronous and run on the stream's hot path, so they should be quick; editing an
    update in place is the norm. A stage that does not override ``on_update`` costs its stream
    nothing per update. The stream calls ``stage.on_update`` itself rather than keeping a bound
    method per stage: 64 bytes less for each stream waiting for its server, at no cost per call.
    """

    __slots__ = ()

    def on_start(self) -> AbstractContextManager[Any] | None:
        return None

    def on_update(self, update: ChatResponseUpdate) -> None:
        pass

    def on_end(self) -> Iterable[ChatResponseUpdate]:
        return ()

    def on_failure(self, error: BaseException) -> None:
        pass


def _looks_at_updates(stage: StreamStage) -> bool:
    return type(stage).on_update is not StreamStage.on_update


class StreamStages:
    """The stages of one stream, innermost first, and how far its start and end have got.

    The generator producing the stream holds this object (not the ``UpdateStream``, which holds
    the generator: no reference cycle). ``updating`` are the stages whose ``on_update`` it calls
    for each update; it reads the attribute per update, since stages may be added after the
    start (a retry's head).
    Tuples, not lists: a stream gets two or three stages once, and every stream waiting for its
    server would hold two lists and their item arrays (176 bytes) where two tuples take 112.
    """

    __slots__ = ("_ended", "_stages", "_started", "progress", "updating")

    def __init__(self) -> None:
        self._stages: tuple[StreamStage, ...] = ()
        self.updating: tuple[StreamStage, ...] = ()
        self._started = 0
        self._ended = 0
        self.progress: OutputProgress | None = None
        """Set by a producer that can tell: has the server started writing output, even output
        no update carries yet (a tool call being assembled, text a stage holds back)?"""

    def add(self, stage: StreamStage) -> None:
        self._stages += (stage,)
        if _looks_at_updates(stage):
            self.updating += (stage,)

    def adopt(self, other: StreamStages) -> None:
        """Take over ``other``'s stages, already started, as the outermost ones."""
        for stage in other._stages:
            self.add(stage)
        self._started = len(self._stages)

    def started(self) -> AbstractContextManager[Any]:
        """Run ``on_start`` of the stages not yet started; their contexts, entered outermost
        first, as one context."""
        stages = self._stages
        begin, self._started = self._started, len(stages)
        contexts = [
            context
            for stage in reversed(stages[begin:])
            if (context := stage.on_start()) is not None
        ]
        if not contexts:
            return _NO_CONTEXT
        if len(contexts) == 1:
            return contexts[0]
        stack = ExitStack()
        for context in contexts:
            stack.enter_context(context)
        return stack

    def apply(self, update: ChatResponseUpdate) -> ChatResponseUpdate:
        """Run every stage's ``on_update`` (for updates produced outside the generator)."""
        for stage in self.updating:
            stage.on_update(update)
        return update

    def end(self) -> Iterator[ChatResponseUpdate]:
        """``on_end`` of each stage in turn; what one returns passes the stages outside it."""
        stages = self._stages
        while self._ended < len(stages):
            stage = stages[self._ended]
            self._ended += 1
            tail = stage.on_end()
            if tail:
                later = [s for s in stages[self._ended :] if _looks_at_updates(s)]
                for update in tail:
                    for outer in later:
                        outer.on_update(update)
                    yield update

    def fail(self, error: BaseException) -> None:
        """``on_failure`` of every stage not yet ended (once: a second call does nothing)."""
        stages = self._stages
        begin, self._ended = self._ended, len(stages)
        for stage in stages[begin:]:
            stage.on_failure(error)


class UpdateStream(AsyncIterator[ChatResponseUpdate]):
    """The async iterator a layer returns, with the stages the layers above added to it.

    ``anext`` hands on the producing iterator's own awaitable: no coroutine of its own per
    update. The first one runs the stages' ``on_start``.
    """

    __slots__ = ("_iterator", "_next", "stages")

    def __init__(
        self, iterator: AsyncIterator[ChatResponseUpdate] | None, stages: StreamStages
    ) -> None:
        self._iterator: AsyncIterator[ChatResponseUpdate] | None = iterator
        self.stages = stages
        self._next: Callable[[], Awaitable[ChatResponseUpdate]] = self._first

    @staticmethod
    def over(source: AsyncIterator[ChatResponseUpdate]) -> UpdateStream:
        """A stream of any async iterator's updates, with the stages run by a generator here."""
        return _StreamOver(source)

    def add_stage(self, stage: StreamStage) -> UpdateStream:
        self.stages.add(stage)
        return self

    @property
    def settled(self) -> bool:
        """``anext`` now goes straight to the producer (no first-update or held-head step)."""
        return getattr(self._next, "__self__", None) is not self

    def output_started(self) -> bool:
        """Has the server started writing output? ``False`` when the producer cannot tell."""
        progress = self.stages.progress
        return progress is not None and progress.has_token()

    def __aiter__(self) -> UpdateStream:
        return self

    def __anext__(self) -> Awaitable[ChatResponseUpdate]:
        return self._next()

    def _first(self) -> Awaitable[ChatResponseUpdate]:
        iterator = self._iterator
        assert iterator is not None
        self._next = iterator.__anext__
        context = self.stages.started()
        if context is _NO_CONTEXT:  # the usual case: no coroutine of ours while the server
            return iterator.__anext__()  # prepares its answer, however many streams wait
        return _awaited_within(context, iterator)

    async def aclose(self) -> None:
        """Close the producer; stages not yet ended see ``GeneratorExit``, as a caller's
        ``break`` gives a generator."""
        iterator = self._iterator
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()


class _StreamOver(UpdateStream):
    """``UpdateStream.over``: closing it closes ``source`` too, even if it was read from
    before the stream started (a retry reads a head, then hands the rest on)."""

    __slots__ = ("_source",)

    def __init__(self, source: AsyncIterator[ChatResponseUpdate]) -> None:
        stages = StreamStages()
        super().__init__(_staged(source, stages), stages)
        self._source = source

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            close = getattr(self._source, "aclose", None)
            if close is not None:
                await close()


async def _awaited_within(
    context: AbstractContextManager[Any], iterator: AsyncIterator[ChatResponseUpdate]
) -> ChatResponseUpdate:
    """The first update, awaited with ``context`` current (a span the stages started)."""
    with context:
        return await iterator.__anext__()


def as_update_stream(stream: AsyncIterator[ChatResponseUpdate]) -> UpdateStream:
    """``stream`` itself if it takes stages, else a stream over it that does."""
    if isinstance(stream, UpdateStream):
        return stream
    return UpdateStream.over(stream)


HELD_OUTPUT_LIMIT = 64
"""How many updates a layer may hold back, once the server writes output, before releasing."""


def head_ends(stream: object, update: ChatResponseUpdate, held: int) -> bool:
    """Does ``update``, the ``held``-th update read from ``stream``, end a retry's head?

    A substantive update does. The deltas of a tool call become a ``FunctionCallContent`` only
    when the call is complete, and text recovery holds back the text inside a ``<tool_call>``
    block, so a long call gives no substantive update until its end; holding all of it would
    keep every fragment (and its raw chunk) of the call in memory. So once more than
    ``HELD_OUTPUT_LIMIT`` updates are held and the producer says the server is writing output
    (``UpdateStream.output_started``, the first-token budget's rule), the head ends too: a
    failure in a short call is still retried whole, a long one's is not. Updates before the
    output starts (prefill progress, keepalives) are held however many there are.
    """
    return update.is_substantive or (
        held > HELD_OUTPUT_LIMIT and isinstance(stream, UpdateStream) and stream.output_started()
    )


async def _staged(
    source: AsyncIterator[ChatResponseUpdate], stages: StreamStages
) -> AsyncIterator[ChatResponseUpdate]:
    try:
        async for update in source:
            for stage in stages.updating:
                stage.on_update(update)
            yield update
        for update in stages.end():
            yield update
    except BaseException as exc:
        stages.fail(exc)
        close = getattr(source, "aclose", None)
        if close is not None:
            await close()
        raise

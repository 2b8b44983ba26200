"""Runs: a stream's updates that arrived together, passed between layers as one list.

A pipeline of layers, each an async generator over the one inside it, resumes every layer once
per update: with telemetry, retry and text recovery over the wire client, four generator
resumptions for each token, and each layer's per-update work behind a method call. Yet the
wire client reads a network read's events at once (a read holds dozens of them, hundreds on
a fast server), so the updates arrive in runs anyway. The library's own layers therefore pass
runs: ``get_streaming_runs`` yields lists of updates, each layer works through a run in a plain
loop, and only the caller's end turns runs back into updates (``updates_of``), one generator
resumption per update for the whole pipeline.

``get_streaming_response`` stays the public contract of every client, and runs are an extra
that a client may offer beside it. A client that does not (a caller's own, another library's),
or whose ``get_streaming_response`` is overridden below the class that offers runs (a subclass
that edits updates its own way), is read one update per run (``runs_of``): its edits are never
bypassed.

One difference a caller can see: a layer handles a whole run before the first update of it
reaches the caller, so a caller that stops in the middle of a run has had the rest of it
handled (telemetry counted it) though it never read it. A run is what one network read
brought, so that is output the server had already sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, TypeAlias

from providers.abstractions.response_update import ChatResponseUpdate

if TYPE_CHECKING:
    from providers.abstractions.chat_client import ChatInput
    from providers.abstractions.options import ChatOptions

__all__ = ["UpdateRuns", "close_stream", "offers_runs", "runs_of", "updates_of"]

UpdateRuns: TypeAlias = AsyncIterator[list[ChatResponseUpdate]]

_OFFERS: dict[type, bool] = {}


def _definer(cls: type, name: str) -> type | None:
    """The class of ``cls``'s method resolution order whose own body defines ``name``."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass
    return None


def offers_runs(cls: type) -> bool:
    """Do instances of ``cls`` offer runs that stand for their ``get_streaming_response``?

    Only if ``get_streaming_runs`` is defined in the class that defines
    ``get_streaming_response``, or in one below it: a subclass that overrides the updates but
    not the runs would otherwise have its override skipped."""
    found = _OFFERS.get(cls)
    if found is None:
        runs = _definer(cls, "get_streaming_runs")
        updates = _definer(cls, "get_streaming_response")
        found = runs is not None and (updates is None or issubclass(runs, updates))
        _OFFERS[cls] = found
    return found


def runs_of(client: Any, messages: ChatInput, options: ChatOptions | None) -> UpdateRuns:
    """``client``'s stream as runs: its own when it offers them (``offers_runs``), else each
    update of its ``get_streaming_response`` as a run of one."""
    if offers_runs(type(client)):
        runs: UpdateRuns = client.get_streaming_runs(messages, options)
        return runs
    return _singles(client.get_streaming_response(messages, options))


async def _singles(stream: AsyncIterator[ChatResponseUpdate]) -> UpdateRuns:
    try:
        async for update in stream:
            yield [update]
    finally:
        await close_stream(stream)


async def updates_of(runs: UpdateRuns) -> AsyncIterator[ChatResponseUpdate]:
    """The updates of ``runs``, one by one: what ``get_streaming_response`` returns.

    Hot path: the one generator level a pipeline resumes per update. Closing it (a caller's
    ``break``) closes the runs, and so every layer down to the connection."""
    try:
        async for run in runs:
            for update in run:
                yield update
    finally:
        await close_stream(runs)


async def close_stream(stream: AsyncIterator[Any] | None) -> None:
    """Close ``stream`` if it can be closed: an async generator can, a bare ``AsyncIterator``
    (a caller's own client may return one) need not."""
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()

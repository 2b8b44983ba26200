"""Runs: a stream's updates that arrived together, passed between the library's layers as a list.

A pipeline of layers, each an async generator over the one inside it, resumes every layer once
per update: with telemetry, retry and text recovery over the wire client, four generator
resumptions for each token, and each layer's per-update work behind a method call. Yet the
wire client reads a network read's events at once (a read holds dozens of them, hundreds on
a fast server), so the updates arrive in runs anyway. The library's own layers therefore pass
runs to each other: a private ``_streaming_runs`` yields lists of updates, each layer works
through a run in a plain loop, and only the caller's end turns runs back into updates
(``updates_of``), one generator resumption per update for the whole pipeline.

This is a private channel, derived from the one public contract. ``get_streaming_response`` is
the stream of every client, and the only streaming method a layer author overrides. Runs are
asked of a client only where the library itself vouches for them (``offers_runs``): its class's
``_streaming_runs`` is the library's own, and no class below that one overrides
``get_streaming_response``. Any other client (a caller's own, another library's, a subclass of
one of ours that edits updates its own way) is read one update per run (``runs_of``): its
``get_streaming_response`` is never bypassed.

One difference a caller can see: a layer handles a whole run before the first update of it
reaches the caller, so a caller that stops in the middle of a run has had the rest of it
handled (telemetry counted it) though it never read it. A run is what one network read
brought, so that is output the server had already sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from providers.abstractions.contents import UsageContent
from providers.abstractions.response_update import ChatResponseUpdate

if TYPE_CHECKING:
    from providers.abstractions.chat_client import ChatInput
    from providers.abstractions.chat_response import ChatResponse
    from providers.abstractions.options import ChatOptions

__all__ = [
    "UpdateRuns",
    "close_stream",
    "offers_runs",
    "response_updates",
    "runs_of",
    "singles",
    "updates_of",
]

UpdateRuns: TypeAlias = AsyncIterator[list[ChatResponseUpdate]]

RUNS_METHOD: Final = "_streaming_runs"
"""The private method a library class implements to offer runs (never part of the contract)."""

_LIBRARY: Final = ("providers.", "telemetry.")
"""Packages whose classes may offer runs: the library's own, which keep the two in step."""

_OFFERS: dict[type, bool] = {}


def _definer(cls: type, name: str) -> type | None:
    """The class of ``cls``'s method resolution order whose own body defines ``name``."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass
    return None


def offers_runs(cls: type) -> bool:
    """May the library read instances of ``cls`` as runs instead of update by update?

    Only when ``_streaming_runs`` is defined by one of the library's own classes, and in the
    class that defines ``get_streaming_response`` or one below it: a subclass that overrides
    the updates but not the runs would otherwise have its override skipped, and a class outside
    the library that happens to define a method of that name is not trusted with it."""
    found = _OFFERS.get(cls)
    if found is None:
        runs = _definer(cls, RUNS_METHOD)
        updates = _definer(cls, "get_streaming_response")
        found = (
            runs is not None
            and runs.__module__.startswith(_LIBRARY)
            and (updates is None or issubclass(runs, updates))
        )
        _OFFERS[cls] = found
    return found


def runs_of(client: Any, messages: ChatInput, options: ChatOptions | None) -> UpdateRuns:
    """``client``'s stream as runs: its own when it offers them (``offers_runs``), else each
    update of its ``get_streaming_response`` as a run of one."""
    if offers_runs(type(client)):
        runs: UpdateRuns = client._streaming_runs(messages, options)
        return runs
    return singles(client.get_streaming_response(messages, options))


async def singles(stream: AsyncIterator[ChatResponseUpdate]) -> UpdateRuns:
    """Each update of ``stream`` as a run of one (closing the runs closes ``stream``)."""
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


def response_updates(response: ChatResponse) -> list[ChatResponseUpdate]:
    """A whole ``response`` as the stream ``ChatResponse.from_updates`` turns back into it (MEAI's
    ``ToChatResponseUpdates``): one update per message, the response's ids and finish reason on
    each, its usage on the last. For a client that has only a whole answer to stream."""
    updates = [
        ChatResponseUpdate(
            list(message.contents),
            message.role,
            response.finish_reason,
            response.response_id,
            response.model_id,
            response.created_at,
            index,
            dict(response.additional_properties),
            response.raw,
        )
        for index, message in enumerate(response.messages)
    ]
    if updates and response.usage is not None:
        updates[-1].contents.append(UsageContent(response.usage))
    return updates

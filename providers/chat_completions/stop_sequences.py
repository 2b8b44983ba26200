"""Stop sequences applied to the answer's text here, where the server would apply them to the
reasoning too.

llama.cpp, vLLM and SGLang match ``stop`` strings on everything the model generates, thinking
included (research-33 §1-3; vLLM #52393, #14170): a stop string the model happens to write while
it thinks ends the answer there, the answer comes back empty, and ``</think>`` may leak into
the text. So where the backend row says so (``stop_in_reasoning``) and the model may think (its
family thinks, ``capabilities.family_table``, and the request did not switch thinking off), the
request goes out without ``stop`` (``stops_applied_here``, read by the request builder) and the
stages below apply the sequences to the answer's text only: never inside reasoning content.

Streamed (``stop_sequence_runs``): a stop string may arrive split over several updates, so the
tail of the text that could still begin one (at most ``max(len(stop)) - 1`` characters) is held
back until the next text shows whether it does; it is passed on as soon as a non-text content,
a finish reason or the end of the stream comes. At the first match the text is cut before the
stop string, that update gets finish reason ``stop`` and ``additional_properties
["stop_sequence"]`` (the key the normaliser gives vLLM's ``stop_reason`` and SGLang's
``matched_stop``), and the stream ends there: the server's connection is closed, nothing more
is read (with ``n > 1``, the first choice to stop ends them all). Whole answers
(``stop_sequence_response``) are cut the same way. Each cut emits ``REQUEST_OPTION_ENFORCED``.

Elsewhere ``stop`` is sent as before and the server applies it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.contents import AIContent, TextContent, UsageContent
from providers.abstractions.event_names import REQUEST_OPTION_ENFORCED
from providers.abstractions.open_values import ChatFinishReason
from providers.abstractions.reasoning_options import ReasoningEffort
from providers.abstractions.update_runs import UpdateRuns, close_stream

if TYPE_CHECKING:
    from providers.abstractions.options import ChatOptions
    from providers.backends import BackendProfile
    from providers.chat_completions.option_enforcement import Enforcement

__all__ = [
    "STOP_SEQUENCE",
    "StopMatcher",
    "stop_sequence_response",
    "stop_sequence_runs",
    "stops_applied_here",
]

STOP_SEQUENCE: Final = "stop_sequence"
"""``additional_properties`` key: the stop string that ended the answer (as the normaliser
records vLLM's ``stop_reason`` and SGLang's ``matched_stop``)."""

_OPTION: Final = "stop_sequences"


def stops_applied_here(
    options: ChatOptions, profile: BackendProfile, family: str | None
) -> tuple[str, ...]:
    """The stop sequences this client applies instead of sending them: those of ``options``
    when ``profile``'s server applies stop strings inside reasoning and the model may think;
    ``()`` when ``stop`` is sent as usual."""
    stops = options.stop_sequences
    if not stops or not profile.stop_in_reasoning:
        return ()
    effort = options.reasoning.effort if options.reasoning is not None else None
    if effort == ReasoningEffort.NONE or not _may_think(family, options.model_id, effort):
        return ()
    return tuple(stop for stop in stops if stop)


def _may_think(family: str | None, model_id: str | None, effort: ReasoningEffort | None) -> bool:
    """May this request's model think (the family's row in the reasoning table, named or read
    from the model id)? A switchable family thinks by its template's default unless an effort
    was asked; an unknown family: no, and ``stop`` is sent as usual."""
    # deferred: the reasoning table, for requests with stop sequences only (cold start)
    from capabilities.reasoning_families import reasoning_family_for, reasoning_family_named

    row = reasoning_family_named(family) or reasoning_family_for(model_id)
    if row is None or row.mode == "never":
        return False
    if row.mode == "switch":
        return effort is not None or row.thinks_by_default
    return True


class StopMatcher:
    """The first stop string in a text that arrives in pieces: ``feed`` returns the text that
    can be passed on and the match, if one completed; ``flush`` the text held back."""

    __slots__ = ("_held", "_stops", "firsts")

    def __init__(self, stops: tuple[str, ...]) -> None:
        self._stops = stops
        self._held = ""
        self.firsts = frozenset(stop[0] for stop in stops)
        """The stops' first characters: a text without any of them needs no search."""

    def feed(self, text: str) -> tuple[str, str | None]:
        """The text before the first stop string completed (and that string), or the text
        safe to pass on (and ``None``), the rest being held."""
        text = self._held + text
        best: tuple[int, int, str] | None = None
        for stop in self._stops:
            at = text.find(stop)
            # The stop that completes first is the one a server would have stopped on.
            if at != -1 and (best is None or (at + len(stop), at) < best[:2]):
                best = (at + len(stop), at, stop)
        if best is not None:
            self._held = ""
            return text[: best[1]], best[2]
        keep = self._could_begin(text)
        self._held = text[len(text) - keep :] if keep else ""
        return text[: len(text) - keep], None

    def _could_begin(self, text: str) -> int:
        """The length of the longest end of ``text`` that begins a stop string."""
        for size in range(min(len(text), max(map(len, self._stops)) - 1), 0, -1):
            tail = text[-size:]
            if any(stop.startswith(tail) for stop in self._stops):
                return size
        return 0

    @property
    def held(self) -> str:
        """The text held back: it may begin a stop string."""
        return self._held

    def flush(self) -> str:
        held, self._held = self._held, ""
        return held


def _report(backend: str, stop: str) -> None:
    # deferred: structlog, ~25 ms of cold import, only when a stop string cut the answer
    from providers.abstractions.logs import get_logger

    get_logger(__name__).warning(
        REQUEST_OPTION_ENFORCED, option=_OPTION, backend=backend, stop_sequence=stop
    )


def _stopped(update: ChatResponseUpdate, contents: list[AIContent], stop: str) -> None:
    """``update`` as the last of the answer: ``contents``, finish reason ``stop``, the match."""
    update.contents = contents
    update.finish_reason = ChatFinishReason.STOP
    update.additional_properties = {**(update.additional_properties or {}), STOP_SEQUENCE: stop}


def _may_begin(text: str, matcher: StopMatcher) -> bool:
    """Could ``text`` hold a stop string or end with the start of one? (``False`` for most
    text: none of the stops' first characters in it.)"""
    return any(first in text for first in matcher.firsts)


def _cut(
    update: ChatResponseUpdate, matchers: dict[int, StopMatcher], stops: tuple[str, ...]
) -> str | None:
    """Apply the stop strings to ``update`` in place; the stop string if one ended it."""
    matcher = matchers.get(update.choice_index)
    if matcher is None:
        matcher = matchers[update.choice_index] = StopMatcher(stops)
    plain = update.plain_text
    if plain is not None:
        if not plain:
            return None
        if update.head.kind is not TextContent:
            if matcher.held:  # plain reasoning: the held text goes out before it
                update.contents = [TextContent(matcher.flush()), *update.contents]
            return None
        if not matcher.held and not _may_begin(plain, matcher):
            return None  # (the usual text: passed on as it is)
    contents: list[AIContent] = []
    whole = update.contents
    for position, content in enumerate(whole):
        if type(content) is TextContent:
            text, stop = matcher.feed(content.text)
            if text:
                contents.append(TextContent(text))
            if stop is not None:
                contents.extend(c for c in whole[position + 1 :] if type(c) is UsageContent)
                _stopped(update, contents, stop)
                return stop
            continue
        if type(content) is not UsageContent:
            held = matcher.flush()  # (a reasoning or a call comes between: text is not joined)
            if held:
                contents.append(TextContent(held))
        contents.append(content)
    if update.finish_reason is not None:
        held = matcher.flush()
        if held:
            contents.append(TextContent(held))
    update.contents = contents
    update.make_plain()
    return None


async def stop_sequence_runs(runs: UpdateRuns, plan: Enforcement) -> UpdateRuns:
    """``runs`` cut at the first stop string in the text; the stream ends there."""
    stops = plan.stop_sequences
    matchers: dict[int, StopMatcher] = {}
    last: ChatResponseUpdate | None = None
    try:
        async for run in runs:
            for position, update in enumerate(run):
                stop = _cut(update, matchers, stops)
                if stop is not None:
                    _report(plan.backend, stop)  # (first: the caller may stop reading here)
                    yield run[: position + 1]
                    return
                last = update
            yield run
        rest = [
            ChatResponseUpdate(
                [TextContent(held)],
                choice_index=index,
                response_id=last.response_id if last is not None else None,
                model_id=last.model_id if last is not None else None,
                created_at=last.created_at if last is not None else None,
            )
            for index, matcher in matchers.items()
            if (held := matcher.flush())
        ]
        if rest:
            yield rest
    finally:
        await close_stream(runs)


def stop_sequence_response(response: ChatResponse, plan: Enforcement) -> ChatResponse:
    """``response`` with each message's text cut at its first stop string (reasoning and
    what came before the cut kept; what came after it dropped, as a server would never have
    generated it). Adjacent texts are one text; a reasoning or a call between two is not."""
    matched: str | None = None
    for message in response.messages:
        contents: list[AIContent] = []
        texts: list[str] = []
        stop = None
        for content in message.contents:
            if type(content) is TextContent:
                texts.append(content.text)
                continue
            stop = _text_until_stop(texts, contents, plan.stop_sequences)
            if stop is not None:
                break
            contents.append(content)
        else:
            stop = _text_until_stop(texts, contents, plan.stop_sequences)
        message.contents = contents
        matched = matched or stop
    if matched is not None:
        response.finish_reason = ChatFinishReason.STOP
        response.additional_properties[STOP_SEQUENCE] = matched
        _report(plan.backend, matched)
    return response


def _text_until_stop(
    texts: list[str], contents: list[AIContent], stops: tuple[str, ...]
) -> str | None:
    """Append ``texts``, joined and cut at the first stop string, to ``contents``; empty
    ``texts``; the stop string, if one was found."""
    if not texts:
        return None
    matcher = StopMatcher(stops)
    text, stop = matcher.feed("".join(texts))
    texts.clear()
    if stop is None:
        text += matcher.flush()
    if text:
        contents.append(TextContent(text))
    return stop

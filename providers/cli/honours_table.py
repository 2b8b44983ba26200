"""The honours table: what each backend does with each request option, found by exercising the
request builders and the enforcement planner, never written down by hand.

For one option sample (``providers.cli.honours_samples``), one backend row of
``providers.backends.PROFILES`` and one model family, the verdict is what the library itself
would do:

* the request builder raises ``UnsupportedOptionError`` → ``refused``, with its reason;
* otherwise the body differs from the same request without the option: those keys, as dotted
  paths (``chat_template_kwargs.enable_thinking=false``), are the wire keys → ``honoured``;
* ``enforcement_for`` plans something for the option that it did not plan without it →
  ``enforced here`` (with wire keys too: sent, and checked here);
* none of these → ``not honoured``: the option would be dropped without a word, which the rule
  forbids, so the table shows it (``tests/unit/providers/cli/test_honours_table.py``).

Because nothing here knows how an option is mapped, a mapping that changes changes the table,
the options page of the docs (``providers.cli.honours``) and ``oaicompat check``'s section with
it. The Responses API gets rows too, from its own request builder.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Iterator, Mapping
from typing import Any, TypeGuard

from capabilities.option_verdicts import OptionVerdict
from capabilities.reasoning_families import reasoning_family_named
from providers.abstractions.errors import UnsupportedOptionError
from providers.abstractions.messages import ChatMessage
from providers.abstractions.options import ChatOptions
from providers.abstractions.reasoning_options import ReasoningEffort
from providers.backends import PROFILES, Backend, BackendProfile
from providers.chat_completions.option_enforcement import Enforcement, enforcement_for
from providers.chat_completions.request import build_chat_request
from providers.cli.honours_samples import FAMILIES, NO_FAMILY, OPTION_SAMPLES, OptionSample
from providers.responses.items import messages_to_input
from providers.responses.request import build_responses_request

__all__ = [
    "RESPONSES",
    "honours_table",
    "option_verdict",
    "responses_takes_a_backend",
    "wire_changes",
]

RESPONSES = "responses"
"""The backend name of the Responses API rows (``/v1/responses``) while its request builder
takes no backend row: one row for every server then."""

# --- the request, built as the clients build it -------------------------------------------------

_MESSAGES = [ChatMessage.user("hello")]
_RESPONSES_PARAMETERS = frozenset(inspect.signature(build_responses_request).parameters)


def _chat_body(
    options: ChatOptions, profile: BackendProfile, family: str | None, stream: bool
) -> dict[str, Any]:
    return build_chat_request(
        _MESSAGES,
        options,
        model_id="m",
        stream=stream,
        profile=profile,
        family=family,
        policy="raise",
    )


def _responses_body(
    options: ChatOptions, profile: BackendProfile, family: str | None, stream: bool
) -> dict[str, Any]:
    """The Responses builder, given whichever of the backend row, the family and the policy its
    signature takes: when it learns one, the table follows without a change here."""
    offered: dict[str, Any] = {"profile": profile, "family": family, "policy": "raise"}
    extra = {name: value for name, value in offered.items() if name in _RESPONSES_PARAMETERS}
    instructions, items = messages_to_input(
        _MESSAGES, merge_system_messages=False, replay_reasoning=False
    )
    return build_responses_request(
        items, options, instructions=instructions, model_id="m", stream=stream, **extra
    )


def responses_takes_a_backend() -> bool:
    """Does the Responses builder take a backend row (then it gets one row per backend)?"""
    return "profile" in _RESPONSES_PARAMETERS


# --- one verdict ---------------------------------------------------------------------------------

_ENFORCED = {
    "response_format": "the answer is checked against it here",
    "single_tool_call": "calls after the first are dropped here",
    "stop_sequences": "the text is cut at the stop here",
    "drop_reasoning": "the reasoning text is left out here",
}
_OWN_FORMS = frozenset({"regex", "choice", "grammar"})


def option_verdict(
    sample: OptionSample, profile: BackendProfile, family: str | None, *, api: str = "chat"
) -> OptionVerdict:
    """The verdict for ``sample`` on ``profile``'s server with model ``family`` (``api``:
    ``chat`` or ``responses``); ``family`` is recorded as given."""
    build = _responses_body if api == "responses" else _chat_body
    backend = _row_name(profile, api)
    baseline = build(sample.baseline, profile, family, not sample.streaming_is_the_option)
    try:
        asked = build(sample.asked, profile, family, True)
    except UnsupportedOptionError as error:
        return OptionVerdict(sample.option, backend, "refused", "", family, error.reason)
    ignored = {"stream"} if sample.streaming_is_the_option else set()
    wire = ", ".join(wire_changes(baseline, asked, dict(sample.placeholders), ignored))
    enforced = _enforced(sample, profile, family)
    if _own_form_sent(asked):
        note = "sent in oaicompat's own response_format form, which no server reads"
        return OptionVerdict(sample.option, backend, "not honoured", wire, family, note)
    if enforced:
        note = "; ".join(_ENFORCED.get(name, f"{name} here") for name in enforced)
        return OptionVerdict(sample.option, backend, "enforced here", wire, family, note)
    if wire:
        return OptionVerdict(
            sample.option, backend, "honoured", wire, family, _droppable(asked, baseline, profile)
        )
    if sample.unsent:
        return OptionVerdict(sample.option, backend, "honoured", "", family, sample.unsent)
    if _thinks_anyway(sample, family):
        note = "not sent: the model always thinks, at the one level its template has"
        return OptionVerdict(sample.option, backend, "honoured", "", family, note)
    note = "neither sent, enforced here nor refused: dropped without a word"
    return OptionVerdict(sample.option, backend, "not honoured", "", family, note)


def _thinks_anyway(sample: OptionSample, family: str | None) -> bool:
    """A thinking effort asked of a family that always thinks (QwQ, R1) where nothing can be
    sent: the model thinks whatever the request says, which is what was asked; only a level
    cannot be chosen, and the family has none to choose from (its table row says so)."""
    effort = sample.asked.reasoning.effort if sample.asked.reasoning is not None else None
    if effort is None or effort == ReasoningEffort.NONE or family is None:
        return False
    row = reasoning_family_named(family)
    return row is not None and row.mode == "always"


def _droppable(
    asked: Mapping[str, Any], baseline: Mapping[str, Any], profile: BackendProfile
) -> str:
    """The note for a key the option adds that the row lets the client drop on a refusal."""
    added = [key for key in profile.droppable_keys if key in asked and key not in baseline]
    if not added:
        return ""
    return (
        f"{', '.join(added)} is left out and the request sent once more when the server "
        "answers 400/422 naming it"
    )


def _row_name(profile: BackendProfile, api: str) -> str:
    if api != "responses":
        return profile.name
    return f"{RESPONSES}/{profile.name}" if responses_takes_a_backend() else RESPONSES


def _enforced(sample: OptionSample, profile: BackendProfile, family: str | None) -> list[str]:
    """The ``Enforcement`` fields the option's request plans and the baseline's does not."""
    empty = Enforcement(profile.name)
    asked = enforcement_for(sample.asked, profile, family=family) or empty
    baseline = enforcement_for(sample.baseline, profile, family=family) or empty
    return [
        spec.name
        for spec in dataclasses.fields(Enforcement)
        if spec.name != "backend" and getattr(asked, spec.name) != getattr(baseline, spec.name)
    ]


def _own_form_sent(body: Mapping[str, Any]) -> bool:
    """A ``regex`` / ``choice`` / ``grammar`` format written as ``response_format`` (its
    ``to_openai()``) or as the Responses API's ``text.format``: oaicompat's own spelling, which
    no server takes."""
    text = body.get("text")
    for written in (body.get("response_format"), text.get("format") if _is_map(text) else None):
        if _is_map(written) and written.get("type") in _OWN_FORMS:
            return True
    return False


def _is_map(value: Any) -> TypeGuard[Mapping[str, Any]]:
    return isinstance(value, Mapping)


# --- the body's difference, as dotted paths ----------------------------------------------------

_LONGEST_VALUE = 48


def wire_changes(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    placeholders: Mapping[str, Any] | None = None,
    ignored: set[str] | frozenset[str] = frozenset(),
) -> list[str]:
    """What ``after`` sends that ``before`` does not: ``path=value`` for a key added or
    changed (a new object is walked into), ``path (removed)`` for one left out. A value equal to
    one of ``placeholders`` is shown by its name."""
    return list(_changes(before, after, "", placeholders or {}, ignored))


def _changes(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    prefix: str,
    names: Mapping[str, Any],
    ignored: set[str] | frozenset[str],
) -> Iterator[str]:
    for key, value in after.items():
        if not prefix and key in ignored:
            continue
        path = f"{prefix}{key}"
        old = before.get(key, _ABSENT) if isinstance(before, Mapping) else _ABSENT
        if old == value:
            continue
        if isinstance(value, Mapping) and value and _shown(value, names) is None:
            yield from _changes(
                old if isinstance(old, Mapping) else {}, value, path + ".", names, ignored
            )
        else:
            yield f"{path}={_shown(value, names) or _value(value)}"
    for key in before:
        if key not in after and not (not prefix and key in ignored):
            yield f"{prefix}{key} (removed)"


_ABSENT = object()


def _shown(value: Any, names: Mapping[str, Any]) -> str | None:
    return next((name for name, payload in names.items() if payload == value), None)


def _value(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    if len(text) <= _LONGEST_VALUE:
        return text
    if isinstance(value, str):
        return text[: _LONGEST_VALUE - 2] + '…"'
    return "[…]" if isinstance(value, list) else "{…}"


# --- the whole table -----------------------------------------------------------------------------


def _columns() -> Iterator[tuple[str, BackendProfile]]:
    for profile in PROFILES.values():
        yield "chat", profile
    if responses_takes_a_backend():
        for profile in PROFILES.values():
            yield "responses", profile
    else:
        yield "responses", PROFILES[Backend.GENERIC]


def honours_table(
    samples: tuple[OptionSample, ...] = OPTION_SAMPLES,
    families: tuple[str | None, ...] = FAMILIES,
) -> list[OptionVerdict]:
    """Every sample, backend (chat, then Responses) and family, one row per backend where the
    verdict is the same for every family (``family`` ``None``), one per family otherwise (the
    row for no family given then named ``NO_FAMILY``)."""
    rows: list[OptionVerdict] = []
    for sample in samples:
        for api, profile in _columns():
            cells = [option_verdict(sample, profile, family, api=api) for family in families]
            if len({(c.verdict, c.wire, c.note) for c in cells}) == 1:
                rows.append(dataclasses.replace(cells[0], family=None))
                continue
            rows.extend(dataclasses.replace(c, family=c.family or NO_FAMILY) for c in cells)
    return rows

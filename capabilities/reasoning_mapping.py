"""``ChatOptions.reasoning`` in the body keys of one backend and one model family, or refused.

Two tables decide, and code tests neither's names: the backend's row says which levers the
server passes on (``template_kwargs``: ``chat_template_kwargs`` reaches the template;
``effort_field``: a top-level ``reasoning_effort``; ``include_reasoning_field``: a key that
leaves reasoning out of the answer), and the family's row (``capabilities.reasoning_families``)
says which lever the model's template reads and what it can do:

* a family that always thinks (QwQ, R1, Qwen3-Thinking-2507) takes any effort but ``NONE``,
  which is refused ("cannot stop thinking"); a level is sent as for an unknown family where
  the server takes it (llama.cpp's copies of the QwQ and R1 templates close the think block
  without ``enable_thinking``), and nothing elsewhere: the model thinks anyway;
* a family that never thinks (Qwen3-Instruct-2507, Qwen3-Coder, Granite 4) takes ``NONE``
  (nothing to send) and refuses a level;
* an on/off family gets its template switch, ``False`` for ``NONE`` and ``True`` for every
  other level (it has no levels), where the server passes ``chat_template_kwargs``;
* gpt-oss gets its effort word (``EXTRA_HIGH`` becomes ``high``, its highest) and refuses
  ``NONE``: its template has no off switch (vLLM and SGLang answer 400 to ``"none"``, llama.cpp
  silently reasons at ``medium``);
* a family the table does not know gets the portable form where the server passes template
  kwargs: ``enable_thinking`` and ``thinking`` together (every switch the known templates read;
  a template ignores the one it does not know), on or off; no effort word, since gpt-oss answers
  400 to ``"none"``. A server with an effort key but no template kwargs (OpenAI) gets the effort
  word in OpenAI's spelling.

``ReasoningOutput.NONE`` adds the backend's ``include_reasoning_field`` (vLLM) and is enforced on
the answer in any case (``providers.chat_completions.reasoning_output``); ``SUMMARY`` and
``FULL`` send nothing: no server here makes summaries, so ``SUMMARY`` returns the full text.

A refusal is returned, not raised: the request builder settles it with the client's
``unsupported_options`` policy (``capabilities.option_verdicts.settle``).
"""

from __future__ import annotations

from typing import Any, Literal

from capabilities.option_verdicts import OptionVerdict, refusal
from capabilities.reasoning_families import (
    REASONING_FAMILIES,
    ReasoningFamily,
    reasoning_family_named,
)
from providers.abstractions.errors import UnsupportedOptionError
from providers.abstractions.reasoning_options import (
    ReasoningEffort,
    ReasoningOptions,
    ReasoningOutput,
)
from providers.backends import PROFILES, BackendProfile

__all__ = ["EFFORT_OPTION", "OUTPUT_OPTION", "reasoning_fields", "reasoning_verdicts"]

EFFORT_OPTION = "reasoning.effort"
OUTPUT_OPTION = "reasoning.output"

Api = Literal["chat", "responses"]

_ORDER = ("low", "medium", "high", "extra_high")
"""``ReasoningEffort`` levels above ``NONE``, lowest first: a family with fewer gets the
nearest one it has."""
_OPENAI_WORDS = {"extra_high": "xhigh"}
_PORTABLE_SWITCHES = ("enable_thinking", "thinking")


def reasoning_fields(
    reasoning: ReasoningOptions,
    profile: BackendProfile,
    family: str | None,
    *,
    api: Api = "chat",
) -> dict[str, Any] | UnsupportedOptionError:
    """The body keys for ``reasoning`` on ``profile``'s server for a model of ``family`` (a
    name of ``capabilities.reasoning_families``; ``None`` or a name it lacks: unknown), or the
    refusal. ``api="responses"`` writes the effort as the Responses API's ``reasoning.effort``
    (every Responses server here takes it) instead of the row's ``effort_field``.

    The caller merges the keys into the body under what the caller set itself: an explicit
    ``chat_template_kwargs`` entry in ``additional_properties`` wins over the mapped one."""
    fields: dict[str, Any] = {}
    if reasoning.effort is not None:
        found = _effort_fields(reasoning.effort, profile, family, api)
        if isinstance(found, UnsupportedOptionError):
            return found
        fields.update(found)
    if reasoning.output == ReasoningOutput.NONE and profile.include_reasoning_field:
        fields[profile.include_reasoning_field] = False
    return fields


def _effort_fields(
    effort: ReasoningEffort, profile: BackendProfile, family: str | None, api: Api
) -> dict[str, Any] | UnsupportedOptionError:
    row = reasoning_family_named(family)
    off = effort == ReasoningEffort.NONE
    if row is None:
        return _portable(effort, profile, family, api)
    if row.mode == "always":
        if off:
            return _refused(
                profile,
                row,
                "the model always thinks (its chat template opens the thinking block itself), "
                "so it cannot stop thinking; leave the effort unset, or use a model with a "
                "thinking switch",
            )
        # It thinks anyway; the switch goes where it can, since some copies of these templates
        # have one (llama.cpp's QwQ and R1 close the think block unless enable_thinking is set).
        found = _portable(effort, profile, row.family, api)
        return {} if isinstance(found, UnsupportedOptionError) else found
    if row.mode == "never":
        if off:
            return {}
        return _refused(
            profile,
            row,
            "the model never thinks (its chat template has no thinking), so it cannot take a "
            "reasoning effort; leave the effort unset or NONE",
        )
    if row.mode == "switch":
        if not profile.template_kwargs:
            return _refused(
                profile,
                row,
                f"the model's thinking switch is the chat-template kwarg "
                f"{' / '.join(row.switch_kwargs)}, and this server does not pass "
                "chat_template_kwargs to the template",
            )
        return {"chat_template_kwargs": dict.fromkeys(row.switch_kwargs, not off)}
    return _level_fields(effort, profile, row, api)


def _level_fields(
    effort: ReasoningEffort, profile: BackendProfile, row: ReasoningFamily, api: Api
) -> dict[str, Any] | UnsupportedOptionError:
    """A family with effort words (gpt-oss): the nearest word it has, never an off."""
    takes = ", ".join(row.efforts)
    if effort == ReasoningEffort.NONE:
        return _refused(
            profile,
            row,
            f"the model cannot stop thinking: its template takes only the efforts {takes} "
            "and has no off switch",
        )
    word = _nearest(effort.value, row.efforts)
    if word is None:
        return _refused(profile, row, f"the model takes only the efforts {takes}")
    key = _effort_key(profile, api)
    if key is None:
        return _refused(
            profile,
            row,
            "the model's effort is the reasoning_effort key, which this server does not take",
        )
    return _effort_body(key, word)


def _portable(
    effort: ReasoningEffort, profile: BackendProfile, family: str | None, api: Api
) -> dict[str, Any] | UnsupportedOptionError:
    """A family the table does not know: every switch the known templates read, or, on a
    server without template kwargs, the effort word (OpenAI's own models)."""
    if profile.template_kwargs:
        on = effort != ReasoningEffort.NONE
        return {"chat_template_kwargs": dict.fromkeys(_PORTABLE_SWITCHES, on)}
    key = _effort_key(profile, api)
    if key is not None:
        return _effort_body(key, _OPENAI_WORDS.get(effort.value, effort.value))
    return refusal(
        EFFORT_OPTION,
        profile.name,
        "this server passes neither chat_template_kwargs nor a reasoning effort to the model "
        "(set model_family if the model has a template switch the server can reach)",
        family=family,
    )


def _nearest(value: str, efforts: tuple[str, ...]) -> str | None:
    if value in efforts:
        return value
    if value not in _ORDER:
        return None
    rank = _ORDER.index(value)
    below = [word for word in efforts if word in _ORDER and _ORDER.index(word) <= rank]
    return below[-1] if below else (efforts[0] if efforts else None)


def _effort_key(profile: BackendProfile, api: Api) -> str | None:
    return "reasoning.effort" if api == "responses" else profile.effort_field


def _effort_body(key: str, word: str) -> dict[str, Any]:
    """``reasoning.effort`` as ``{"reasoning": {"effort": word}}``; a plain key as itself."""
    outer, _, inner = key.partition(".")
    return {outer: {inner: word}} if inner else {outer: word}


def _refused(profile: BackendProfile, row: ReasoningFamily, reason: str) -> UnsupportedOptionError:
    return refusal(EFFORT_OPTION, profile.name, reason, family=row.family)


# --- the verdicts, from the mapping itself -----------------------------------------------------

_EFFORTS = (
    ReasoningEffort.NONE,
    ReasoningEffort.LOW,
    ReasoningEffort.MEDIUM,
    ReasoningEffort.HIGH,
    ReasoningEffort.EXTRA_HIGH,
)


def reasoning_verdicts() -> list[OptionVerdict]:
    """Every backend, family (and unknown family) and effort, and ``reasoning.output=none``
    per backend, as ``OptionVerdict`` rows computed by ``reasoning_fields`` itself, so the
    table cannot disagree with what is sent."""
    rows: list[OptionVerdict] = []
    families: list[ReasoningFamily | None] = [*REASONING_FAMILIES, None]
    for profile in PROFILES.values():
        for row in families:
            for effort in _EFFORTS:
                rows.append(_effort_verdict(profile, row, effort))
        rows.append(_output_verdict(profile))
    return rows


def _effort_verdict(
    profile: BackendProfile, row: ReasoningFamily | None, effort: ReasoningEffort
) -> OptionVerdict:
    option = f"{EFFORT_OPTION}={effort.value}"
    family = row.family if row is not None else None
    found = reasoning_fields(ReasoningOptions(effort=effort), profile, family)
    if isinstance(found, UnsupportedOptionError):
        return OptionVerdict(option, profile.name, "refused", family=family, note=found.reason)
    return OptionVerdict(
        option,
        profile.name,
        "honoured",
        wire=_wire(found),
        family=family,
        note=_note(effort, row, found),
    )


def _note(effort: ReasoningEffort, row: ReasoningFamily | None, found: dict[str, Any]) -> str:
    if row is None:
        if "chat_template_kwargs" in found:
            return "family unknown: the portable form, both template switches (levels are on/off)"
        return "family unknown: the effort word as OpenAI spells it"
    if row.mode == "always":
        if found:
            return "the model always thinks: sent on for template variants with a switch"
        return "the model always thinks: nothing to send"
    if row.mode == "never":
        return "the model never thinks: nothing to send"
    if row.mode == "switch":
        return "" if effort == ReasoningEffort.NONE else "on/off only: every level is on"
    if effort.value not in row.efforts:
        return f"{effort.value} sent as the family's nearest effort"
    return ""


def _output_verdict(profile: BackendProfile) -> OptionVerdict:
    option = f"{OUTPUT_OPTION}={ReasoningOutput.NONE.value}"
    key = profile.include_reasoning_field
    if key:
        return OptionVerdict(
            option,
            profile.name,
            "honoured",
            wire=f"{key}=false",
            note="and enforced here: reasoning that still arrives is dropped from the answer",
        )
    return OptionVerdict(
        option,
        profile.name,
        "enforced here",
        note="reasoning dropped from the answer (the model still thinks)",
    )


def _wire(fields: dict[str, Any]) -> str:
    """``{"chat_template_kwargs": {"thinking": False}}`` as ``chat_template_kwargs.thinking=
    false``."""
    parts: list[str] = []
    for key, value in fields.items():
        if isinstance(value, dict):
            parts.extend(f"{key}.{inner}={_json(item)}" for inner, item in value.items())
        else:
            parts.append(f"{key}={_json(value)}")
    return ", ".join(parts)


def _json(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)

"""Constrained decoding per backend: a regex, a choice or a grammar written in the server's own
key, or refused before anything is sent; ``guided_*`` extras translated; two constraints in one
request refused.

Each server spells constraints its own way (``BackendProfile.constraint_keys``, corrected from
their source in research-33): vLLM ``structured_outputs.{regex,choice,grammar}``, SGLang
``regex`` / ``ebnf``, llama.cpp and llama-cpp-python a GBNF ``grammar``. A form a row lacks is
written another way where one exists: a choice as a regex alternation (SGLang) or a GBNF
alternation (llama.cpp). Otherwise it is refused: an unknown key is ignored by every one of these
servers, so sending it anyway would return an unconstrained answer. JSON Schema is not here: every
server takes ``response_format`` (``providers.chat_completions.request.response_format_fields``
writes each row's form).

The old ``guided_json`` / ``guided_regex`` / ``guided_choice`` / ``guided_grammar`` keys a caller
put in ``additional_properties`` are read as the format they describe and written like one: vLLM
≥ 0.12 accepts and *ignores* them (200, unconstrained), SGLang and llama.cpp never knew them.
Only rows with constraint keys (servers whose dialect is known) are rewritten; a ``generic``
server gets the caller's keys as they are.

A request may carry one constraint: llama.cpp answers 500 "Cannot use both json_schema and
grammar" (its ``json_schema`` key), and beside ``response_format`` drops the grammar without a
word (seen on the integration suite's llama-server); SGLang 400 "Only one of json_schema, regex,
ebnf, or structural_tag can be set", vLLM 400 "You can only use one kind of structured outputs
constraint". The second one (an extra key beside ``response_format``, or a second extra) is
refused here instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from capabilities.constraint_syntax import gbnf_alternation, regex_alternation
from capabilities.option_verdicts import OptionVerdict, refusal
from providers.abstractions.errors import ConfigurationError, UnsupportedOptionError
from providers.abstractions.options import ChatOptions, ChatResponseFormat
from providers.abstractions.records import value_class
from providers.backends import PROFILES, BackendProfile

__all__ = [
    "FORMS",
    "ConstraintPlan",
    "constraint_fields",
    "constraint_verdicts",
    "form_of",
    "merge_fields",
    "nested",
    "plan_constraints",
    "wants_plan",
]

FORMS = ("json_schema", "json_object", "regex", "choice", "grammar:gbnf", "grammar:ebnf",
         "grammar:lark")  # fmt: skip
"""Every constrained form, as ``constraint_keys`` names them; the honours table's columns."""

CHECKED_KINDS = frozenset({"json_schema", "json_object", "regex", "choice"})
"""The kinds the answer is checked against afterwards; a grammar is not (nothing here parses
one: the server's own grammar engine is the only judge)."""

_GUIDED = ("guided_json", "guided_regex", "guided_choice", "guided_grammar")
_NATIVE = frozenset({"grammar", "regex", "ebnf", "json_schema", "structural_tag"})
_STRUCTURED_OUTPUTS_KINDS = frozenset(
    {"json", "regex", "choice", "grammar", "json_object", "structural_tag"}
)


def form_of(response_format: ChatResponseFormat) -> str:
    """The format's column in ``FORMS`` (``grammar:<syntax>`` for a grammar)."""
    if response_format.kind == "grammar":
        return f"grammar:{response_format.syntax}"
    return response_format.kind


def nested(dotted: str, value: Any) -> dict[str, Any]:
    """``structured_outputs.regex`` and a value as ``{"structured_outputs": {"regex": value}}``."""
    head, _, rest = dotted.partition(".")
    return {head: nested(rest, value) if rest else value}


def merge_fields(body: dict[str, Any], fields: Mapping[str, Any]) -> None:
    """``fields`` into ``body``, a dict under the same key merged (not replaced)."""
    for key, value in fields.items():
        current = body.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            merge_fields(current, value)
        else:
            body[key] = value


def constraint_fields(
    response_format: ChatResponseFormat, profile: BackendProfile
) -> dict[str, Any] | UnsupportedOptionError:
    """The body keys of a ``regex``, ``choice`` or ``grammar`` format on ``profile``'s server,
    or the refusal naming why it cannot take it; ``{}`` for the other kinds."""
    keys = dict(profile.constraint_keys)
    kind = response_format.kind
    if kind == "regex":
        key = keys.get("regex")
        if key is None:
            return refusal("response_format.regex", profile.name, _no_regex(profile))
        return nested(key, response_format.pattern)
    if kind == "choice":
        choices = list(response_format.choices or ())
        if "choice" in keys:
            return nested(keys["choice"], choices)
        if "regex" in keys:
            return nested(keys["regex"], regex_alternation(choices))
        if "grammar:gbnf" in keys:
            return nested(keys["grammar:gbnf"], gbnf_alternation(choices))
        return refusal(
            "response_format.choice",
            profile.name,
            "the server has no choice, regex or GBNF grammar constraint known here; an unknown "
            "key would be ignored and the answer come back unconstrained",
        )
    if kind == "grammar":
        key = keys.get(f"grammar:{response_format.syntax}")
        if key is None:
            return refusal(
                "response_format.grammar", profile.name, _no_syntax(profile, response_format)
            )
        return nested(key, response_format.grammar_text)
    return {}


def _no_regex(profile: BackendProfile) -> str:
    keys = dict(profile.constraint_keys)
    instead = " (write it as ChatResponseFormat.grammar in GBNF)" if "grammar:gbnf" in keys else ""
    return (
        "the server has no regular-expression constraint; an unknown key is ignored, so the "
        f"answer would come back unconstrained{instead}"
    )


def _no_syntax(profile: BackendProfile, response_format: ChatResponseFormat) -> str:
    taken = [
        form.partition(":")[2] for form, _ in profile.constraint_keys if form.startswith("grammar:")
    ]
    if not taken:
        return "the server takes no grammar constraint known here"
    return f"the server takes grammars in {', '.join(taken)}, not {response_format.syntax}"


# --- a whole request: the option, guided_* extras, and one constraint at a time -------------------


@value_class(frozen=True)
class ConstraintPlan:
    """What one request's constraint becomes on a row (``plan_constraints``)."""

    sent: ChatResponseFormat | None
    """The format the body carries: ``options.response_format`` or the one a ``guided_*`` extra
    described; ``None`` when there is none or it was refused. A JSON form is written by the
    request builder (``response_format_fields``), a regex, choice or grammar is ``fields``."""
    fields: dict[str, Any]
    """Body keys of a regex, choice or grammar ``sent``."""
    extras: dict[str, Any]
    """``additional_properties`` as they are to be merged: ``guided_*`` keys translated away on
    rows that do not read them, a refused second constraint left out."""
    refusals: tuple[UnsupportedOptionError, ...] = ()
    """Each option the row cannot honour, to settle with the client's policy; after ``warn`` or
    ``ignore`` the request goes out without them (already so in the fields above)."""

    @property
    def checked(self) -> ChatResponseFormat | None:
        """What the answer is checked against afterwards (``None``: nothing to check)."""
        sent = self.sent
        return sent if sent is not None and sent.kind in CHECKED_KINDS else None


def wants_plan(options: ChatOptions) -> bool:
    """Does ``options`` carry anything ``plan_constraints`` would change? Cheap, for the hot
    path: a constraint format, or an extra key that names a constraint."""
    response_format = options.response_format
    if response_format is not None and response_format.kind != "text":
        return True
    extras = options.additional_properties
    return bool(extras) and any(
        key in _NATIVE or key in _GUIDED or key == "structured_outputs" for key in extras
    )


def plan_constraints(options: ChatOptions, profile: BackendProfile) -> ConstraintPlan:
    """The constraint of one request on ``profile``: the format written in the row's key (or
    refused), ``guided_*`` extras translated, a second constraint refused."""
    extras = dict(options.additional_properties)
    refusals: list[UnsupportedOptionError] = []
    sent = options.response_format
    if sent is not None and sent.kind == "text":
        sent = None
    fields: dict[str, Any] = {}
    if sent is not None and sent.is_constraint:
        written = constraint_fields(sent, profile)
        if isinstance(written, UnsupportedOptionError):
            refusals.append(written)
            sent = None
        else:
            fields = written
    if profile.constraint_keys:  # a server whose constraint dialect is known
        sent, fields = _guided(extras, sent, fields, profile, refusals)
        _one_constraint(extras, sent, profile, refusals)
    return ConstraintPlan(sent, fields, extras, tuple(refusals))


def _guided(
    extras: dict[str, Any],
    sent: ChatResponseFormat | None,
    fields: dict[str, Any],
    profile: BackendProfile,
    refusals: list[UnsupportedOptionError],
) -> tuple[ChatResponseFormat | None, dict[str, Any]]:
    """Each ``guided_*`` extra read as its format and written like one, never sent as it is
    (the row's server ignores it); a second constraint, or a form the row lacks, refused."""
    for key in _GUIDED:
        if key not in extras:
            continue
        value = extras.pop(key)
        option = f"additional_properties.{key}"
        described = _guided_format(key, value)
        if isinstance(described, str):
            refusals.append(refusal(option, profile.name, described))
            continue
        if sent is not None:
            refusals.append(refusal(option, profile.name, _TWO))
            continue
        written = constraint_fields(described, profile)
        if isinstance(written, UnsupportedOptionError):
            refusals.append(refusal(option, profile.name, written.reason))
            continue
        sent, fields = described, written
    return sent, fields


_TWO = (
    "the request already carries a constraint and the server takes one at a time (llama.cpp: "
    "500 'Cannot use both json_schema and grammar', or beside response_format the grammar is "
    "dropped silently; SGLang and vLLM: 400)"
)


def _guided_format(key: str, value: Any) -> ChatResponseFormat | str:
    """The format a ``guided_*`` value describes, or why it describes none."""
    try:
        if key == "guided_json":
            schema = json.loads(value) if isinstance(value, str) else value
            if not isinstance(schema, Mapping):
                return "guided_json is not a JSON Schema object"
            return ChatResponseFormat.json_schema(schema)
        if key == "guided_regex":
            return ChatResponseFormat.regex(value)
        if key == "guided_choice":
            return ChatResponseFormat.choice(value)
        # vLLM's guided_grammar went to xgrammar: EBNF (GBNF-style), or Lark it recognised
        return ChatResponseFormat.grammar(value, "ebnf")
    except (ConfigurationError, ValueError, TypeError):
        return f"{key} does not hold a valid value for it"


def _one_constraint(
    extras: dict[str, Any],
    sent: ChatResponseFormat | None,
    profile: BackendProfile,
    refusals: list[UnsupportedOptionError],
) -> None:
    """An extra key carrying a constraint beside another one is refused and left out: the
    server would error on both (or, llama-cpp-python, silently keep one)."""
    seen = sent is not None
    for key in list(extras):
        value = extras[key]
        carries = key in _NATIVE or (
            key == "structured_outputs"
            and isinstance(value, Mapping)
            and any(kind in value for kind in _STRUCTURED_OUTPUTS_KINDS)
        )
        if not carries:
            continue
        if seen:
            del extras[key]
            refusals.append(refusal(f"additional_properties.{key}", profile.name, _TWO))
        seen = True


# --- the honours table ---------------------------------------------------------------------------


def _sample(form: str) -> ChatResponseFormat:
    """A format of ``form`` for the table (made when the table is, not at import)."""
    if form == "regex":
        return ChatResponseFormat.regex("[a-z]+")
    if form == "choice":
        return ChatResponseFormat.choice(["yes", "no"])
    syntax = form.partition(":")[2]
    return ChatResponseFormat.grammar('start: "a"' if syntax == "lark" else 'root ::= "a"', syntax)


def constraint_verdicts() -> list[OptionVerdict]:
    """One ``OptionVerdict`` per backend row and form of ``FORMS``, from the rows themselves."""
    verdicts: list[OptionVerdict] = []
    for profile in PROFILES.values():
        for form in FORMS:
            verdicts.append(_verdict(profile, form))
    return verdicts


_CHECKED = "checked after the answer: a violation raises ConstraintViolationError"


def _verdict(profile: BackendProfile, form: str) -> OptionVerdict:
    option = f"response_format.{form.partition(':')[0]}"
    name = profile.name
    if form in ("json_schema", "json_object"):
        wire = _json_wire(profile, form)
        if profile.enforces_json_schema:
            return OptionVerdict(option, name, "honoured", wire, note=_CHECKED)
        return OptionVerdict(
            option, name, "enforced here", wire,
            note="sent, but the server is not known to constrain decoding: " + _CHECKED,
        )  # fmt: skip
    written = constraint_fields(_sample(form), profile)
    syntax = form.partition(":")[2]
    option = f"{option}.{syntax}" if syntax else option
    if isinstance(written, UnsupportedOptionError):
        return OptionVerdict(option, name, "refused", note=written.reason)
    wire = _dotted(written)
    if form == "choice" and "choice" not in dict(profile.constraint_keys):
        how = (
            "a regex alternation" if "regex" in dict(profile.constraint_keys) else "a GBNF grammar"
        )
        note = f"written as {how}; {_CHECKED}"
    elif form.startswith("grammar:"):
        note = "not checked after the answer: nothing here parses a grammar"
    else:
        note = _CHECKED
    return OptionVerdict(option, name, "honoured", wire, note=note)


def _json_wire(profile: BackendProfile, form: str) -> str:
    if form == "json_object":
        return "response_format"
    spelled = {
        "response_format": "response_format.json_schema",
        "json_object_schema": "response_format.schema (type json_object)",
        "json_schema": "json_schema",
        "structured_outputs": "structured_outputs.json",
    }
    return ", ".join(spelled[key] for key in profile.json_schema_fields)


def _dotted(fields: Mapping[str, Any]) -> str:
    key, value = next(iter(fields.items()))
    return f"{key}.{_dotted(value)}" if isinstance(value, Mapping) else key

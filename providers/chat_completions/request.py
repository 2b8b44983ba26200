"""Building the ``/chat/completions`` request body from messages and options.

Serialisation is deterministic (same conversation, same bytes) because llama.cpp, vLLM and
SGLang reuse their prompt cache only for a byte-identical prefix: replayed tool-call arguments
are sent as the exact text the server produced, not re-dumped.

A body that cannot be encoded — a lone surrogate in any string, NaN or an infinity, a structure
that contains itself, an object JSON has no form for — is refused here with an
``InvalidRequestError`` naming where it is (``check_encodable``), before anything is sent;
httpx would raise a bare ``UnicodeEncodeError`` or ``ValueError`` while encoding it, the first
holding the whole body, prompt included.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from providers.abstractions.errors import UnsupportedOptionError
from providers.abstractions.event_names import REQUEST_EXTRA_KEY_IGNORED
from providers.abstractions.messages import ChatMessage
from providers.abstractions.open_values import ChatRole
from providers.abstractions.openai_format import json_text, unencodable
from providers.abstractions.option_policy import OptionPolicy
from providers.abstractions.options import ChatOptions, ChatResponseFormat
from providers.abstractions.reasoning_options import ReasoningOptions
from providers.backends import BackendProfile

__all__ = [
    "asks_for_enforcement",
    "build_chat_request",
    "check_encodable",
    "json_text",
    "merge_extra",
    "messages_to_wire",
    "reasoning_body",
    "response_format_fields",
    "set_if_given",
]


def _warn(event: str, **fields: Any) -> None:
    """Logged through the library's event logger, imported on first use: structlog costs
    ~25 ms of cold import and is needed only when a request is malformed."""
    # deferred: structlog, ~25 ms of cold import, only for a malformed request
    from providers.abstractions.logs import get_logger

    get_logger(__name__).warning(event, **fields)


# Keys the client owns: ``additional_properties`` may extend them (a nested dict is merged),
# never replace them.
_CORE_KEYS = frozenset({"model", "messages", "stream", "stream_options", "tools", "tool_choice"})


def build_chat_request(
    messages: Sequence[ChatMessage],
    options: ChatOptions | None,
    *,
    model_id: str | None,
    stream: bool,
    profile: BackendProfile,
    family: str | None = None,
    policy: OptionPolicy = "raise",
    dropped_keys: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The body of one request. ``family``: the model family (reasoning and some refusals depend
    on it); ``policy``: what to do with an option the backend cannot honour; ``dropped_keys``:
    the optional keys the server refused, which the client no longer adds (``refused_keys``)."""
    options = options or ChatOptions()
    body: dict[str, Any] = {}
    model = options.model_id or model_id
    if model:
        body["model"] = model
    body["messages"] = messages_to_wire(messages, profile)
    body["stream"] = stream
    if stream and profile.request_stream_usage:
        body["stream_options"] = {"include_usage": True}
    set_if_given(body, "temperature", options.temperature)
    set_if_given(body, "top_p", options.top_p)
    set_if_given(body, "top_k", options.top_k)
    set_if_given(body, profile.max_tokens_field, options.max_output_tokens)
    if options.stop_sequences and _stop_is_sent(options, profile, family):
        body["stop"] = list(options.stop_sequences)
    set_if_given(body, "seed", options.seed)
    set_if_given(body, "frequency_penalty", options.frequency_penalty)
    set_if_given(body, "presence_penalty", options.presence_penalty)
    tools = options.tool_declarations()
    if tools:  # never `tools: []`: vLLM rejects it
        body["tools"] = [tool.to_openai() for tool in tools]
        if options.allow_multiple_tool_calls is not None:
            body["parallel_tool_calls"] = options.allow_multiple_tool_calls
    if options.tool_mode is not None and tools:
        # Only with tools: vLLM answers 400 "When using `tool_choice`, `tools` must be set",
        # and without tools there is nothing to choose from.
        body["tool_choice"] = options.tool_mode.to_openai()
    extras: Mapping[str, Any] = options.additional_properties
    if may_constrain(options):
        extras = _constrain(body, options, profile, policy)
    if dropped_keys:
        for key in dropped_keys:  # (before the caller's keys: a caller's own stays)
            body.pop(key, None)
    for key, value in extras.items():
        if key == "stream_options" and not stream:
            # vLLM answers 400 to stream_options without stream (docs/wire.md §2.4), so options
            # shared by streamed and non-streamed calls must not carry it into the latter.
            _warn(REQUEST_EXTRA_KEY_IGNORED, key=key, reason="not streaming")
            continue
        merge_extra(body, key, value, _CORE_KEYS)
    if options.reasoning is not None:
        reasoning_body(body, options, profile, family, policy)
    check_encodable(body)
    return body


def _stop_is_sent(options: ChatOptions, profile: BackendProfile, family: str | None) -> bool:
    """Unless the client applies the stop sequences itself (``stop_sequences``)."""
    # deferred: the stop stage's module, for requests with stop sequences only
    from providers.chat_completions.stop_sequences import stops_applied_here

    return not stops_applied_here(options, profile, family)


def asks_for_enforcement(options: ChatOptions | None) -> bool:
    """Could ``options`` need anything applied or checked on the answer
    (``option_enforcement``)? The cheap test every request makes before that module loads."""
    if options is None:
        return False
    reasoning = options.reasoning
    return (
        options.allow_multiple_tool_calls is False
        or bool(options.stop_sequences)
        or may_constrain(options)
        or (reasoning is not None and reasoning.output is not None)
    )


def may_constrain(options: ChatOptions) -> bool:
    """Could ``options`` carry a constraint (a response format, or extra keys that may name
    one)? The cheap test before the constraint tables are loaded; they decide."""
    return options.response_format is not None or bool(options.additional_properties)


def _constrain(
    body: dict[str, Any], options: ChatOptions, profile: BackendProfile, policy: OptionPolicy
) -> Mapping[str, Any]:
    """The request's constraint in the row's keys (``capabilities.constraint_mapping``): each
    refusal settled with the client's policy first (under ``raise`` nothing is sent), then the
    format written; returns the extras left to merge (``guided_*`` translated away)."""
    # deferred: the constraint tables (~0.6 ms of cold import), for requests that name one
    from capabilities.constraint_mapping import merge_fields, plan_constraints, wants_plan

    # deferred: the verdicts' logging, for a request with an option to settle only
    from capabilities.option_verdicts import settle

    if not wants_plan(options):
        if options.response_format is not None:
            body.update(response_format_fields(options.response_format, profile))
        return options.additional_properties
    plan = plan_constraints(options, profile)
    for error in plan.refusals:
        settle(error, policy)
    sent = plan.sent
    if sent is not None:
        if sent.is_constraint:
            merge_fields(body, plan.fields)
        else:
            body.update(response_format_fields(sent, profile))
    return plan.extras


def reasoning_body(
    body: dict[str, Any],
    options: ChatOptions,
    profile: BackendProfile,
    family: str | None,
    policy: OptionPolicy,
    *,
    api: Literal["chat", "responses"] = "chat",
) -> None:
    """``options.reasoning`` in ``body`` (``capabilities.reasoning_mapping``), after the
    caller's extra keys and under them: a ``chat_template_kwargs`` (or ``reasoning``) the caller
    put in ``additional_properties`` keeps its own entries, and a key the caller set whole
    (``reasoning_effort``, ``include_reasoning``) stays as set. A refusal is settled with
    ``policy``: raised, or the request goes without the option. Shared by both builders."""
    # deferred: the verdicts' logging, for a request with an option to settle only
    from capabilities.option_verdicts import settle

    # deferred: the reasoning tables (~1 ms of cold import), for requests that ask only
    from capabilities.reasoning_mapping import reasoning_fields

    reasoning = options.reasoning
    assert reasoning is not None
    fields = reasoning_fields(reasoning, profile, family, api=api)
    if isinstance(fields, UnsupportedOptionError):
        settle(fields, policy)
        # Sent without the effort; what the output asks for still goes.
        output_only = ReasoningOptions(output=reasoning.output)
        fields = reasoning_fields(output_only, profile, family, api=api)
        assert isinstance(fields, dict)
    for key, value in fields.items():
        current = body.get(key)
        if current is None:
            body[key] = value
        elif isinstance(current, Mapping) and isinstance(value, Mapping):
            body[key] = {**value, **current}  # (a copy: the caller's dict is not edited)


def response_format_fields(
    response_format: ChatResponseFormat, profile: BackendProfile
) -> dict[str, Any]:
    """The body keys of a JSON response format on ``profile``'s server: a ``json_schema``
    format in each of the row's ``json_schema_fields`` (backend quirks as data); text and
    ``json_object`` as ``response_format``, which every server spells alike. (A regex, choice
    or grammar has no such form: ``capabilities.constraint_mapping`` writes those.)"""
    if response_format.kind != "json_schema":
        return {"response_format": response_format.to_openai()}
    schema = dict(response_format.schema or {})
    fields: dict[str, Any] = {}
    for key in profile.json_schema_fields:
        if key == "response_format":
            fields[key] = response_format.to_openai()
        elif key == "json_object_schema":
            # llama-cpp-python: its response_format type is text or json_object; json_schema
            # fails its validation, answered with a 500 (research-33 §4)
            fields["response_format"] = {"type": "json_object", "schema": schema}
        elif key == "structured_outputs":
            fields[key] = {"json": schema}
        else:
            fields[key] = schema
    return fields


def set_if_given(body: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        body[key] = value


def merge_extra(body: dict[str, Any], key: str, value: Any, core_keys: frozenset[str]) -> None:
    """A caller's extra body key: added when absent, merged into a dict the client built
    (``stream_options``), otherwise the client's value stays and the clash is logged once per
    request. Shared by the chat and Responses request builders."""
    if key not in body:
        body[key] = value
        return
    current = body[key]
    if isinstance(current, dict) and isinstance(value, Mapping):
        # e.g. stream_options: {"continuous_usage_stats": true} joins include_usage.
        for inner, inner_value in value.items():
            current.setdefault(inner, inner_value)
        return
    if key in core_keys or current != value:
        _warn(REQUEST_EXTRA_KEY_IGNORED, key=key, reason="set by the client")


def messages_to_wire(
    messages: Sequence[ChatMessage], profile: BackendProfile
) -> list[dict[str, Any]]:
    """Each message as ``ChatMessage.to_openai_messages()`` writes it, plus what the backend
    needs: system messages merged into one leading message, reasoning dropped unless the
    backend wants it replayed."""
    wire: list[dict[str, Any]] = []
    system_texts: list[str] = []
    for message in messages:
        if profile.merge_system_messages and message.role == ChatRole.SYSTEM:
            text = message.text
            if text.strip():
                system_texts.append(text)
            continue
        written = message.to_openai_messages()
        if not profile.replay_reasoning:
            for entry in written:
                entry.pop("reasoning_content", None)
        wire.extend(written)
    if system_texts:
        wire.insert(0, {"role": "system", "content": "\n\n".join(system_texts)})
    return wire


# --- what httpx can encode ---------------------------------------------------------------------

_NAME = r"[A-Za-z_][A-Za-z0-9_-]{0,39}"  # (re caches it on first use: error messages only)


class _Unencodable(Exception):
    """Raised deep in the walk; each level adds its key on the way out, so the path costs
    nothing while the body is fine."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.path: list[object] = []

    def where(self) -> str:
        parts = []
        for key in reversed(self.path):
            if isinstance(key, int):
                parts.append(f"[{key}]")
            elif isinstance(key, str) and re.fullmatch(_NAME, key):
                parts.append(f".{key}" if parts else key)
            else:
                parts.append(f"[{ascii(key)[:42]}]")
        return "".join(parts) or "the body"


def check_encodable(body: Mapping[str, Any]) -> None:
    """``InvalidRequestError`` unless httpx can encode ``body`` (JSON, ``allow_nan=False``,
    UTF-8), naming where the problem is and never quoting text. Shared by both request
    builders; costs one walk of the body, a fraction of the encoding itself."""
    try:
        _walk(body, set())
    except _Unencodable as problem:
        where = problem.where()
        raise unencodable(
            f"the request cannot be encoded: {where} {problem.reason}", where
        ) from None
    except RecursionError:
        raise unencodable("the request cannot be encoded: it is nested too deeply") from None


def _walk(value: Any, open_: set[int]) -> None:
    """What ``json.dumps`` accepts: str, int, finite float, None, and dict, list and tuple
    (subclasses included) of those, nothing else. The common leaves (ASCII text, plain
    numbers) are settled in the parent's loop without a call: this runs on every request."""
    if isinstance(value, dict):
        pairs: Any = value.items()
        is_dict = True
    elif isinstance(value, list | tuple):
        pairs = enumerate(value)
        is_dict = False
    else:
        _check_leaf(value)
        return
    marker = id(value)
    if marker in open_:
        raise _Unencodable("contains itself (a circular structure JSON cannot encode)")
    open_.add(marker)
    for key, item in pairs:
        try:
            if is_dict and (type(key) is not str or not key.isascii()):
                _check_key(key)
            kind = type(item)
            if kind is str:
                if not item.isascii():
                    _check_text(item)
            elif kind is not int and kind is not bool and item is not None:
                _walk(item, open_)
        except _Unencodable as problem:
            problem.path.append(key if isinstance(key, str | int) else repr(key))
            raise
    open_.discard(marker)


def _check_leaf(value: Any) -> None:
    if isinstance(value, str):
        if not value.isascii():
            _check_text(value)
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise _Unencodable(f"is {value!r}, which JSON has no number for")
    elif value is not None and not isinstance(value, int):
        raise _Unencodable(f"is a {type(value).__name__}, which JSON cannot encode")


def _check_key(key: Any) -> None:
    if isinstance(key, str):
        if not key.isascii():
            _check_text(key)
    elif isinstance(key, float):
        if not math.isfinite(key):
            raise _Unencodable(f"has the key {key!r}, which JSON has no number for")
    elif key is not None and not isinstance(key, int):
        raise _Unencodable(f"has a key of type {type(key).__name__}, which JSON cannot encode")


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        raise _Unencodable(
            f"holds a lone surrogate (U+{code:04X}) at character {exc.start}, which UTF-8 "
            "cannot encode"
        ) from None

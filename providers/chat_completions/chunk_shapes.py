"""What the chunk normaliser works out once per key set, not once per chunk.

``_Shape`` (``shape``): one key set of a chunk, choice or delta, shared by every stream. A stream
repeats one shape thousands of times, so what depends only on the keys is decided once: which
keys the normaliser does not model (``unknown``) and, in one C call, whether any of them holds a
value this time (they are usually all null).

``Template``: the common chunk of one stream (one choice, one text or reasoning field, every other
value null or unchanged), learnt from a chunk the full path read. A chunk that has the
template's keys on all three levels, and the template's values everywhere but the id, model,
creation time, choice index and the text, reads as the template with those replaced; the
normaliser checks that with a few C calls (``operator.itemgetter`` over every key of a level
proves the key set too, given the same length) and builds the update without the full path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from operator import itemgetter
from typing import Any

from providers.abstractions.chat_response import ChatResponseUpdate
from providers.abstractions.contents import TextContent, TextReasoningContent
from providers.abstractions.response_update import NO_HEAD, UpdateHead
from providers.chat_completions.event_templates import EventTemplate

__all__ = [
    "NO_SHAPE",
    "FragmentTemplate",
    "Template",
    "fragment_template_for",
    "non_null",
    "shape",
    "template_for",
]

_HEAD = ("id", "model", "created", "choices")
_CHOICE_HEAD = ("index", "delta", "finish_reason")


class _Shape:
    """One key set of a chunk, choice or delta; see the module docstring. Comparing a dict's
    key view with ``keys`` is a few hash lookups and allocates nothing."""

    __slots__ = (
        "fingerprint",
        "keys",
        "nones",
        "rare",
        "reasoning",
        "reasoning_field",
        "unknown",
        "usage",
        "values",
    )

    def __init__(
        self, mapping: Mapping[str, Any], known: frozenset[str], reasoning: tuple[str, ...] = ()
    ) -> None:
        self.keys = keys = frozenset(mapping.keys())
        self.reasoning = tuple(name for name in reasoning if name in keys)
        """The reasoning fields present, in order of preference (deltas only)."""
        self.reasoning_field = self.reasoning[0] if len(self.reasoning) == 1 else None
        self.unknown = tuple(k for k in mapping if k not in known and k not in reasoning)
        self.values: Callable[[Mapping[str, Any]], Any] | None = (
            itemgetter(*self.unknown) if self.unknown else None
        )
        self.nones = (None,) * len(self.unknown) if len(self.unknown) > 1 else None
        # Keys that are absent need not be looked up (chunks only).
        self.fingerprint = "system_fingerprint" in keys
        self.usage = "usage" in keys
        # Whether a delta may hold more than text: tool calls, a role, keys not modelled.
        self.rare = "tool_calls" in keys or "role" in keys or bool(self.unknown)


NO_SHAPE = _Shape({}, frozenset())
_SHAPES: dict[tuple[frozenset[str], frozenset[str], tuple[str, ...]], _Shape] = {}
_MAX_SHAPES = 256  # a few per server; the bound only stops a server inventing keys forever


def shape(
    mapping: Mapping[str, Any], known: frozenset[str], reasoning: tuple[str, ...] = ()
) -> _Shape:
    """The ``_Shape`` of ``mapping``'s keys, shared by every stream (one per shape, not per
    stream: 200 concurrent streams need not hold 200 copies)."""
    key = (frozenset(mapping.keys()), known, reasoning)
    found = _SHAPES.get(key)
    if found is None:
        found = _Shape(mapping, known, reasoning)
        if len(_SHAPES) < _MAX_SHAPES:
            _SHAPES[key] = found
    return found


def _rest(mapping: Mapping[str, Any], taken: tuple[str, ...]) -> tuple[Any, Any]:
    """An itemgetter of ``mapping``'s keys not in ``taken`` and what it gives on ``mapping``
    (``(None, None)`` when there are none: nothing to compare)."""
    rest = tuple(key for key in mapping if key not in taken)
    if not rest:
        return None, None
    getter = itemgetter(*rest)
    return getter, getter(mapping)


class Template:
    """One stream's common chunk; see the module docstring. The normaliser reads the fields
    itself (``ChunkNormalizer.feed``, inline): this only holds them."""

    __slots__ = (
        "bytes",
        "choice_len",
        "choice_rest",
        "choice_rest_values",
        "delta_len",
        "delta_rest",
        "delta_rest_values",
        "field",
        "head",
        "kind",
        "top_len",
        "top_rest",
        "top_rest_values",
    )

    def __init__(
        self,
        chunk: dict[str, Any],
        choice: dict[str, Any],
        delta: dict[str, Any],
        field: str,
        kind: type[TextContent] | type[TextReasoningContent],
    ) -> None:
        self.top_len = len(chunk)
        self.top_rest, self.top_rest_values = _rest(chunk, _HEAD)
        self.choice_len = len(choice)
        self.choice_rest, self.choice_rest_values = _rest(choice, _CHOICE_HEAD)
        self.delta_len = len(delta)
        self.delta_rest, self.delta_rest_values = _rest(delta, (field,))
        self.field = field
        self.kind = kind
        self.bytes: EventTemplate | None = None  # its event's bytes (``event_reader``)
        self.head = NO_HEAD  # the last updates' ids and time, shared while they stay


head: Callable[[Mapping[str, Any]], tuple[Any, Any, Any, Any]] = itemgetter(*_HEAD)
"""``(id, model, created, choices)``: with the template's rest, every key of a chunk."""
choice_head: Callable[[Mapping[str, Any]], tuple[Any, Any, Any]] = itemgetter(*_CHOICE_HEAD)
"""``(index, delta, finish_reason)``: with the template's rest, every key of a choice."""


def _sole_delta(chunk: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The one choice of ``chunk`` and its delta, when it has exactly one, unfinished, with every
    key a template reads; ``None`` otherwise (no template is learnt from it)."""
    choices = chunk["choices"]
    if type(choices) is not list or len(choices) != 1:
        return None
    choice = choices[0]
    if type(choice) is not dict or any(key not in choice for key in _CHOICE_HEAD):
        return None
    delta = choice["delta"]
    if type(delta) is not dict or choice["finish_reason"] is not None:
        return None
    return choice, delta


def template_for(
    chunk: Mapping[str, Any], update: ChatResponseUpdate, fingerprint: object
) -> Template | None:
    """The template ``chunk`` makes, read by the full path as ``update``; ``None`` unless it is
    the common chunk: one choice whose delta holds one text or reasoning field and nothing but
    nulls besides, with no extras, finish, usage or role in the update (so every other value of
    the chunk is one the full path ignores), and every key the fast path reads present.
    ``fingerprint``: the one the normaliser has recorded (the template is dropped when that
    changes, since the full path compares each chunk's with it)."""
    if (
        update.role is not None
        or update.finish_reason is not None
        or update.additional_properties is not None
        or len(update.contents) != 1
        or type(chunk) is not dict
        or type(update.response_id) is not str
        or any(key not in chunk for key in _HEAD)
        or chunk.get("system_fingerprint", fingerprint) != fingerprint
    ):
        return None
    content = update.contents[0]
    kind = type(content)
    if (kind is not TextContent and kind is not TextReasoningContent) or (
        content.additional_properties is not None
    ):
        return None
    sole = _sole_delta(chunk)
    if sole is None:
        return None
    choice, delta = sole
    fields = [key for key, value in delta.items() if value is not None]
    if len(fields) != 1 or delta[fields[0]] != content.text:  # type: ignore[attr-defined]
        return None
    if (fields[0] == "content") != (kind is TextContent):
        return None
    return Template(chunk, choice, delta, fields[0], kind)


class FragmentTemplate:
    """One stream's common tool-call chunk: one choice whose delta holds one ``tool_calls``
    entry with an argument fragment and nothing else but nulls (and the entry's ``type``), as
    vLLM, SGLang and llama.cpp stream a call's arguments. ``read`` recognises the next ones the
    way the text template does, one level deeper, and hands the fragment to the choice's
    accumulator; the update it returns is the full path's (no contents: a call becomes a
    ``FunctionCallContent`` only when complete)."""

    __slots__ = ("bytes", "choice", "delta", "entry", "function", "head", "top")

    def __init__(
        self,
        chunk: dict[str, Any],
        choice: dict[str, Any],
        delta: dict[str, Any],
        entry: dict[str, Any],
        function: dict[str, Any],
    ) -> None:
        self.top = (len(chunk), *_rest(chunk, _HEAD))
        self.choice = (len(choice), *_rest(choice, _CHOICE_HEAD))
        self.delta = (len(delta), *_rest(delta, ("tool_calls",)))
        self.entry = (len(entry), *_rest(entry, ("index", "function")))
        self.function = (len(function), *_rest(function, ("arguments",)))
        self.bytes: EventTemplate | None = None  # its event's bytes (``event_reader``)
        self.head = NO_HEAD  # the last updates' ids and time, shared while they stay

    def read(
        self, chunk: Any, append: Callable[[int, int, str], bool]
    ) -> ChatResponseUpdate | None:
        """The update of ``chunk`` if it is this template's kind (its fragment given to
        ``append(choice index, call index, text)``, which says whether that call exists);
        ``None`` (nothing done) otherwise. Hot path: each level's check inline (a level has the
        template's keys, as ``len`` and the getters prove, and its values but those read)."""
        try:
            response_id, model_id, created, choices = head(chunk)
            size, rest, values = self.top
            if not (
                len(chunk) == size
                and (rest is None or rest(chunk) == values)
                and type(choices) is list
                and len(choices) == 1
            ):
                return None
            choice = choices[0]
            index, delta, finish = choice_head(choice)
            size, rest, values = self.choice
            if not (
                finish is None
                and type(index) is int
                and len(choice) == size
                and (rest is None or rest(choice) == values)
            ):
                return None
            calls = delta["tool_calls"]
            size, rest, values = self.delta
            if not (
                type(delta) is dict
                and len(delta) == size
                and (rest is None or rest(delta) == values)
                and type(calls) is list
                and len(calls) == 1
            ):
                return None
            entry = calls[0]
            function = entry["function"]
            call = entry["index"]
            text = function["arguments"]
            size, rest, values = self.entry
            if not (
                type(entry) is dict
                and len(entry) == size
                and (rest is None or rest(entry) == values)
            ):
                return None
            size, rest, values = self.function
            if not (
                type(function) is dict
                and len(function) == size
                and (rest is None or rest(function) == values)
                and type(call) is int
                and type(text) is str
                and text
                and type(response_id) is str
                and append(index, call, text)
            ):
                return None
        except (KeyError, TypeError):
            return None  # (a key missing, or a level that is not a dict)
        if type(created) is not int:
            created = None
        last = self.head
        if (
            last.response_id != response_id
            or last.model_id != model_id
            or last.created_at != created
            or type(model_id) is not type(last.model_id)
        ):
            model_id = model_id if type(model_id) is str else None  # (dropped: issue 32)
            last = self.head = UpdateHead(response_id, model_id, created)
        # Plain and empty (``response_update``); ``raw`` is the parsed chunk itself.
        return ChatResponseUpdate.of_text("", last, index, chunk)


def fragment_template_for(chunk: Any, update: ChatResponseUpdate) -> FragmentTemplate | None:
    """The ``FragmentTemplate`` ``chunk`` makes (read by the full path as ``update``), or
    ``None`` unless it is one: see the class docstring."""
    if (
        update.contents
        or update.role is not None
        or update.finish_reason is not None
        or update.additional_properties is not None
        or type(chunk) is not dict
        or type(update.response_id) is not str
        or any(key not in chunk for key in _HEAD)
    ):
        return None
    sole = _sole_delta(chunk)
    if sole is None:
        return None
    choice, delta = sole
    if [key for key, value in delta.items() if value is not None] != ["tool_calls"]:
        return None
    calls = delta["tool_calls"]
    if type(calls) is not list or len(calls) != 1 or type(calls[0]) is not dict:
        return None
    entry = calls[0]
    function = entry.get("function")
    if type(function) is not dict or type(entry.get("index")) is not int:
        return None
    if any(v is not None for k, v in entry.items() if k not in ("index", "function", "type")):
        return None
    if [key for key, value in function.items() if value is not None] != ["arguments"]:
        return None
    if type(function["arguments"]) is not str:
        return None
    return FragmentTemplate(chunk, choice, delta, entry, function)


def non_null(
    mapping: Mapping[str, Any],
    keys: tuple[str, ...],
    extras: dict[str, Any] | None,
    stop_fields: tuple[str, ...] = (),
) -> dict[str, Any] | None:
    """``extras`` with the non-null values of ``keys``; a stop field becomes ``stop_sequence``."""
    for key in keys:
        value = mapping[key]
        if value is not None:
            if extras is None:
                extras = {}
            extras["stop_sequence" if key in stop_fields else key] = value
    return extras

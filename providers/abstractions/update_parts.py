"""The parts ``ChatResponseUpdate`` packs its fields into (``response_update``'s docstring
says why): the head its stream's updates share, the tuple of its rare fields, and what stands
in its one slot for ``raw``."""

from __future__ import annotations

from typing import Any, Protocol

from providers.abstractions.contents import TextContent, TextReasoningContent
from providers.abstractions.open_values import ChatFinishReason, ChatRole

__all__ = [
    "NO_HEAD",
    "NO_RARE",
    "Boxed",
    "EventSource",
    "Folded",
    "Head",
    "TextKind",
    "UpdateHead",
    "head_of",
    "is_plain",
    "rare_of",
    "writes_events",
]

TextKind = type[TextContent] | type[TextReasoningContent]


class EventSource(Protocol):
    """Where a plain update's event can be written again from its text: the stream's
    event template (``providers.chat_completions.event_templates``), shared by every update
    of it, so that an update read from a template keeps no bytes of its own."""

    def event_of(self, text: str) -> bytes: ...


class UpdateHead:
    """``response_id``, ``model_id`` and ``created_at`` of updates, and the kind of a plain
    update's text: the same on every update of a stream (of a run of its text or reasoning),
    so its updates share one (an update holds it in one slot, not four). Never changed once
    made: setting a field on an update gives the update a head of its own. The stream's event
    template (``EventTemplate``) has the same attributes and serves as the head of the updates
    read from it. A folded update's ``kind`` means nothing."""

    __slots__ = ("created_at", "kind", "model_id", "response_id")

    def __init__(
        self,
        response_id: str | None,
        model_id: str | None,
        created_at: int | None,
        kind: TextKind = TextContent,
    ) -> None:
        self.response_id = response_id
        self.model_id = model_id
        self.created_at = created_at
        self.kind = kind


class Head(Protocol):
    """What an update's head slot holds: an ``UpdateHead``, or the stream's event template."""

    @property
    def response_id(self) -> str | None: ...
    @property
    def model_id(self) -> str | None: ...
    @property
    def created_at(self) -> int | None: ...
    @property
    def kind(self) -> TextKind: ...


NO_HEAD = UpdateHead(None, None, None)
_HEADS: dict[tuple[Any, ...], UpdateHead] = {}
"""The heads the constructor made, by value (and type: ``1`` is not ``1.0``): updates made one
by one (the Responses API client's, a layer's) share their stream's, as the chat client's do.
Cleared when full: a few per stream, and many streams at once."""
_MAX_HEADS = 1024


def head_of(
    response_id: str | None,
    model_id: str | None,
    created_at: int | None,
    kind: TextKind = TextContent,
) -> Head:
    """A head with these values: the one every update made with the same values shares."""
    key: tuple[Any, ...] = (response_id, model_id, created_at, kind)
    key += (type(response_id), type(model_id), type(created_at))
    try:
        head = _HEADS.get(key)
    except TypeError:  # (a value that cannot be hashed: a server's odd model, say)
        return UpdateHead(response_id, model_id, created_at, kind)
    if head is None:
        if len(_HEADS) >= _MAX_HEADS:
            _HEADS.clear()
        head = _HEADS[key] = UpdateHead(response_id, model_id, created_at, kind)
    return head


class Boxed:
    """A ``raw`` value that ``_event`` would otherwise read as an event (bytes, a template)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


class Folded:
    """The template of a folded update's event, with the text it is written from
    (``ChatResponseUpdate._fold``): the update keeps no bytes of its own."""

    __slots__ = ("source", "text")

    def __init__(self, source: EventSource, text: str) -> None:
        self.source = source
        self.text = text

    def event_of(self, text: str | None) -> bytes:
        return self.source.event_of(self.text)


def writes_events(value: object) -> bool:
    """Is ``value`` an event not written yet (an ``EventSource``)?"""
    return value is not None and hasattr(type(value), "event_of")


def is_plain(value: object) -> bool:
    """Can ``value`` stand in ``_event`` as itself (it is not read as an event)?"""
    return value is None or (
        type(value) is not bytes and type(value) is not Boxed and not writes_events(value)
    )


NO_RARE: tuple[None, None, None] = (None, None, None)


def rare_of(
    role: ChatRole | None,
    finish_reason: ChatFinishReason | None,
    additional_properties: dict[str, Any] | None,
) -> tuple[ChatRole | None, ChatFinishReason | None, dict[str, Any] | None] | None:
    """What an update's ``_rare`` slot holds: ``None`` when all three are (nearly always)."""
    if role is None and finish_reason is None and additional_properties is None:
        return None
    return (role, finish_reason, additional_properties)

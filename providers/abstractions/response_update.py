"""``ChatResponseUpdate``: one step of a streamed response.

A stream is thousands of updates, and an application usually keeps every one (to call
``ChatResponse.from_updates`` at the end), so what one update costs is paid per token: in
allocation, and again later in the cyclic collector, which walks every container object the
application still holds each time it runs. Measured on CPython 3.11 (100,000 kept updates):
an update with a one-item ``contents`` list holding a ``TextContent`` costs 1.26 µs to make
and keep, 0.53 µs of it allocation and the rest the collector; a single object costs 0.60 µs.

So the usual update, one text (or one reasoning text) and nothing else, is stored *unfolded*:
the text and its kind in two slots, and ``contents`` is made from them the first time it is
read (the list is then kept, so editing it in place works as on any other update). The chunk
the server sent is kept as the event's bytes, which the collector never walks, and parsed the
first time ``raw`` is read. Reading ``text``, ``reasoning`` or ``is_substantive`` builds
neither. The library's own per-update code (the partial response, telemetry, text recovery)
reads the unfolded fields directly (``unfolded_text``), so a pipeline that only forwards text
never builds the list either.

The fields are packed too, for the same reason (200 streams of 500 kept updates are 100,000
objects, and each slot is 8 bytes of every one): ``response_id``, ``model_id`` and
``created_at``, the same on every update of a stream, are one shared ``UpdateHead`` (the
stream's event template serves as one), and ``role``, ``finish_reason`` and
``additional_properties``, set on a stream's first and last updates only, are one ``_rare``
tuple, ``None`` on the others, which per-update code checks instead of three fields. Eight
slots, not twelve: 96 bytes an update instead of 128 (CPython 3.11, with the collector's
header). The six are properties; setting one gives that update its own head or tuple.

Otherwise it behaves as the dataclass it was: the same constructor, fields, equality (``raw``
excluded) and ``repr``.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

import orjson

from providers.abstractions.contents import (
    AIContent,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
)
from providers.abstractions.open_values import ChatFinishReason, ChatRole

__all__ = ["NO_HEAD", "ChatResponseUpdate", "EventSource", "TextKind", "UpdateHead", "parse_event"]

TextKind = type[TextContent] | type[TextReasoningContent]
_SUBSTANTIVE = (TextContent, TextReasoningContent, FunctionCallContent)


class EventSource(Protocol):
    """Where an unfolded update's event can be written again from its text: the stream's
    event template (``providers.chat_completions.event_templates``), shared by every update
    of it, so that an update read from a template keeps no bytes of its own."""

    def event_of(self, text: str) -> bytes: ...


class UpdateHead:
    """``response_id``, ``model_id`` and ``created_at`` of updates: the same on every update of
    a stream, so its updates share one (an update holds it in one slot, not three). Never
    changed once made: setting one of them on an update gives the update a head of its own.
    The stream's event template (``EventTemplate``) has the same three attributes and serves
    as the head of the updates read from it."""

    __slots__ = ("created_at", "model_id", "response_id")

    def __init__(
        self, response_id: str | None, model_id: str | None, created_at: int | None
    ) -> None:
        self.response_id = response_id
        self.model_id = model_id
        self.created_at = created_at


class _Head(Protocol):
    @property
    def response_id(self) -> str | None: ...
    @property
    def model_id(self) -> str | None: ...
    @property
    def created_at(self) -> int | None: ...


NO_HEAD = UpdateHead(None, None, None)
_HEADS: dict[tuple[Any, ...], UpdateHead] = {}
"""The heads the constructor made, by value (and type: ``1`` is not ``1.0``): updates made one
by one (the Responses API client's, a layer's) share their stream's, as the chat client's do.
Cleared when full: a few per stream, and many streams at once."""
_MAX_HEADS = 1024


def _head_of(response_id: str | None, model_id: str | None, created_at: int | None) -> _Head:
    key = (response_id, model_id, created_at, type(response_id), type(model_id), type(created_at))
    try:
        head = _HEADS.get(key)
    except TypeError:  # (a value that cannot be hashed: a server's odd model, say)
        return UpdateHead(response_id, model_id, created_at)
    if head is None:
        if len(_HEADS) >= _MAX_HEADS:
            _HEADS.clear()
        head = _HEADS[key] = UpdateHead(response_id, model_id, created_at)
    return head


def parse_event(event: bytes) -> Any:
    """An event's JSON as the stream read it: orjson, and ``json`` (on the text with invalid
    UTF-8 replaced) for what orjson refuses and ``json`` reads (``NaN``, huge integers)."""
    try:
        return orjson.loads(event)
    except ValueError:
        return json.loads(event.decode("utf-8", "replace"))


class ChatResponseUpdate:
    """One step of a streamed response: usually one server chunk for one choice.

    An update with no contents is still yielded (the role-only first chunk, a keepalive): it tells
    a watchdog the connection is alive. ``is_substantive`` separates those from real output.
    See the module docstring for how the usual update is stored.
    """

    __slots__ = ("_contents", "_event", "_head", "_kind", "_rare", "_raw", "_text", "choice_index")
    __match_args__ = (
        "contents",
        "role",
        "finish_reason",
        "response_id",
        "model_id",
        "created_at",
        "choice_index",
        "additional_properties",
    )
    __hash__ = None  # type: ignore[assignment]  # (mutable, compared by value: as the dataclass)

    _contents: list[AIContent] | None
    """``None`` while unfolded: the contents are then one ``_kind(_text)``, or none at all
    when ``_text`` is ``None`` too (a tool-call fragment's update)."""
    _text: str | None
    _kind: TextKind
    _raw: Any
    """The parsed chunk once ``raw`` has been read; before, while ``_event`` is a template and
    the update is folded, the text the template writes the event from (``_fold``)."""
    _event: bytes | EventSource | None
    """The event's bytes (or what writes them from the text: a template) while ``raw`` has not
    been read."""
    _head: _Head
    """``response_id``, ``model_id`` and ``created_at`` (``UpdateHead``), shared."""
    _rare: tuple[ChatRole | None, ChatFinishReason | None, dict[str, Any] | None] | None
    """``(role, finish_reason, additional_properties)``, or ``None`` when all three are (nearly
    every update): per-update code checks that one slot instead of three fields."""
    choice_index: int

    def __init__(  # noqa: PLR0917 - positional, as the dataclass it replaces took them
        self,
        contents: list[AIContent] | None = None,
        role: ChatRole | None = None,
        finish_reason: ChatFinishReason | None = None,
        response_id: str | None = None,
        model_id: str | None = None,
        created_at: int | None = None,
        choice_index: int = 0,
        additional_properties: dict[str, Any] | None = None,
        raw: Any = None,
    ) -> None:
        self._contents = [] if contents is None else contents
        self._text = None
        self._kind = TextContent
        self._rare = (
            None
            if role is None and finish_reason is None and additional_properties is None
            else (role, finish_reason, additional_properties)
        )
        self._head = _head_of(response_id, model_id, created_at)
        self.choice_index = choice_index
        self._raw = raw
        self._event = None

    @property
    def role(self) -> ChatRole | None:
        rare = self._rare
        return None if rare is None else rare[0]

    @role.setter
    def role(self, value: ChatRole | None) -> None:
        rare = self._rare or _NO_RARE
        self._rare = _rare_of(value, rare[1], rare[2])

    @property
    def finish_reason(self) -> ChatFinishReason | None:
        rare = self._rare
        return None if rare is None else rare[1]

    @finish_reason.setter
    def finish_reason(self, value: ChatFinishReason | None) -> None:
        rare = self._rare or _NO_RARE
        self._rare = _rare_of(rare[0], value, rare[2])

    @property
    def additional_properties(self) -> dict[str, Any] | None:
        rare = self._rare
        return None if rare is None else rare[2]

    @additional_properties.setter
    def additional_properties(self, value: dict[str, Any] | None) -> None:
        rare = self._rare or _NO_RARE
        self._rare = _rare_of(rare[0], rare[1], value)

    @property
    def response_id(self) -> str | None:
        return self._head.response_id

    @response_id.setter
    def response_id(self, value: str | None) -> None:
        head = self._head
        self._head = _head_of(value, head.model_id, head.created_at)

    @property
    def model_id(self) -> str | None:
        return self._head.model_id

    @model_id.setter
    def model_id(self, value: str | None) -> None:
        head = self._head
        self._head = _head_of(head.response_id, value, head.created_at)

    @property
    def created_at(self) -> int | None:
        return self._head.created_at

    @created_at.setter
    def created_at(self, value: int | None) -> None:
        head = self._head
        self._head = _head_of(head.response_id, head.model_id, value)

    @property
    def contents(self) -> list[AIContent]:
        contents = self._contents
        if contents is None:
            text = self._fold()
            contents = self._contents = [] if text is None else [self._kind(text)]
        return contents

    @contents.setter
    def contents(self, value: list[AIContent]) -> None:
        if self._contents is None:
            self._fold()
        self._contents = value

    def _fold(self) -> str | None:
        """Leave the unfolded form: the text, which ``_text`` stops holding. If a template
        stands for the event, the text it is written from moves to ``_raw`` (unused until
        ``raw`` is read): a layer that edits the contents (text recovery trims whitespace at
        a block's edge) must not make the update hold the event's bytes from then on."""
        text = self._text
        if text is not None and self._event is not None and type(self._event) is not bytes:
            self._raw = text
        self._text = None
        return text

    @property
    def unfolded_text(self) -> str | None:
        """The text while the update is one unfolded text (of ``unfolded_kind``), else
        ``None``: for per-update code that must not build ``contents`` to look at it."""
        return self._text if self._contents is None else None

    @property
    def unfolded_kind(self) -> TextKind:
        """``TextContent`` or ``TextReasoningContent``: what ``unfolded_text`` is."""
        return self._kind

    @property
    def raw(self) -> Any:
        """What the server sent for this update (the parsed chunk; see the module docstring)."""
        event = self._event
        if event is not None:
            if type(event) is not bytes:  # (a template: the text is where ``_fold`` left it)
                text = self._text if self._contents is None else self._raw
                event = event.event_of(text)  # type: ignore[union-attr, arg-type]
            self._raw = parse_event(event)
            self._event = None
        return self._raw

    @raw.setter
    def raw(self, value: Any) -> None:
        self._raw = value
        self._event = None

    @property
    def text(self) -> str:
        if self._contents is None:
            return (self._text or "") if self._kind is TextContent else ""
        return "".join(c.text for c in self._contents if type(c) is TextContent)

    @property
    def reasoning(self) -> str:
        if self._contents is None:
            return (self._text or "") if self._kind is TextReasoningContent else ""
        return "".join(c.text for c in self._contents if type(c) is TextReasoningContent)

    @property
    def is_substantive(self) -> bool:
        """True when the update carries output (text, reasoning or a tool call).

        Retry and failover decisions hinge on this: once a substantive update has reached the
        caller, re-sending the request would duplicate output.
        """
        contents = self._contents
        if contents is None:
            return self._text is not None  # (an unfolded text is never empty)
        for content in contents:  # noqa: SIM110 - a loop, not any(genexpr): per update
            if isinstance(content, _SUBSTANTIVE):
                return True
        return False

    def to_openai_chunk(self, *, tool_call_index: int = 0) -> dict[str, Any]:
        """This update as a ``chat.completion.chunk`` dict, which the chunk normaliser reads
        back to the same update (its reasoning before its text, as a server's delta has them).

        Properties go back in the choice (``system_fingerprint`` at the top), usage in
        ``usage`` (with ``choices: []`` when the update holds nothing else). A tool call is whole
        in an update, so it is written whole, numbered from ``tool_call_index``: readers merge
        deltas by index, so a stream with calls in several updates numbers them on.
        """
        # deferred: the writer of OpenAI answers, which a stream being read never needs
        from providers.abstractions.openai_answers import write_chunk

        return write_chunk(self, tool_call_index)

    def _compared(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in _COMPARED)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._compared() == other._compared()

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in _COMPARED)
        return f"{type(self).__name__}({fields})"

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in (*_COMPARED, "raw")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]


_NO_RARE: tuple[None, None, None] = (None, None, None)


def _rare_of(
    role: ChatRole | None,
    finish_reason: ChatFinishReason | None,
    additional_properties: dict[str, Any] | None,
) -> tuple[ChatRole | None, ChatFinishReason | None, dict[str, Any] | None] | None:
    if role is None and finish_reason is None and additional_properties is None:
        return None
    return (role, finish_reason, additional_properties)


_COMPARED = ChatResponseUpdate.__match_args__
"""The fields equality, ``repr`` and pickling read: the dataclass's, ``raw`` aside."""

"""``ChatResponseUpdate``: one step of a streamed response.

A stream is thousands of updates, and an application usually keeps every one (to call
``ChatResponse.from_updates`` at the end), so what one update costs is paid per token: in
allocation, and again later in the cyclic collector, which walks every container object the
application still holds each time it runs. Measured on CPython 3.11 (100,000 kept updates):
an update with a one-item ``contents`` list holding a ``TextContent`` costs 1.26 µs to make
and keep, 0.53 µs of it allocation and the rest the collector; a single object costs 0.60 µs.

So the usual update, one text (or one reasoning text) and nothing else, is stored *plain*:
the text in ``plain_text`` and its kind in ``head.kind``, and ``contents`` is made from them
the first time it is read (the list is then kept, so editing it in place works as on any other
update). The chunk the server sent is kept as the event's bytes, which the collector never
walks, and parsed the first time ``raw`` is read. Reading ``text``, ``reasoning`` or
``is_substantive`` builds neither. Per-update code (the partial response, telemetry, text
recovery) asks one question of an update, ``plain_text``: a string means "this text of
``head.kind`` and nothing else" (``""``: nothing at all), ``None`` means "look at the fields".
So a pipeline that only forwards text never builds the list either.

The fields are packed too, for the same reason (200 streams of 500 kept updates are 100,000
objects, and each slot is 8 bytes of every one): ``response_id``, ``model_id`` and
``created_at``, the same on every update of a stream, and the plain text's kind are one
shared ``head`` (an ``UpdateHead``; the stream's event template serves as one); ``role``,
``finish_reason`` and ``additional_properties``, set on a stream's first and last updates
only, are one ``_rare`` tuple, ``None`` on the others (an update that has them is never
plain); and the unread event and the ``raw`` value share a slot (one replaces the other when
``raw`` is read). Six slots, not twelve: 80 bytes an update instead of 128 (CPython 3.11,
with the collector's header; the allocator rounds to 16 bytes, so a seventh slot would cost
as much as an eighth). The six fields are properties; setting one gives that update its own
head or tuple.

Only this module and ``update_parts`` know the private slots; the chat client's chunk
producers (``chat_completions.normalize``, which makes the folded updates, and
``event_reader``, which keeps each one's event as its bytes) write them too. Everyone else
reads the public fields (``plain_text`` and ``head`` are read-only) and makes plain updates
with ``of_text``: ``tests/unit/architecture/test_update_friends.py`` holds that list.

Otherwise it behaves as the dataclass it was: the same constructor, fields, equality (``raw``
excluded) and ``repr``.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from providers.abstractions.contents import (
    AIContent,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
)
from providers.abstractions.open_values import ChatFinishReason, ChatRole
from providers.abstractions.update_parts import (
    NO_HEAD,
    NO_RARE,
    Boxed,
    EventSource,
    Folded,
    Head,
    TextKind,
    UpdateHead,
    head_of,
    is_plain,
    rare_of,
    writes_events,
)

__all__ = ["NO_HEAD", "ChatResponseUpdate", "EventSource", "TextKind", "UpdateHead", "parse_event"]

_SUBSTANTIVE = (TextContent, TextReasoningContent, FunctionCallContent)
_new = object.__new__


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

    __slots__ = ("_contents", "_event", "_rare", "choice_index", "head", "plain_text")
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

    plain_text: str | None
    """While the update is plain (one text of ``head.kind``, no other content, no role,
    finish reason or properties): that text, or ``""`` for no content at all (a tool-call
    fragment's update). ``None`` once it is not (read ``contents`` and the fields). Read-only:
    the one question per-update code asks (see the module docstring)."""
    head: Head
    """``response_id``, ``model_id``, ``created_at`` and the plain text's kind
    (``UpdateHead``), shared by the updates of a stream. Read-only; ``head.kind`` means
    nothing once the update is not plain."""
    _contents: list[AIContent] | None
    """``None`` exactly while the update is plain (``plain_text`` is then a string)."""
    _event: Any
    """Where ``raw`` comes from, in one slot: the event's bytes, or what writes them (the
    stream's template, from ``plain_text``; a ``Folded`` one, from its own text), while
    ``raw`` has not been read; after, or when given, the value itself (``None`` included),
    boxed (``Boxed``) only if it could be taken for one of those."""
    _rare: tuple[ChatRole | None, ChatFinishReason | None, dict[str, Any] | None] | None
    """``(role, finish_reason, additional_properties)``, or ``None`` when all three are (nearly
    every update). An update that has one is never plain (setting one folds it)."""
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
        self.plain_text = None
        self._rare = (
            None
            if role is None and finish_reason is None and additional_properties is None
            else (role, finish_reason, additional_properties)
        )
        self.head = head_of(response_id, model_id, created_at)
        self.choice_index = choice_index
        self._event = raw if is_plain(raw) else Boxed(raw)

    @classmethod
    def of_text(cls, text: str, head: Head, choice_index: int, event: Any) -> ChatResponseUpdate:
        """A plain update: ``text`` of ``head.kind`` (``""``: no content), nothing else; ``raw``
        comes from ``event`` (the event's bytes, the parsed chunk, or the stream's event
        template). How the chunk normaliser makes the usual update: no list, no tuple."""
        update = _new(cls)
        update._contents = update._rare = None
        update.plain_text = text
        update.head = head
        update.choice_index = choice_index
        update._event = event
        return update

    def _set_rare(
        self, rare: tuple[ChatRole | None, ChatFinishReason | None, dict[str, Any] | None] | None
    ) -> None:
        if rare is not None and self._contents is None:
            self.contents  # noqa: B018 - no longer plain: the contents become a list
        self._rare = rare

    @property
    def role(self) -> ChatRole | None:
        rare = self._rare
        return None if rare is None else rare[0]

    @role.setter
    def role(self, value: ChatRole | None) -> None:
        rare = self._rare or NO_RARE
        self._set_rare(rare_of(value, rare[1], rare[2]))

    @property
    def finish_reason(self) -> ChatFinishReason | None:
        rare = self._rare
        return None if rare is None else rare[1]

    @finish_reason.setter
    def finish_reason(self, value: ChatFinishReason | None) -> None:
        rare = self._rare or NO_RARE
        self._set_rare(rare_of(rare[0], value, rare[2]))

    @property
    def additional_properties(self) -> dict[str, Any] | None:
        rare = self._rare
        return None if rare is None else rare[2]

    @additional_properties.setter
    def additional_properties(self, value: dict[str, Any] | None) -> None:
        rare = self._rare or NO_RARE
        self._set_rare(rare_of(rare[0], rare[1], value))

    @property
    def response_id(self) -> str | None:
        return self.head.response_id

    @response_id.setter
    def response_id(self, value: str | None) -> None:
        head = self.head
        self.head = head_of(value, head.model_id, head.created_at, head.kind)

    @property
    def model_id(self) -> str | None:
        return self.head.model_id

    @model_id.setter
    def model_id(self, value: str | None) -> None:
        head = self.head
        self.head = head_of(head.response_id, value, head.created_at, head.kind)

    @property
    def created_at(self) -> int | None:
        return self.head.created_at

    @created_at.setter
    def created_at(self, value: int | None) -> None:
        head = self.head
        self.head = head_of(head.response_id, head.model_id, value, head.kind)

    @property
    def contents(self) -> list[AIContent]:
        contents = self._contents
        if contents is None:
            text = self._fold()
            contents = self._contents = [self.head.kind(text)] if text else []
        return contents

    @contents.setter
    def contents(self, value: list[AIContent]) -> None:
        if self._contents is None:
            self._fold()
        self._contents = value

    def _fold(self) -> str | None:
        """Leave the plain form: the text, which ``plain_text`` stops holding. If a template
        stands for the event, the text it is written from goes with it (``Folded``): a layer
        that edits the contents (text recovery trims whitespace at a block's edge) must not
        make the update hold the event's bytes from then on."""
        text = self.plain_text
        event = self._event
        if text and writes_events(event) and type(event) is not Folded:
            self._event = Folded(event, text)
        self.plain_text = None
        return text

    def replace_text(self, text: str) -> None:
        """A plain update's text replaced by ``text`` (``""``: no content), the update staying
        plain: for a layer that moves whitespace at a block's edge (text recovery), at the cost
        of a string. The event keeps the text it was written from, as ``_fold`` keeps it."""
        if self._contents is not None:
            raise ValueError("replace_text: the update is not plain (set contents instead)")
        self._fold()
        self.plain_text = text

    def make_plain(self) -> None:
        """Back to the plain form if the update is one again (one text of the head's kind and
        nothing else, or nothing at all): for a layer that replaced the contents (text recovery
        trims a block's whitespace), so that an update it edited costs a caller who keeps it no
        more than one it did not, and reads as plain to the layers after it. The event stays as
        ``_fold`` left it."""
        contents = self._contents
        if contents is None or len(contents) > 1 or self._rare is not None:
            return
        if contents:
            only = contents[0]
            if (
                type(only) is not self.head.kind
                or only.additional_properties is not None
                or only.raw is not None
                or not only.text
            ):
                return
            self.plain_text = only.text
        else:
            self.plain_text = ""
        self._contents = None

    @property
    def raw(self) -> Any:
        """What the server sent for this update (the parsed chunk; see the module docstring)."""
        event = self._event
        kind = type(event)
        if kind is bytes:
            raw = parse_event(event)
        elif kind is Boxed:
            return event.value
        elif writes_events(event):  # (a template: the text is ``plain_text``, or in ``Folded``)
            raw = parse_event(event.event_of(self.plain_text))
        else:
            return event  # (the value itself: parsed already, or given)
        self._event = raw if is_plain(raw) else Boxed(raw)
        return raw

    @raw.setter
    def raw(self, value: Any) -> None:
        self._event = value if is_plain(value) else Boxed(value)

    @property
    def text(self) -> str:
        if self._contents is None:
            return self.plain_text if self.head.kind is TextContent else ""  # type: ignore[return-value]
        return "".join(c.text for c in self._contents if type(c) is TextContent)

    @property
    def reasoning(self) -> str:
        if self._contents is None:
            return self.plain_text if self.head.kind is TextReasoningContent else ""  # type: ignore[return-value]
        return "".join(c.text for c in self._contents if type(c) is TextReasoningContent)

    @property
    def is_substantive(self) -> bool:
        """True when the update carries output (text, reasoning or a tool call).

        Retry and failover decisions hinge on this: once a substantive update has reached the
        caller, re-sending the request would duplicate output.
        """
        contents = self._contents
        if contents is None:
            return bool(self.plain_text)
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


_COMPARED = ChatResponseUpdate.__match_args__
"""The fields equality, ``repr`` and pickling read: the dataclass's, ``raw`` aside."""

"""``ChatResponseUpdate`` (one streamed step) and ``ChatResponse`` (the whole answer).

``ChatResponse.from_updates`` is the one function that turns a stream into a response; the
non-streaming path builds its response through it too, so a streamed and a non-streamed call
to the same server cannot disagree about what the answer was.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field
from typing import Any

from providers.abstractions.contents import (
    AIContent,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
    UsageContent,
    UsageDetails,
)
from providers.abstractions.messages import ChatMessage
from providers.abstractions.open_values import ChatFinishReason, ChatRole
from providers.abstractions.records import value_class
from providers.abstractions.response_update import ChatResponseUpdate, TextKind

__all__ = ["ChatResponse", "ChatResponseBuilder", "ChatResponseUpdate"]

_SUBSTANTIVE = (TextContent, TextReasoningContent, FunctionCallContent)


@value_class()
class ChatResponse:
    """A complete answer: one message per choice (usually one), and what the server said."""

    messages: list[ChatMessage] = field(default_factory=list)
    response_id: str | None = None
    model_id: str | None = None
    created_at: int | None = None
    finish_reason: ChatFinishReason | None = None
    usage: UsageDetails | None = None
    additional_properties: dict[str, Any] = field(default_factory=dict)
    raw: Any = field(default=None, repr=False, compare=False)

    @property
    def text(self) -> str:
        return "".join(m.text for m in self.messages)

    @property
    def reasoning(self) -> str:
        return "".join(m.reasoning for m in self.messages)

    @property
    def tool_calls(self) -> list[FunctionCallContent]:
        return [c for m in self.messages for c in m.tool_calls]

    def to_openai(self) -> dict[str, Any]:
        """This response as a ``chat.completion`` dict, which the chunk normaliser's
        ``normalize_completion`` reads back to the same response."""
        # deferred: the writer of OpenAI answers, which a stream being read never needs
        from providers.abstractions.openai_answers import write_completion

        return write_completion(self)

    @classmethod
    def from_updates(cls, updates: Iterable[ChatResponseUpdate]) -> ChatResponse:
        """Coalesce a stream into the response a non-streamed call would have returned.

        One pass, appending; adjacent text (and adjacent reasoning) is merged once at the end, so
        10,000 one-character updates cost 10,000 appends and one join. Usage is not summed:
        servers report it cumulatively, so later reports replace earlier ones field by field.
        """
        builder = ChatResponseBuilder()
        builder.add_all(updates)
        return builder.build()


class ChatResponseBuilder:
    """``from_updates`` one update at a time, for whoever must be able to stop anywhere.

    The client keeps one per stream (``keep_raw=False``) so a failure can hand the caller a
    partial response without retaining every raw chunk, which the caller already received.
    """

    __slots__ = (
        "_by_choice",
        "_contents",
        "_created_at",
        "_finish_reason",
        "_ids_missing",
        "_index",
        "_keep_raw",
        "_model_id",
        "_properties",
        "_raws",
        "_response_id",
        "_roles",
        "_run",
        "_usage",
        "count",
        "substantive",
    )

    def __init__(self, *, keep_raw: bool = True) -> None:
        # Containers are made when first needed: a client holds one builder per stream, and
        # many concurrent streams wait for their first byte holding nothing else.
        self._keep_raw = keep_raw
        self._response_id: str | None = None
        self._model_id: str | None = None
        self._created_at: int | None = None
        self._finish_reason: ChatFinishReason | None = None
        self._usage: UsageDetails | None = None
        self._properties: dict[str, Any] | None = None
        self._roles: dict[int, ChatRole] | None = None
        self._raws: list[ChatResponseUpdate] | None = None  # the updates that have a raw
        self._by_choice: dict[int, list[AIContent | _Run]] | None = None
        self._index: int | None = None  # the choice of the last update, its contents and run
        self._contents = _NONE_YET
        self._run: _Run | None = None
        self._ids_missing = True  # response id, model id or creation time not known yet
        self.count = 0
        self.substantive = False
        """Has an update with text, reasoning or a tool call been added?"""

    def add(self, update: ChatResponseUpdate) -> None:
        # Per update, on every stream (twice: the client keeps one for partial responses), so
        # the usual update (one text content, nothing else) takes as few steps as possible.
        self.count += 1
        if self._ids_missing:
            self._take_ids(update)
        if self._keep_raw:
            if self._raws is None:
                self._raws = []
            self._raws.append(update)  # (its raw is read when the response's is)
        contents = self._contents
        if update.choice_index != self._index:
            contents = self._choice(update.choice_index)
        text = update.plain_text
        if text is not None:  # plain (``response_update``): one text, or nothing, no fields
            if text:
                self._add_text(update.head.kind, text, None, contents)
            return
        finish_reason = update.finish_reason
        if finish_reason is not None:
            self._finish_reason = finish_reason
        role = update.role
        if role is not None:
            self._take_role(update.choice_index, role)
        properties = update.additional_properties
        if properties:
            if self._properties is None:
                self._properties = {}
            self._properties.update(properties)
        for content in update.contents:
            kind = type(content)
            if kind is TextContent or kind is TextReasoningContent:
                self._add_text(
                    kind,
                    content.text,  # type: ignore[attr-defined]
                    content.additional_properties,
                    contents,
                )
            elif kind is UsageContent:
                usage = self._usage
                self._usage = (
                    content.details  # type: ignore[attr-defined]
                    if usage is None
                    else usage.updated_with(content.details)  # type: ignore[attr-defined]
                )
            else:
                if not self.substantive and isinstance(content, _SUBSTANTIVE):
                    self.substantive = True
                self._run = None
                contents.append(content)

    def _add_text(
        self,
        kind: TextKind,
        text: str,
        props: dict[str, Any] | None,
        contents: list[AIContent | _Run],
    ) -> None:
        self.substantive = True
        run = self._run
        if run is not None and run.kind is kind:
            texts = run.texts
            texts.append(text)
            if len(texts) == _RUN_BLOCK:
                run.compact()
        else:
            run = self._run = _Run(kind, text, props)
            contents.append(run)

    def add_all(self, updates: Iterable[ChatResponseUpdate]) -> None:
        """``add`` each of ``updates``.

        Hot path: the usual update (plain: one text of the current run's kind and choice, or
        no contents at all, and nothing else) is taken inline; any other goes through ``add``.
        """
        keep_raw = self._keep_raw
        raws = self._raws
        added = 0
        run = self._run
        index = self._index
        ids_missing = self._ids_missing
        for update in updates:
            text = update.plain_text
            if (
                text is not None
                and update.choice_index == index
                and not ids_missing
                and (not text or (run is not None and run.kind is update.head.kind))
            ):
                added += 1
                if keep_raw:
                    if raws is None:
                        raws = self._raws = []
                    raws.append(update)
                if text:
                    texts = run.texts  # type: ignore[union-attr]
                    texts.append(text)
                    if len(texts) == _RUN_BLOCK:
                        run.compact()  # type: ignore[union-attr]
                continue
            self.add(update)
            run = self._run
            index = self._index
            ids_missing = self._ids_missing
            raws = self._raws
        self.count += added

    def _take_ids(self, update: ChatResponseUpdate) -> None:
        if self._response_id is None:
            self._response_id = update.response_id
        if self._model_id is None:
            self._model_id = update.model_id
        if self._created_at is None:
            self._created_at = update.created_at
        self._ids_missing = (
            self._response_id is None or self._model_id is None or self._created_at is None
        )

    def _take_role(self, index: int, role: ChatRole) -> None:
        if self._roles is None:
            self._roles = {}
        if index not in self._roles:
            self._roles[index] = role

    def _choice(self, index: int) -> list[AIContent | _Run]:
        if self._by_choice is None:
            self._by_choice = {}
        contents = self._by_choice.get(index)
        if contents is None:
            contents = self._by_choice[index] = []
        self._index = index
        self._contents = contents
        last = contents[-1] if contents else None
        self._run = last if type(last) is _Run else None
        return contents

    def build(self) -> ChatResponse:
        """The response so far; the builder can go on accepting updates afterwards."""
        by_choice = self._by_choice or {}
        roles = self._roles or {}
        return ChatResponse(
            [
                ChatMessage(roles.get(index, ChatRole.ASSISTANT), _contents(by_choice[index]))
                for index in sorted(by_choice)
            ],
            self._response_id,
            self._model_id,
            self._created_at,
            self._finish_reason,
            self._usage,
            dict(self._properties or {}),
            _PendingRaw(list(self._raws)) if self._raws else [],
        )

    def output_bytes(self, measured: dict[int, tuple[int, int]]) -> int:
        """UTF-8 size of the text, reasoning and tool-call arguments added so far: what
        ``Limits.max_output_bytes`` bounds. Rare (the wire client asks only once a stream's
        bytes could hold that much), and incremental: a run's blocks never change once made,
        so ``measured`` (the caller's, kept between calls: run id to blocks measured and their
        size) makes each call cost the blocks made since the last, not the whole text."""
        total = 0
        for entries in (self._by_choice or {}).values():
            for entry in entries:
                if type(entry) is _Run:
                    blocks = entry.blocks or []
                    done, size = measured.get(id(entry), (0, 0))
                    for block in blocks[done:]:
                        size += _utf8_size(block)
                    measured[id(entry)] = (len(blocks), size)
                    total += size + sum(map(_utf8_size, entry.texts))
                elif type(entry) is FunctionCallContent:
                    total += _utf8_size(entry.raw_arguments)
        return total


class _Run:
    """Adjacent text (or adjacent reasoning) of one choice.

    Deltas are a few characters each, and a str object costs about 50 bytes before its first
    character, so a run keeps at most ``_RUN_BLOCK`` of them and joins them into a block as they
    fill: a stream of thousands of deltas holds about its text's size instead of ten times it,
    and no content object per delta either (the client and its caller each keep a builder, so
    this is paid twice per stream). The run keeps the first content's ``additional_properties``;
    ``raw`` is dropped because it no longer describes one server object (the response keeps
    every raw chunk).
    """

    __slots__ = ("blocks", "kind", "props", "texts")

    def __init__(self, kind: TextKind, text: str, props: dict[str, Any] | None) -> None:
        self.kind = kind
        self.props = props
        self.texts: list[str] = [text]
        self.blocks: list[str] | None = None

    def compact(self) -> None:
        """Join the pending deltas into one block (linear: blocks are never joined again)."""
        block = "".join(self.texts)
        if self.blocks is None:
            self.blocks = [block]
        else:
            self.blocks.append(block)
        self.texts.clear()

    def content(self) -> AIContent:
        texts = self.texts
        if self.blocks is not None:
            text = "".join(self.blocks) + "".join(texts)
        else:
            text = texts[0] if len(texts) == 1 else "".join(texts)
        return self.kind(text, additional_properties=self.props)


_RUN_BLOCK = 32
"""Deltas a run holds before joining them: bounds the per-delta overhead at 1/32 of a str's."""


def _contents(entries: list[AIContent | _Run]) -> list[AIContent]:
    return [entry.content() if isinstance(entry, _Run) else entry for entry in entries]


def _utf8_size(text: str) -> int:
    """UTF-8 length of ``text``, without encoding it when it is ASCII (the usual case)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


_NONE_YET: list[AIContent | _Run] = []  # never appended to: no update has choice_index None


class _PendingRaw:
    """A streamed response's ``raw`` until it is read: the updates whose chunks make it.

    An update keeps its chunk as the event's bytes (``response_update``); building the list of
    parsed chunks for every response would parse every event a second time, for a field most
    callers never read. ``ChatResponse.raw`` builds it on first access instead.
    """

    __slots__ = ("updates",)

    def __init__(self, updates: list[ChatResponseUpdate]) -> None:
        self.updates = updates


def _lazy_raw(slot: Any) -> property:
    """``ChatResponse.raw`` over the slot the dataclass made: a ``_PendingRaw`` is replaced
    by the list of its updates' chunks the first time it is read."""

    def get(response: ChatResponse) -> Any:
        value = slot.__get__(response, ChatResponse)
        if type(value) is _PendingRaw:
            value = [raw for update in value.updates if (raw := update.raw) is not None]
            slot.__set__(response, value)
        return value

    return property(get, slot.__set__, doc="What the server sent: the body, or each chunk.")


setattr(ChatResponse, "raw", _lazy_raw(ChatResponse.__dict__["raw"]))  # noqa: B010

"""Chunk normalisation: one server JSON chunk in, ``ChatResponseUpdate``s out.

This is where the servers' differences end (docs/wire.md §2, §3):

* the delta is read *before* ``finish_reason``: vLLM puts the last token and the finish in one
  chunk, and a reader that checks the finish first drops that token;
* reasoning comes from the profile's ``reasoning_fields`` (``reasoning_content`` or
  ``reasoning``), only the first present one, so a server sending both is not counted twice;
* usage-only chunks (``choices: []``) become an update holding a ``UsageContent``;
* tool-call deltas are merged by a ``ToolCallAccumulator`` per choice and flushed when that
  choice finishes, and again at the end of the stream whatever happened;
* ``stop_reason`` (vLLM) and ``matched_stop`` (SGLang) become ``stop_sequence``; every other
  non-null field the normaliser does not model is kept in ``additional_properties``, and the
  untouched chunk in ``raw``;
* a top-level ``error`` raises the typed error (the client attaches the partial response).

It does no I/O and knows nothing of HTTP or SSE: ``feed`` takes parsed chunks, ``read_events``
the events' JSON bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from providers.abstractions.chat_response import ChatResponseUpdate
from providers.abstractions.contents import (
    AIContent,
    TextContent,
    TextReasoningContent,
    UsageContent,
)
from providers.abstractions.errors import InvalidResponseError
from providers.abstractions.limits import DEFAULT_LIMITS, Limits
from providers.abstractions.open_values import ChatFinishReason, ChatRole, finish_reason_of, role_of
from providers.abstractions.response_update import NO_HEAD, UpdateHead
from providers.abstractions.usage import parse_usage
from providers.backends import BackendProfile, profile_for
from providers.chat_completions.chunk_shapes import (
    NO_SHAPE,
    fragment_template_for,
    non_null,
    template_for,
)
from providers.chat_completions.chunk_shapes import shape as shape_of
from providers.chat_completions.event_reader import ReaderState, read_events
from providers.chat_completions.event_templates import RELEARN_BUDGET
from providers.chat_completions.tool_call_accumulator import ToolCallAccumulator, mark_cut_call
from providers.transport.error_classification import error_from_stream_event

__all__ = ["ChunkNormalizer"]

_new = object.__new__
"""Instances of the per-chunk classes are made with ``_new`` and their fields set one by one:
in CPython 3.11 a call to a dataclass runs its ``__init__`` through the slow generic path,
which for one update and one text per chunk was a tenth of the client's cost. Every field must
be set (``tests/unit/providers/chat_completions/test_normalize_shapes.py`` checks it, so a new
field cannot be missed)."""

_TOP_LEVEL = frozenset(
    {"id", "object", "created", "model", "choices", "usage", "system_fingerprint"}
)
_CHOICE = frozenset({"index", "delta", "message", "finish_reason"})
_DELTA = frozenset({"role", "content", "tool_calls"})


class ChunkNormalizer:
    """Stateful across one response: ``feed(chunk)`` per chunk, ``finish()`` once at the end.

    The per-chunk path is the client's hottest code: what depends only on which keys a chunk,
    its choice and its delta have is worked out once per shape (``chunk_shapes``), not per chunk.
    """

    __slots__ = (
        "_choice",
        "_delta",
        "_fingerprint",
        "_head",
        "_limits",
        "_offered_tools",
        "_profile",
        "_reasoning_fields",
        "_redact_fingerprint",
        "_stop_fields",
        "_tools",
        "_top",
        "backend",
        "done",
        "finished",
        "reader",
    )

    def __init__(
        self,
        profile: BackendProfile | str | None = None,
        *,
        redact_fingerprint: bool = False,
        offered_tools: frozenset[str] | None = None,
        limits: Limits | None = None,
    ) -> None:
        # ``offered_tools``: the tools the request offered; a call naming another gets ``error``
        # (``None``: not checked). ``limits`` bound what the tool calls may make it hold.
        self._offered_tools = offered_tools
        self._limits = limits
        self._profile = profile_for(profile)
        self.backend = self._profile.name
        self._reasoning_fields = self._profile.reasoning_fields
        self._stop_fields = self._profile.stop_sequence_fields
        self._redact_fingerprint = redact_fingerprint
        self._tools: dict[int, ToolCallAccumulator] = {}
        self._fingerprint: object = None
        self._top = self._choice = self._delta = NO_SHAPE  # the last shape at each level
        # What the full path learns (the stream's templates), for ``read_events``.
        self.reader = ReaderState((limits or DEFAULT_LIMITS).max_json_depth, RELEARN_BUDGET)
        self._head = NO_HEAD  # the last updates' ids and time (``UpdateHead``), shared
        self.done = False  # `data: [DONE]` read (``read_events``)
        self.finished = False  # a finish reason read (``read_events``)

    def feed(self, chunk: Mapping[str, Any]) -> list[ChatResponseUpdate]:
        """Normalise one streamed chunk (``chat.completion.chunk``), already parsed.

        The client reads events with ``read_events``, which takes the stream's common chunk
        (``Template``) without this path; this one learns the template from the chunks it reads.
        """
        fragment_template = self.reader.fragment
        if fragment_template is not None:
            fragment = fragment_template.read(chunk, self.append_arguments)
            if fragment is not None:
                return [fragment]
        return self.feed_full(chunk)

    def feed_full(self, chunk: Mapping[str, Any]) -> list[ChatResponseUpdate]:
        """The full path (``feed`` without the tool-call template), learning the stream's
        templates (``reader``) from what it reads."""
        updates = self._normalize(chunk, "delta")
        if len(updates) == 1:
            update = updates[0]
            if len(update.contents) == 1:
                found = template_for(chunk, update, self._fingerprint)
                if found is not None:
                    self.reader.template = found
            elif not update.contents and self._tools:
                reader = self.reader
                reader.fragment = fragment_template_for(chunk, update) or reader.fragment
        return updates

    def read_events(self, events: list[bytes]) -> tuple[list[ChatResponseUpdate], Exception | None]:
        """The updates of one network read's events (``data:`` payloads), and the error that
        stopped it, if one did (the updates before it are the caller's all the same); see
        ``event_reader``, which holds this hot path. ``[DONE]`` sets ``done``."""
        return read_events(self, events)

    def append_arguments(self, choice: int, call: int, text: str) -> bool:
        """Add a fragment of call ``call``'s arguments on choice ``choice``, if that call exists
        (``FragmentTemplate.read``)."""
        accumulator = self._tools.get(choice)
        return accumulator is not None and accumulator.append_arguments(call, text)

    def writing_tool_call(self) -> bool:
        """Have tool-call deltas arrived that no update has carried yet? (A call becomes a
        ``FunctionCallContent`` only when complete, but its deltas are output all the same: the
        first-token budget must stop at the first of them.)"""
        return any(self._tools.values())

    def pending_argument_bytes(self) -> int:
        """The argument text of the tool calls no update has carried yet (``max_output_bytes``)."""
        return sum(accumulator.pending_bytes() for accumulator in self._tools.values())

    def finish(self) -> list[ChatResponseUpdate]:
        """Tool calls still pending at the end of the stream (no finish chunk came for them)."""
        updates = []
        for index, accumulator in self._tools.items():
            if accumulator:
                updates.append(ChatResponseUpdate(list(accumulator.flush()), choice_index=index))
        return updates

    def normalize_completion(self, body: Mapping[str, Any]) -> list[ChatResponseUpdate]:
        """A non-streamed ``chat.completion`` as the updates a stream of it would have given.

        Going through updates lets ``ChatResponse.from_updates`` build both kinds of response.
        """
        if not isinstance(body.get("choices"), list):
            if body.get("error") is not None:
                raise error_from_stream_event(body, backend=self.backend)
            raise InvalidResponseError("the response has no `choices` list", backend=self.backend)
        updates = self._normalize(body, "message")
        updates.extend(self.finish())
        return updates

    def _normalize(self, chunk: Mapping[str, Any], delta_key: str) -> list[ChatResponseUpdate]:
        """Hot path: every chunk of every stream passes here, so it is one frame, with each
        field read inline rather than through a helper call per field."""
        if "error" in chunk and chunk["error"] is not None:
            raise error_from_stream_event(chunk, backend=self.backend)
        response_id = chunk.get("id")
        if response_id is not None and type(response_id) is not str:
            # A number is an opaque id still; any other type is dropped, never its repr.
            response_id = str(response_id) if type(response_id) is int else None
        model_id = chunk.get("model")
        created = chunk.get("created")
        if type(created) is not int:
            created = None
        shape = self._top
        if chunk.keys() != shape.keys:  # a new shape: rare
            shape = self._top = shape_of(chunk, _TOP_LEVEL)
        extras = None
        values = shape.values
        if values is not None and values(chunk) != shape.nones:
            extras = non_null(chunk, shape.unknown, None)
        if shape.fingerprint:
            fingerprint = chunk["system_fingerprint"]
            # llama.cpp repeats it on every chunk: record it when it changes, not per update.
            if fingerprint is not None and fingerprint != self._fingerprint:
                self._fingerprint = fingerprint
                self.reader.template = self.reader.fragment = None  # (learnt under the old one)
                if not self._redact_fingerprint:
                    if extras is None:
                        extras = {}
                    extras["system_fingerprint"] = fingerprint
        usage = chunk["usage"] if shape.usage else None
        details = parse_usage(usage) if usage is not None and _is_mapping(usage) else None

        updates: list[ChatResponseUpdate] = []
        choices = chunk.get("choices")
        if choices:
            # Each choice inline, not in a method: this runs once per chunk of every stream.
            for choice in choices:
                if not (type(choice) is dict or isinstance(choice, Mapping)):
                    continue
                index = choice.get("index")
                if type(index) is not int:
                    index = 0
                delta = choice.get(delta_key)
                contents: list[AIContent] = []
                choice_extras: dict[str, Any] | None = None
                role: ChatRole | None = None
                if type(delta) is dict or isinstance(delta, Mapping):
                    shape = self._delta
                    if delta.keys() != shape.keys:  # a new shape: rare
                        shape = self._delta = shape_of(delta, _DELTA, self._reasoning_fields)
                    name = shape.reasoning_field
                    if name is not None:  # one reasoning field (the usual case), inline
                        value = delta[name]
                        if value and type(value) is str:
                            thought = _new(TextReasoningContent)  # see _new
                            thought.text = value
                            thought.raw = thought.additional_properties = None
                            contents.append(thought)
                        elif value is not None and value != "":
                            choice_extras = {name: value}  # not text: kept, as _reasoning does
                    elif shape.reasoning:
                        choice_extras = _reasoning(delta, shape.reasoning, contents)
                    content = delta.get("content")
                    if content and type(content) is str:
                        text = _new(TextContent)  # TextContent(content), see _new
                        text.text = content
                        text.raw = text.additional_properties = None
                        contents.append(text)
                    elif content is not None and type(content) is not str:
                        # Content parts we do not model: kept, not dropped.
                        choice_extras = choice_extras or {}
                        choice_extras["content"] = content
                    if shape.rare:
                        tool_calls = delta.get("tool_calls")
                        if tool_calls:
                            accumulator = self._tools.get(index)
                            if accumulator is None:
                                accumulator = self._tools[index] = ToolCallAccumulator(
                                    self._offered_tools, self._limits
                                )
                            accumulator.add(tool_calls, positional=delta_key == "message")
                        value = delta.get("role")
                        if value and type(value) is str:
                            role = role_of(value)
                        values = shape.values
                        if values is not None and values(delta) != shape.nones:
                            choice_extras = non_null(delta, shape.unknown, choice_extras)
                finish_reason: ChatFinishReason | None = None
                finish = choice.get("finish_reason")
                if finish and type(finish) is str:
                    finish_reason = finish_reason_of(finish)
                    accumulator = self._tools.get(index)
                    if accumulator:
                        calls = accumulator.flush()
                        if finish_reason == ChatFinishReason.LENGTH:
                            mark_cut_call(calls)
                        contents.extend(calls)
                shape = self._choice
                if choice.keys() != shape.keys:  # a new shape: rare
                    shape = self._choice = shape_of(choice, _CHOICE)
                values = shape.values
                if values is not None and values(choice) != shape.nones:
                    choice_extras = non_null(
                        choice, shape.unknown, choice_extras, self._stop_fields
                    )
                update = _new(ChatResponseUpdate)  # ChatResponseUpdate(...), see _new
                update._contents = contents  # (folded: ``ChatResponseUpdate.of_text``
                update.plain_text = None  # makes the plain ones)
                update._rare = (
                    None
                    if role is None and finish_reason is None and choice_extras is None
                    else (role, finish_reason, choice_extras)
                )
                head = self._head
                if (
                    head.response_id != response_id
                    or head.model_id != model_id
                    or head.created_at != created
                    or type(model_id) is not type(head.model_id)
                ):
                    if type(model_id) is not str:
                        model_id = None  # (dropped when a head is made, not read per chunk)
                    head = self._head = UpdateHead(response_id, model_id, created)
                update.head = head
                update.choice_index = index
                update._event = chunk  # (``raw``: the parsed chunk itself)
                updates.append(update)
        if not updates:
            if type(model_id) is not str:
                model_id = None
            updates.append(
                ChatResponseUpdate([], None, None, response_id, model_id, created, 0, None, chunk)
            )
        if extras:
            first = updates[0]
            if first.additional_properties is None:
                first.additional_properties = extras
            else:
                first.additional_properties.update(extras)
        if details is not None:
            updates[-1].contents.append(UsageContent(details, raw=usage))
        return updates


def _reasoning(
    delta: Mapping[str, Any], fields: tuple[str, ...], contents: list[AIContent]
) -> dict[str, Any] | None:
    """Append the reasoning (the first present field holding text); return the extras.

    A reasoning field holding something else than the reasoning read (a second, *different*
    text; not null, not empty) is kept in the extras; the same text under a second name is not
    counted twice.
    """
    reasoning = None
    for name in fields:
        value = delta[name]
        if value and type(value) is str:
            reasoning = value
            text = _new(TextReasoningContent)  # TextReasoningContent(value), see _new
            text.text = value
            text.raw = text.additional_properties = None
            contents.append(text)
            break
    if reasoning is not None and len(fields) == 1:
        return None
    extras: dict[str, Any] | None = None
    for name in fields:
        value = delta[name]
        if value is not None and value not in (reasoning, ""):
            if extras is None:
                extras = {}
            extras[name] = value
    return extras


def _is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(x, Mapping)`` goes through the ABC machinery (0.19 us); parsed JSON is a
    plain dict, so check that first (0.03 us)."""
    return type(value) is dict or isinstance(value, Mapping)

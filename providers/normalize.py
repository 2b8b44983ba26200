"""Chunk normalisation: one server JSON chunk in, ``ChatResponseUpdate``s out.

This is where the servers' differences end (research/wire.md §2, §3, §7):

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

It does no I/O and knows nothing of HTTP or SSE: tests feed it dicts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeGuard

from providers._open_values import ChatFinishReason, ChatRole, finish_reason_of, role_of
from providers.chat_response import ChatResponseUpdate
from providers.contents import (
    AIContent,
    TextContent,
    TextReasoningContent,
    UsageContent,
)
from providers.errors import InvalidResponseError, error_from_stream_event
from providers.profiles import BackendProfile, profile_for
from providers.tool_call_accumulator import ToolCallAccumulator, mark_cut_call
from providers.usage import parse_usage

__all__ = ["ChunkNormalizer"]

_TOP_LEVEL = frozenset(
    {"id", "object", "created", "model", "choices", "usage", "system_fingerprint"}
)
_CHOICE = frozenset({"index", "delta", "message", "finish_reason"})
_DELTA = frozenset({"role", "content", "tool_calls"})


class ChunkNormalizer:
    """Stateful across one response: ``feed(chunk)`` per chunk, ``finish()`` once at the end."""

    __slots__ = (
        "_backend",
        "_fingerprint",
        "_profile",
        "_reasoning_fields",
        "_redact_fingerprint",
        "_stop_fields",
        "_tools",
    )

    def __init__(
        self, profile: BackendProfile | str | None = None, *, redact_fingerprint: bool = False
    ) -> None:
        self._profile = profile_for(profile)
        self._backend = self._profile.name
        self._reasoning_fields = self._profile.reasoning_fields
        self._stop_fields = self._profile.stop_sequence_fields
        self._redact_fingerprint = redact_fingerprint
        self._tools: dict[int, ToolCallAccumulator] = {}
        self._fingerprint: object = None

    def feed(self, chunk: Mapping[str, Any]) -> list[ChatResponseUpdate]:
        """Normalise one streamed chunk (``chat.completion.chunk``)."""
        return self._normalize(chunk, "delta")

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
                raise error_from_stream_event(body, backend=self._backend)
            raise InvalidResponseError("the response has no `choices` list", backend=self._backend)
        updates = self._normalize(body, "message")
        updates.extend(self.finish())
        return updates

    def _normalize(self, chunk: Mapping[str, Any], delta_key: str) -> list[ChatResponseUpdate]:
        if "error" in chunk and chunk["error"] is not None:
            raise error_from_stream_event(chunk, backend=self._backend)
        response_id = chunk.get("id")
        if response_id is not None and type(response_id) is not str:
            response_id = str(response_id)
        model_id = chunk.get("model")
        created = chunk.get("created")
        if type(created) is not int:
            created = None
        extras = self._top_level_extras(chunk)
        usage = chunk.get("usage")
        details = parse_usage(usage) if _is_mapping(usage) else None

        updates: list[ChatResponseUpdate] = []
        choices = chunk.get("choices")
        if choices:
            for choice in choices:
                if _is_mapping(choice):
                    update = self._choice_update(
                        choice, delta_key, response_id, model_id, created, chunk
                    )
                    updates.append(update)
        if not updates:
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

    def _top_level_extras(self, chunk: Mapping[str, Any]) -> dict[str, Any] | None:
        extras: dict[str, Any] | None = None
        unknown = chunk.keys() - _TOP_LEVEL  # one C-level pass; usually a few null keys
        if unknown:
            for key in unknown:
                value = chunk[key]
                if value is not None:
                    if extras is None:
                        extras = {}
                    extras[key] = value
        fingerprint = chunk.get("system_fingerprint")
        # llama.cpp repeats it on every chunk: record it when it changes, not per update.
        if fingerprint is not None and fingerprint != self._fingerprint:
            self._fingerprint = fingerprint
            if not self._redact_fingerprint:
                if extras is None:
                    extras = {}
                extras["system_fingerprint"] = fingerprint
        return extras

    def _choice_update(  # noqa: PLR0917 - positional on purpose: called once per chunk
        self,
        choice: Mapping[str, Any],
        delta_key: str,
        response_id: str | None,
        model_id: str | None,
        created: int | None,
        chunk: Mapping[str, Any],
    ) -> ChatResponseUpdate:
        index = choice.get("index")
        if type(index) is not int:
            index = 0
        delta = choice.get(delta_key)
        contents: list[AIContent] = []
        extras: dict[str, Any] | None = None
        role: ChatRole | None = None
        if _is_mapping(delta):
            reasoning = None
            for name in self._reasoning_fields:
                value = delta.get(name)
                if value and type(value) is str:
                    reasoning = value
                    break
            if reasoning is not None:
                contents.append(TextReasoningContent(reasoning))
            content = delta.get("content")
            if content and type(content) is str:
                contents.append(TextContent(content))
            tool_calls = delta.get("tool_calls")
            if tool_calls:
                accumulator = self._tools.get(index)
                if accumulator is None:
                    accumulator = self._tools[index] = ToolCallAccumulator()
                if delta_key == "message":
                    # Non-streamed calls carry no index; their position is it.
                    tool_calls = [
                        {**entry, "index": i} if _is_mapping(entry) else entry
                        for i, entry in enumerate(tool_calls)
                    ]
                accumulator.add(tool_calls)
            value = delta.get("role")
            if value and type(value) is str:
                role = role_of(value)
            for key in delta.keys() - _DELTA:
                value = delta[key]
                if value is None:
                    continue
                if key in self._reasoning_fields and value in (reasoning, ""):
                    continue  # the reasoning read above, or the same text under a second name
                extras = extras or {}
                extras[key] = value  # includes a second, *different* reasoning text: kept
            if content is not None and type(content) is not str:
                extras = extras or {}
                extras["content"] = content  # content parts we do not model: kept, not dropped
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
        for key in choice.keys() - _CHOICE:
            value = choice[key]
            if value is None:
                continue
            extras = extras or {}
            if key in self._stop_fields:
                extras["stop_sequence"] = value
            else:
                extras[key] = value
        return ChatResponseUpdate(
            contents, role, finish_reason, response_id, model_id, created, index, extras, chunk
        )


def _is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    """``isinstance(x, Mapping)`` goes through the ABC machinery (0.19 us); parsed JSON is a
    plain dict, so check that first (0.03 us)."""
    return type(value) is dict or isinstance(value, Mapping)

"""Responses-API events (and whole response objects) in, ``ChatResponseUpdate``s out.

Where the Responses servers' differences end, as ``providers.chat_completions.normalize`` is for chat chunks:

* text: ``response.output_text.delta``;
* reasoning, under every name in use: ``response.reasoning_text.delta`` (vLLM, SGLang,
  llama.cpp), ``response.reasoning.delta`` (OpenAI, newer vLLM) and the summary family
  ``response.reasoning_summary_text.delta`` (OpenAI, SGLang);
* function calls: the ``function_call`` output item plus ``response.function_call_arguments.*``;
  the call is released whole once its item is done (the item's ``arguments`` are authoritative)
  *and* the model has gone past it (the next output item starts, or the response ends), or at
  the end of a stream that was cut before. A response that ends ``incomplete`` (a token cut)
  while its last item is a call marks that call with ``error``: the cut fell inside it, or
  before the calls that would have followed, and SGLang still calls the item ``completed``;
* the terminal ``response.completed`` / ``response.incomplete`` (finish ``stop``, ``tool_calls``
  or ``length``) carries usage; ``response.failed``, ``response.error`` and OpenAI's ``error``
  event raise the typed error (SGLang reports a streamed context overflow that way, after HTTP 200);
* a ``*.done`` event, a done item or the terminal response adds only text that no delta carried,
  so a server that sends whole parts instead of deltas loses nothing and one that sends both is
  not counted twice;
* an unknown event becomes an update with no contents and the event in ``raw`` (kept, never
  fatal); an output item of an unknown type (web search, MCP, custom tool calls) becomes a bare
  ``AIContent`` whose ``raw`` is the item.

A non-streamed response object goes through the same item reader (``normalize_response``), so the
two paths cannot disagree. Pure: no I/O, tests feed it dicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from providers.abstractions.chat_response import ChatResponseUpdate
from providers.abstractions.contents import (
    AIContent,
    ErrorContent,
    TextContent,
    TextReasoningContent,
    UsageContent,
)
from providers.abstractions.errors import InvalidResponseError, ProviderError
from providers.abstractions.open_values import ChatFinishReason, ChatRole
from providers.responses._output import (
    PendingCall,
    call_content,
    finish_reason_for,
    list_or_empty,
    part_content,
    status_extras,
    str_or_none,
)
from providers.responses._usage import parse_responses_usage
from providers.transport.error_classification import error_from_stream_event

__all__ = ["ResponsesEventNormalizer"]

Payload = Mapping[str, Any]


class ResponsesEventNormalizer:
    """Stateful across one response: ``feed(payload)`` per event, ``finish()`` once at the end.

    ``terminal`` tells the client whether a terminal event arrived (a stream without one was
    cut). Every event gives exactly one update, whose ``raw`` is the event.
    """

    __slots__ = (
        "_backend",
        "_calls",
        "_created_at",
        "_done",
        "_held",
        "_last_ci",
        "_last_oi",
        "_made_calls",
        "_model_id",
        "_response_id",
        "_role_sent",
        "_streamed",
        "_streamed_items",
        "terminal",
    )

    def __init__(self, backend: str | None = None) -> None:
        self._backend = backend
        self._response_id: str | None = None
        self._model_id: str | None = None
        self._created_at: int | None = None
        self._role_sent = False
        self._calls: dict[Any, PendingCall] = {}
        self._held: tuple[Any, Payload] | None = None  # the last done call item, not released
        self._done: set[Any] = set()  # output indexes whose contents were released
        self._streamed: set[tuple[Any, Any]] = set()  # (output index, part key) with deltas
        self._streamed_items: set[Any] = set()
        self._last_oi: Any = None
        self._last_ci: Any = None
        self._made_calls = False
        self.terminal = False

    # --- streaming -------------------------------------------------------------------------

    def feed(self, payload: Payload, event: str | None = None) -> list[ChatResponseUpdate]:
        """One decoded event; ``event`` is the SSE ``event:`` name, used when ``type`` is absent."""
        kind = payload.get("type")
        if type(kind) is not str:
            if payload.get("error") is not None:
                raise error_from_stream_event(payload, backend=self._backend)
            kind = event
        handler = _HANDLERS.get(kind) if kind is not None else None
        if handler is None:
            return [self._update([], payload)]
        return [handler(self, payload)]

    def writing_tool_call(self) -> bool:
        """Is a function call being written (its item or argument deltas seen, not yet done)?
        Its deltas are output for the first-token budget, as on the chat path."""
        return bool(self._calls)

    def finish(self) -> list[ChatResponseUpdate]:
        """Function calls not released when the stream ended (it was cut): a done item as the
        server gave it, calls still being assembled with ``error``."""
        if not self._calls and self._held is None:
            return []
        contents: list[AIContent] = self._release()
        contents.extend(call_content(call, None, cut=True) for call in self._calls.values())
        self._calls.clear()
        self._made_calls = True
        return [self._update(contents, None)]

    def _update(
        self,
        contents: list[AIContent],
        raw: Any,
        finish_reason: ChatFinishReason | None = None,
        extras: dict[str, Any] | None = None,
    ) -> ChatResponseUpdate:
        return ChatResponseUpdate(
            contents,
            None,
            finish_reason,
            self._response_id,
            self._model_id,
            self._created_at,
            0,
            extras,
            raw,
        )

    def _mark(self, payload: Payload, part: Any) -> None:
        """Record that deltas arrived for this part (a set add only when the part changes)."""
        oi = payload.get("output_index")
        if oi != self._last_oi or part != self._last_ci:
            self._last_oi, self._last_ci = oi, part
            self._streamed.add((oi, part))
            self._streamed_items.add(oi)

    def _lifecycle(self, payload: Payload) -> ChatResponseUpdate:
        response = payload.get("response")
        if isinstance(response, Mapping):
            self._remember(response)
        update = self._update([], payload)
        if not self._role_sent:
            self._role_sent = True
            update.role = ChatRole.ASSISTANT
        return update

    def _remember(self, response: Payload) -> None:
        if self._response_id is None:
            self._response_id = str_or_none(response.get("id"))
        if self._model_id is None:
            self._model_id = str_or_none(response.get("model"))
        if self._created_at is None:
            created = response.get("created_at")
            self._created_at = created if type(created) is int else None

    def _text_delta(self, payload: Payload) -> ChatResponseUpdate:
        delta = payload.get("delta")
        self._mark(payload, payload.get("content_index", 0))
        return self._update([TextContent(delta)] if delta and type(delta) is str else [], payload)

    def _reasoning_delta(self, payload: Payload) -> ChatResponseUpdate:
        delta = payload.get("delta")
        if isinstance(delta, Mapping):  # some servers wrap it: {"delta": {"text": …}}
            delta = delta.get("text")
        self._mark(payload, payload.get("content_index", 0))
        contents: list[AIContent] = (
            [TextReasoningContent(delta)] if delta and type(delta) is str else []
        )
        return self._update(contents, payload)

    def _summary_delta(self, payload: Payload) -> ChatResponseUpdate:
        delta = payload.get("delta")
        self._mark(payload, _summary_key(payload))
        contents: list[AIContent] = (
            [TextReasoningContent(delta)] if delta and type(delta) is str else []
        )
        return self._update(contents, payload)

    def _part_done(
        self, payload: Payload, key: Any, content: AIContent | None
    ) -> ChatResponseUpdate:
        """A ``*.done`` event: its text counts only if no delta carried it."""
        oi = payload.get("output_index")
        if content is None or (oi, key) in self._streamed:
            return self._update([], payload)
        self._streamed.add((oi, key))
        self._streamed_items.add(oi)
        return self._update([content], payload)

    def _text_done(self, payload: Payload) -> ChatResponseUpdate:
        text = payload.get("text")
        content = TextContent(text) if isinstance(text, str) and text else None
        return self._part_done(payload, payload.get("content_index", 0), content)

    def _reasoning_done(self, payload: Payload) -> ChatResponseUpdate:
        text = payload.get("text")
        content = TextReasoningContent(text) if isinstance(text, str) and text else None
        return self._part_done(payload, payload.get("content_index", 0), content)

    def _summary_done(self, payload: Payload) -> ChatResponseUpdate:
        text = payload.get("text")
        content = TextReasoningContent(text) if isinstance(text, str) and text else None
        return self._part_done(payload, _summary_key(payload), content)

    def _refusal_done(self, payload: Payload) -> ChatResponseUpdate:
        refusal = payload.get("refusal")
        content = ErrorContent(refusal, "refusal") if isinstance(refusal, str) and refusal else None
        return self._part_done(payload, payload.get("content_index", 0), content)

    def _content_part_done(self, payload: Payload) -> ChatResponseUpdate:
        part = payload.get("part")
        content = part_content(part) if isinstance(part, Mapping) else None
        if type(content) is TextReasoningContent and payload.get("output_index") in (
            self._streamed_items
        ):
            content = None  # reasoning streamed under another part name (summary vs text)
        return self._part_done(payload, payload.get("content_index", 0), content)

    def _item_added(self, payload: Payload) -> ChatResponseUpdate:
        item = payload.get("item")
        if isinstance(item, Mapping) and item.get("type") == "function_call":
            self._calls[payload.get("output_index")] = PendingCall(item)
        return self._update(self._release(), payload)  # the model went past a held call

    def _release(self, *, cut: bool = False) -> list[AIContent]:
        """The held call's contents (``cut``: the response ended inside or right after it)."""
        if self._held is None:
            return []
        (oi, item), self._held = self._held, None
        return self._item_contents(item, oi, cut=cut)

    def _call_for(self, payload: Payload) -> PendingCall:
        oi = payload.get("output_index")
        call = self._calls.get(oi)
        if call is None:  # arguments before (or without) the item: keyed all the same
            call = self._calls[oi] = PendingCall({"id": payload.get("item_id")})
        return call

    def _arguments_delta(self, payload: Payload) -> ChatResponseUpdate:
        delta = payload.get("delta")
        if isinstance(delta, str) and delta:
            self._call_for(payload).fragments.append(delta)
        return self._update([], payload)

    def _arguments_done(self, payload: Payload) -> ChatResponseUpdate:
        call = self._call_for(payload)
        arguments = payload.get("arguments")
        if isinstance(arguments, str):
            call.arguments = arguments
        name = payload.get("name")
        if isinstance(name, str) and name:
            call.name = name
        return self._update([], payload)

    def _item_done(self, payload: Payload) -> ChatResponseUpdate:
        item = payload.get("item")
        oi = payload.get("output_index")
        if not isinstance(item, Mapping) or oi in self._done:
            return self._update([], payload)
        self._done.add(oi)
        released = self._release()
        if item.get("type") == "function_call":
            self._held = (oi, item)
            return self._update(released, payload)
        return self._update([*released, *self._item_contents(item, oi)], payload)

    def _terminal(self, payload: Payload) -> ChatResponseUpdate:
        response = payload.get("response")
        if not isinstance(response, Mapping):
            response = {}
        self._remember(response)
        if payload.get("type") == "response.failed" or response.get("status") == "failed":
            raise self._failure(response.get("error"))
        self.terminal = True
        cut = response.get("status") == "incomplete"
        output = response.get("output")
        later = isinstance(output, list) and any(
            index not in self._done for index in range(len(output))
        )
        contents = self._release(cut=cut and not later)
        contents.extend(self._output_contents(output, cut_last_call=cut))
        if self._calls:  # a call whose item never said it was done
            contents.extend(call_content(call, None, cut=cut) for call in self._calls.values())
            self._calls.clear()
            self._made_calls = True
        usage = response.get("usage")
        details = parse_responses_usage(usage) if isinstance(usage, Mapping) else None
        if details is not None:
            contents.append(UsageContent(details, raw=usage))
        reason = finish_reason_for(response, made_calls=self._made_calls)
        if reason is None:
            reason = ChatFinishReason.TOOL_CALLS if self._made_calls else ChatFinishReason.STOP
        return self._update(contents, payload, reason, status_extras(response))

    def _error_event(self, payload: Payload) -> ChatResponseUpdate:
        error = payload.get("error")
        if not isinstance(error, Mapping):  # OpenAI's `error` event: the fields are top-level
            error = {k: v for k, v in payload.items() if k not in ("type", "sequence_number")}
        raise self._failure(error)

    def _failure(self, error: Any) -> ProviderError:
        if not isinstance(error, Mapping) or not error:
            error = {"message": "the server reported the response as failed, without a reason"}
        return error_from_stream_event({"error": error}, backend=self._backend)

    # --- items (shared by the stream's done items and whole responses) ------------------------

    def _output_contents(self, output: Any, *, cut_last_call: bool = False) -> list[AIContent]:
        """The items not released yet; ``cut_last_call``: the response ended incomplete, so a
        call that is its last item gets ``error``."""
        contents: list[AIContent] = []
        if isinstance(output, list):
            for oi, item in enumerate(output):
                if oi not in self._done and isinstance(item, Mapping):
                    self._done.add(oi)
                    cut = cut_last_call and oi == len(output) - 1
                    contents.extend(self._item_contents(item, oi, cut=cut))
        return contents

    def _item_contents(self, item: Payload, oi: Any, *, cut: bool = False) -> list[AIContent]:
        kind = item.get("type")
        if kind == "function_call":
            self._made_calls = True
            return [call_content(self._calls.pop(oi, None), item, cut=cut)]
        contents: list[AIContent] = []
        if kind == "message":
            for ci, part in enumerate(list_or_empty(item.get("content"))):
                if (oi, ci) not in self._streamed and isinstance(part, Mapping):
                    content = part_content(part)
                    if content is not None:
                        contents.append(content)
            return contents
        if kind == "reasoning":
            if oi in self._streamed_items:
                return contents
            parts = list_or_empty(item.get("content"))
            if not any(isinstance(p, Mapping) and p.get("text") for p in parts):
                parts = list_or_empty(item.get("summary"))  # OpenAI sends only a summary
            for part in parts:
                text = part.get("text") if isinstance(part, Mapping) else None
                if isinstance(text, str) and text:
                    contents.append(TextReasoningContent(text))
            return contents
        # A tool the library does not model (web search, MCP, custom tools): kept whole.
        return [AIContent(raw=item, additional_properties={"type": kind})]

    # --- whole responses ------------------------------------------------------------------

    def normalize_response(self, body: Payload) -> list[ChatResponseUpdate]:
        """A response object (``POST`` without streaming, ``GET``, cancel) as updates."""
        output = body.get("output")
        if body.get("status") == "failed":
            raise self._failure(body.get("error"))
        if not isinstance(output, list):
            if body.get("error") is not None:
                raise error_from_stream_event(body, backend=self._backend)
            raise InvalidResponseError("the response has no `output` list", backend=self._backend)
        self._remember(body)
        contents = self._output_contents(output, cut_last_call=body.get("status") == "incomplete")
        usage = body.get("usage")
        details = parse_responses_usage(usage) if isinstance(usage, Mapping) else None
        if details is not None:
            contents.append(UsageContent(details, raw=usage))
        reason = finish_reason_for(body, made_calls=self._made_calls)
        self.terminal = reason is not None
        update = self._update(contents, body, reason, status_extras(body))
        update.role = ChatRole.ASSISTANT
        return [update]


def _summary_key(payload: Payload) -> int:
    index = payload.get("summary_index")
    return -1 - (index if type(index) is int else 0)


_Handler = Callable[[ResponsesEventNormalizer, Payload], ChatResponseUpdate]

_HANDLERS: dict[str, _Handler] = {
    "response.created": ResponsesEventNormalizer._lifecycle,
    "response.in_progress": ResponsesEventNormalizer._lifecycle,
    "response.queued": ResponsesEventNormalizer._lifecycle,
    "response.output_item.added": ResponsesEventNormalizer._item_added,
    "response.output_item.done": ResponsesEventNormalizer._item_done,
    "response.content_part.done": ResponsesEventNormalizer._content_part_done,
    "response.output_text.delta": ResponsesEventNormalizer._text_delta,
    "response.output_text.done": ResponsesEventNormalizer._text_done,
    "response.refusal.done": ResponsesEventNormalizer._refusal_done,
    "response.reasoning_text.delta": ResponsesEventNormalizer._reasoning_delta,
    "response.reasoning_text.done": ResponsesEventNormalizer._reasoning_done,
    "response.reasoning.delta": ResponsesEventNormalizer._reasoning_delta,
    "response.reasoning.done": ResponsesEventNormalizer._reasoning_done,
    "response.reasoning_summary_text.delta": ResponsesEventNormalizer._summary_delta,
    "response.reasoning_summary_text.done": ResponsesEventNormalizer._summary_done,
    "response.reasoning.summary.delta": ResponsesEventNormalizer._summary_delta,
    "response.function_call_arguments.delta": ResponsesEventNormalizer._arguments_delta,
    "response.function_call_arguments.done": ResponsesEventNormalizer._arguments_done,
    "response.completed": ResponsesEventNormalizer._terminal,
    "response.incomplete": ResponsesEventNormalizer._terminal,
    "response.failed": ResponsesEventNormalizer._terminal,
    "response.error": ResponsesEventNormalizer._error_event,
    "error": ResponsesEventNormalizer._error_event,
}

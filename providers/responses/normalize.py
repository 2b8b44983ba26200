"""Responses-API events (and whole response objects) in, ``ChatResponseUpdate``s out.

Where the Responses servers' differences end, as ``providers.chat_completions.normalize`` is for
chat chunks:

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

What of the output the caller already has, and how an item becomes contents, is the
``OutputLedger``'s (``providers.responses.output_ledger``); a non-streamed response object goes
through the same ledger (``normalize_response``), so the two paths cannot disagree. Pure: no
I/O, tests feed it dicts.
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
from providers.abstractions.limits import Limits
from providers.abstractions.open_values import ChatFinishReason, ChatRole
from providers.abstractions.usage import parse_responses_usage
from providers.responses.output import finish_reason_for, part_content, status_extras, str_or_none
from providers.responses.output_ledger import OutputLedger
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
        "_created_at",
        "_model_id",
        "_output",
        "_response_id",
        "_role_sent",
        "terminal",
    )

    def __init__(
        self,
        backend: str | None = None,
        *,
        offered_tools: frozenset[str] | None = None,
        limits: Limits | None = None,
    ) -> None:
        # ``offered_tools``: the tools the request offered; a call naming another gets ``error``
        # (``None``: not checked). ``limits`` bound what the function calls may make it hold.
        self._backend = backend
        self._response_id: str | None = None
        self._model_id: str | None = None
        self._created_at: int | None = None
        self._role_sent = False
        self._output = OutputLedger(offered_tools, limits)
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
        return self._output.writing_tool_call()

    def pending_argument_bytes(self) -> int:
        """The argument text of calls being assembled (``Limits.max_output_bytes``)."""
        return self._output.pending_bytes()

    def finish(self) -> list[ChatResponseUpdate]:
        """Function calls not released when the stream ended (it was cut): a done item as the
        server gave it, calls still being assembled with ``error``."""
        if not self._output.has_unreleased_calls():
            return []
        contents = self._output.release()
        contents.extend(self._output.unfinished_calls(cut=True))
        self._output.made_calls = True
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
        self._output.mark_streamed(payload.get("output_index"), payload.get("content_index", 0))
        return self._update([TextContent(delta)] if delta and type(delta) is str else [], payload)

    def _reasoning_delta(self, payload: Payload) -> ChatResponseUpdate:
        delta = payload.get("delta")
        if isinstance(delta, Mapping):  # some servers wrap it: {"delta": {"text": …}}
            delta = delta.get("text")
        self._output.mark_streamed(payload.get("output_index"), payload.get("content_index", 0))
        contents: list[AIContent] = (
            [TextReasoningContent(delta)] if delta and type(delta) is str else []
        )
        return self._update(contents, payload)

    def _summary_delta(self, payload: Payload) -> ChatResponseUpdate:
        delta = payload.get("delta")
        self._output.mark_streamed(payload.get("output_index"), _summary_key(payload))
        contents: list[AIContent] = (
            [TextReasoningContent(delta)] if delta and type(delta) is str else []
        )
        return self._update(contents, payload)

    def _part_done(
        self, payload: Payload, key: Any, content: AIContent | None
    ) -> ChatResponseUpdate:
        """A ``*.done`` event: its text counts only if no delta carried it."""
        if content is None or not self._output.claim_part(payload.get("output_index"), key):
            return self._update([], payload)
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
        if type(content) is TextReasoningContent and self._output.item_streamed(
            payload.get("output_index")
        ):
            content = None  # reasoning streamed under another part name (summary vs text)
        return self._part_done(payload, payload.get("content_index", 0), content)

    def _item_added(self, payload: Payload) -> ChatResponseUpdate:
        item = payload.get("item")
        if isinstance(item, Mapping) and item.get("type") == "function_call":
            self._output.start_call(payload.get("output_index"), item)
        return self._update(self._output.release(), payload)  # the model went past a held call

    def _arguments_delta(self, payload: Payload) -> ChatResponseUpdate:
        delta = payload.get("delta")
        if isinstance(delta, str) and delta:
            self._output.add_arguments(payload.get("output_index"), payload.get("item_id"), delta)
        return self._update([], payload)

    def _arguments_done(self, payload: Payload) -> ChatResponseUpdate:
        call = self._output.call_for(payload.get("output_index"), payload.get("item_id"))
        arguments = payload.get("arguments")
        if isinstance(arguments, str):
            call.arguments = arguments
        name = payload.get("name")
        if isinstance(name, str) and name:
            call.name = name
        return self._update([], payload)

    def _item_done(self, payload: Payload) -> ChatResponseUpdate:
        item = payload.get("item")
        if not isinstance(item, Mapping):
            return self._update([], payload)
        return self._update(self._output.item_done(payload.get("output_index"), item), payload)

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
        contents = self._output.release(cut=cut and self._output.all_done(output))
        contents.extend(self._output.output_contents(output, cut_last_call=cut))
        contents.extend(self._output.unfinished_calls(cut=cut))  # items never said done
        contents.extend(_usage_contents(response))
        reason = finish_reason_for(response, made_calls=self._output.made_calls)
        if reason is None:
            reason = (
                ChatFinishReason.TOOL_CALLS if self._output.made_calls else ChatFinishReason.STOP
            )
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
        cut = body.get("status") == "incomplete"
        contents = self._output.output_contents(output, cut_last_call=cut)
        contents.extend(_usage_contents(body))
        reason = finish_reason_for(body, made_calls=self._output.made_calls)
        self.terminal = reason is not None
        update = self._update(contents, body, reason, status_extras(body))
        update.role = ChatRole.ASSISTANT
        return [update]


def _usage_contents(response: Payload) -> list[AIContent]:
    usage = response.get("usage")
    details = parse_responses_usage(usage) if isinstance(usage, Mapping) else None
    return [] if details is None else [UsageContent(details, raw=usage)]


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

"""The pipeline's answer as the Responses API writes it: a ``response`` object, or its events.

One writer (``OutputWriter``) turns contents into output items for both paths: a non-streamed
answer is its contents fed through it without the events, so a streamed and a non-streamed
answer to the same contents cannot disagree about an item.

Items, in the order the contents came: consecutive reasoning is one ``reasoning`` item (its
text as a ``reasoning_text`` part, the shape gpt-oss and vLLM use; no summary is made),
consecutive text one ``message`` item with one ``output_text`` part, each tool call one
``function_call`` item. A call the pipeline flagged (``error`` set) is never a
``function_call``: it is written as text, by the rule every OpenAI writer follows
(``providers.abstractions.openai_answers.flagged_call_text``), in a ``message`` item.

The fields are those openai-python's ``Response`` and stream-event models require, which is
what OpenAI sends: ids (``resp_``, ``msg_``, ``rs_``, ``fc_``), a ``sequence_number`` on every
event from 0, the item ids and output and content indexes every delta names. The usage's
``cache_write_tokens`` is always 0: the SDK's model requires the count and no local server
reports one. A response whose answer stopped at the token limit or a content filter is
``incomplete`` with the reason; the item open when it stopped is ``incomplete`` too.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping
from typing import Any

from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.contents import (
    AIContent,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
    UsageContent,
)
from providers.abstractions.errors import ProviderError
from providers.abstractions.open_values import ChatFinishReason
from providers.abstractions.openai_answers import flagged_call_text
from providers.abstractions.records import value_class
from providers.abstractions.usage import UsageDetails

__all__ = ["Frame", "OutputWriter", "response_object"]

_INCOMPLETE = {
    ChatFinishReason.LENGTH: "max_output_tokens",
    ChatFinishReason.CONTENT_FILTER: "content_filter",
}
Item = dict[str, Any]


@value_class()
class Frame:
    """What every ``response`` object of one request carries: its id, time, model name and
    the request fields it repeats (``ResponsesRequest.echo``)."""

    model: str
    echo: Mapping[str, Any]
    response_id: str = ""
    created_at: int = 0

    def __post_init__(self) -> None:
        self.response_id = f"resp_{uuid.uuid4().hex}"
        self.created_at = int(time.time())


def response_object(
    frame: Frame,
    output: list[Item],
    status: str,
    *,
    usage: UsageDetails | None = None,
    incomplete: str | None = None,
    error: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``response`` object; ``status`` is OpenAI's (``in_progress``, ``completed``,
    ``incomplete``, ``failed``)."""
    echo = frame.echo
    body: dict[str, Any] = {
        "id": frame.response_id,
        "object": "response",
        "created_at": frame.created_at,
        "status": status,
        "background": False,
        "error": dict(error) if error is not None else None,
        "incomplete_details": {"reason": incomplete} if incomplete is not None else None,
        "instructions": echo.get("instructions"),
        "max_output_tokens": echo.get("max_output_tokens"),
        "max_tool_calls": None,
        "model": frame.model,
        "output": output,
        "parallel_tool_calls": echo.get("parallel_tool_calls", True),
        "previous_response_id": None,
        "reasoning": echo.get("reasoning", {"effort": None, "summary": None}),
        "store": echo.get("store") is not False,
        "temperature": echo.get("temperature"),
        "text": echo.get("text", {"format": {"type": "text"}}),
        "tool_choice": echo.get("tool_choice", "auto"),
        "tools": list(echo.get("tools", ())),
        "top_p": echo.get("top_p"),
        "truncation": "disabled",
        "usage": _usage(usage) if usage is not None else None,
        "user": echo.get("user"),
        "metadata": dict(echo.get("metadata") or {}),
    }
    if status == "completed":
        body["completed_at"] = int(time.time())
    return body


def _usage(usage: UsageDetails) -> dict[str, Any]:
    given = usage.input_token_count or 0
    made = usage.output_token_count or 0
    return {
        "input_tokens": given,
        "input_tokens_details": {
            "cached_tokens": usage.cached_input_token_count or 0,
            "cache_write_tokens": 0,
        },
        "output_tokens": made,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_token_count or 0},
        "total_tokens": usage.total_token_count or given + made,
    }


class OutputWriter:
    """Contents in, output items (and, when ``events``, the SSE events) out.

    An item of text or reasoning stays open while more of the same kind comes; any other
    content closes it. ``take()`` hands over the events written since the last call, already
    framed (``event: <type>\\ndata: <json>\\n\\n``).
    """

    def __init__(self, frame: Frame, *, events: bool) -> None:
        self.frame = frame
        self.items: list[Item] = []
        self.usage: UsageDetails | None = None
        self.finish_reason: ChatFinishReason | None = None
        self._events: list[bytes] | None = [] if events else None
        self._sequence = 0
        self._open: Item | None = None
        self._texts: list[str] = []
        self._flagged_raw: object = None  # the recovered text last written for a flagged call

    # --- what goes in ---------------------------------------------------------------------

    def start(self) -> None:
        """The two events every stream opens with."""
        response = response_object(self.frame, [], "in_progress")
        self._emit("response.created", response=response)
        self._emit("response.in_progress", response=response)

    def update(self, update: ChatResponseUpdate) -> None:
        for content in update.contents:
            self.add(content)
        if update.finish_reason is not None:
            self.finish_reason = update.finish_reason

    def add(self, content: AIContent) -> None:
        # Hot path: one text content per streamed update.
        if isinstance(content, TextContent):
            self._text("message", content.text)
        elif isinstance(content, TextReasoningContent):
            self._text("reasoning", content.text)
        elif isinstance(content, FunctionCallContent):
            if content.error is None:
                self._call(content)
            elif content.raw is None or content.raw is not self._flagged_raw:
                self._text("message", flagged_call_text(content))
                self._flagged_raw = content.raw if isinstance(content.raw, str) else None
        elif isinstance(content, UsageContent):
            details = content.details
            self.usage = details if self.usage is None else self.usage.updated_with(details)

    def answer(self, response: ChatResponse) -> dict[str, Any]:
        """The non-streamed answer: ``response``'s contents, then the final object."""
        for message in response.messages:
            for content in message.contents:
                self.add(content)
        if response.usage is not None:
            self.usage = response.usage
        self.finish_reason = response.finish_reason
        return self.finish()

    # --- what comes out -------------------------------------------------------------------

    def finish(self) -> dict[str, Any]:
        """Closes the open item; the final ``response`` (and its event, when streaming)."""
        reason = _INCOMPLETE.get(self.finish_reason) if self.finish_reason is not None else None
        self._close("incomplete" if reason is not None else "completed")
        status = "incomplete" if reason is not None else "completed"
        response = response_object(
            self.frame, self.items, status, usage=self.usage, incomplete=reason
        )
        self._emit(f"response.{status}", response=response)
        return response

    def fail(self, error: ProviderError, status: int) -> None:
        """``response.failed``, the stream's last event when the pipeline failed after the 200
        went out: the items so far (the open one ``incomplete``) and the error."""
        self._close("incomplete", events=False)
        code = "rate_limit_exceeded" if status == 429 else "server_error"
        failure = {"code": code, "message": str(error)}
        response = response_object(
            self.frame, self.items, "failed", usage=self.usage, error=failure
        )
        self._emit("response.failed", response=response)

    def take(self) -> list[bytes]:
        events = self._events or []
        self._events = [] if self._events is not None else None
        return events

    # --- items ----------------------------------------------------------------------------

    def _text(self, kind: str, text: str) -> None:
        if not text:
            return
        item = self._open
        if item is None or item["type"] != kind:
            self._close("completed")
            item = self._begin(kind)
        self._texts.append(text)
        if self._events is not None:
            name = "output_text" if kind == "message" else "reasoning_text"
            extra: dict[str, Any] = {"logprobs": []} if kind == "message" else {}
            self._emit(f"response.{name}.delta", **self._where(item), delta=text, **extra)

    def _begin(self, kind: str) -> Item:
        index = len(self.items)
        if kind == "message":
            item: Item = {
                "type": "message",
                "id": f"msg_{uuid.uuid4().hex}",
                "status": "in_progress",
                "role": "assistant",
                "content": [],
            }
        else:
            item = {"type": "reasoning", "id": f"rs_{uuid.uuid4().hex}", "summary": []}
            item["content"] = []
        self._open = item
        self._texts = []
        if self._events is not None:
            self._emit("response.output_item.added", output_index=index, item=item)
            self._emit("response.content_part.added", **self._where(item), part=_part(kind, ""))
        return item

    def _close(self, status: str, *, events: bool = True) -> None:
        """Finishes the open item (``status`` for a message); ``events`` off: only kept."""
        item = self._open
        if item is None:
            return
        self._open = None
        text = "".join(self._texts)
        kind = item["type"]
        item["content"] = [_part(kind, text)]
        if kind == "message":
            item["status"] = status
        if self._events is not None and events:
            where = self._where(item)
            name = "output_text" if kind == "message" else "reasoning_text"
            extra: dict[str, Any] = {"logprobs": []} if kind == "message" else {}
            self._emit(f"response.{name}.done", **where, text=text, **extra)
            self._emit("response.content_part.done", **where, part=_part(kind, text))
            self._emit("response.output_item.done", output_index=len(self.items), item=item)
        self.items.append(item)

    def _call(self, call: FunctionCallContent) -> None:
        self._close("completed")
        arguments = call.raw_arguments or json.dumps(call.arguments, ensure_ascii=False)
        item: Item = {
            "type": "function_call",
            "id": f"fc_{uuid.uuid4().hex}",
            "call_id": call.call_id or f"call_{uuid.uuid4().hex[:24]}",
            "name": call.name,
            "arguments": arguments,
            "status": "completed",
        }
        if self._events is not None:
            index = len(self.items)
            self._emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "arguments": "", "status": "in_progress"},
            )
            at = {"item_id": item["id"], "output_index": index}
            self._emit("response.function_call_arguments.delta", **at, delta=arguments)
            self._emit("response.function_call_arguments.done", **at, arguments=arguments)
            self._emit("response.output_item.done", output_index=index, item=item)
        self.items.append(item)

    def _where(self, item: Item) -> dict[str, Any]:
        """The open item's address, as every content event names it."""
        return {"item_id": item["id"], "output_index": len(self.items), "content_index": 0}

    def _emit(self, kind: str, **fields: Any) -> None:
        if self._events is None:
            return
        event = {"type": kind, **fields, "sequence_number": self._sequence}
        self._sequence += 1
        data = json.dumps(event, ensure_ascii=False).encode()
        self._events.append(b"event: " + kind.encode() + b"\ndata: " + data + b"\n\n")


def _part(kind: str, text: str) -> Item:
    if kind == "message":
        return {"type": "output_text", "text": text, "annotations": []}
    return {"type": "reasoning_text", "text": text}

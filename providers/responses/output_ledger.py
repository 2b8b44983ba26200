"""Which of a response's output the caller already has, and the contents of what it has not.

A Responses server may send an item's text as deltas, as ``*.done`` events, in the done item
and again in the terminal response; each piece must reach the caller exactly once. The ledger
records what was released, per output index and part, and turns the rest of an item into
contents. A function call is held until the model has gone past it (the next item starts, or
the response ends), so a cut response can mark the call it cut. Shared by the event stream and
whole response objects (``ResponsesEventNormalizer``), so the two cannot disagree.

Calls are checked against the tools the request offered (``offered``), and what their events can
make it hold is bounded (``Limits.max_tool_calls``, ``max_tool_argument_bytes`` per call): past
either, ``ResponseTooLargeError``, the call being written kept with ``error`` set.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from providers.abstractions.contents import AIContent, TextReasoningContent
from providers.abstractions.errors import ResponseTooLargeError
from providers.abstractions.limits import DEFAULT_LIMITS, Limits
from providers.chat_completions.tool_call_accumulator import text_bytes
from providers.responses.output import PendingCall, call_content, list_or_empty, part_content

__all__ = ["OutputLedger"]

Payload = Mapping[str, Any]


class OutputLedger:
    """One response's ledger. ``made_calls``: a function call was released (the finish
    reason is ``tool_calls`` when the server does not say otherwise). ``offered``: the tools
    the request offered (``None``: not known, not checked)."""

    __slots__ = (
        "_calls",
        "_count",
        "_done",
        "_held",
        "_last_ci",
        "_last_oi",
        "_limits",
        "_offered",
        "_streamed",
        "_streamed_items",
        "made_calls",
    )

    def __init__(self, offered: frozenset[str] | None = None, limits: Limits | None = None) -> None:
        self._offered = offered
        self._limits = limits or DEFAULT_LIMITS
        self._count = 0  # calls begun by events
        self._calls: dict[Any, PendingCall] = {}
        self._held: tuple[Any, Payload] | None = None  # the last done call item, not released
        self._done: set[Any] = set()  # output indexes whose contents were released
        self._streamed: set[tuple[Any, Any]] = set()  # (output index, part key) with deltas
        self._streamed_items: set[Any] = set()
        self._last_oi: Any = None
        self._last_ci: Any = None
        self.made_calls = False

    # --- parts ----------------------------------------------------------------------------

    def mark_streamed(self, oi: Any, part: Any) -> None:
        """Deltas arrived for this part (a set add only when the part changes)."""
        if oi != self._last_oi or part != self._last_ci:
            self._last_oi, self._last_ci = oi, part
            self._streamed.add((oi, part))
            self._streamed_items.add(oi)

    def claim_part(self, oi: Any, key: Any) -> bool:
        """A ``*.done`` part: ``True`` (and recorded) when no delta carried its text."""
        if (oi, key) in self._streamed:
            return False
        self._streamed.add((oi, key))
        self._streamed_items.add(oi)
        return True

    def item_streamed(self, oi: Any) -> bool:
        return oi in self._streamed_items

    # --- function calls --------------------------------------------------------------------

    def writing_tool_call(self) -> bool:
        return bool(self._calls)

    def pending_bytes(self) -> int:
        """UTF-8 size of the argument text of the calls still being assembled."""
        return sum(call.size for call in self._calls.values())

    def start_call(self, oi: Any, item: Payload) -> None:
        self._begin(oi, item)

    def call_for(self, oi: Any, item_id: Any) -> PendingCall:
        call = self._calls.get(oi)
        if call is None:  # arguments before (or without) the item: keyed all the same
            call = self._begin(oi, {"id": item_id})
        return call

    def add_arguments(self, oi: Any, item_id: Any, delta: str) -> None:
        """One argument delta of a call, within ``max_tool_argument_bytes``."""
        call = self.call_for(oi, item_id)
        size = call.size + text_bytes(delta)
        limit = self._limits.max_tool_argument_bytes
        if size > limit:
            call.error = f"the argument text passed {limit} bytes (limits.max_tool_argument_bytes)"
            raise ResponseTooLargeError(
                f"a function call's argument text passed {limit} bytes "
                "(limits.max_tool_argument_bytes)",
                limit="max_tool_argument_bytes",
            )
        call.size = size
        call.fragments.append(delta)

    def _begin(self, oi: Any, item: Payload) -> PendingCall:
        limit = self._limits.max_tool_calls
        if self._count >= limit:
            raise ResponseTooLargeError(
                f"the server sent more than {limit} function calls (limits.max_tool_calls)",
                limit="max_tool_calls",
            )
        self._count += 1
        call = self._calls[oi] = PendingCall(item)
        return call

    def has_unreleased_calls(self) -> bool:
        return bool(self._calls) or self._held is not None

    def release(self, *, cut: bool = False) -> list[AIContent]:
        """The held call's contents (``cut``: the response ended inside or right after it)."""
        if self._held is None:
            return []
        (oi, item), self._held = self._held, None
        return self.item_contents(item, oi, cut=cut)

    def unfinished_calls(self, *, cut: bool) -> list[AIContent]:
        """Calls whose item never said it was done, as they stand."""
        if not self._calls:
            return []
        contents: list[AIContent] = [
            call_content(
                call, None, cut=cut, offered=self._offered, max_depth=self._limits.max_json_depth
            )
            for call in self._calls.values()
        ]
        self._calls.clear()
        self.made_calls = True
        return contents

    # --- items -----------------------------------------------------------------------------

    def item_done(self, oi: Any, item: Payload) -> list[AIContent]:
        """A done item: releases the call held before it, and holds it if it is a call."""
        if oi in self._done:
            return []
        self._done.add(oi)
        released = self.release()
        if item.get("type") == "function_call":
            self._held = (oi, item)
            return released
        return [*released, *self.item_contents(item, oi)]

    def all_done(self, output: Any) -> bool:
        """Every item of a terminal response's ``output`` was released already."""
        return not (
            isinstance(output, list)
            and any(index not in self._done for index in range(len(output)))
        )

    def output_contents(self, output: Any, *, cut_last_call: bool = False) -> list[AIContent]:
        """The items not released yet; ``cut_last_call``: the response ended incomplete, so a
        call that is its last item gets ``error``."""
        contents: list[AIContent] = []
        if isinstance(output, list):
            for oi, item in enumerate(output):
                if oi not in self._done and isinstance(item, Mapping):
                    self._done.add(oi)
                    cut = cut_last_call and oi == len(output) - 1
                    contents.extend(self.item_contents(item, oi, cut=cut))
        return contents

    def item_contents(self, item: Payload, oi: Any, *, cut: bool = False) -> list[AIContent]:
        kind = item.get("type")
        if kind == "function_call":
            self.made_calls = True
            call = self._calls.pop(oi, None)
            return [
                call_content(
                    call,
                    item,
                    cut=cut,
                    offered=self._offered,
                    max_depth=self._limits.max_json_depth,
                )
            ]
        if kind == "message":
            return self._message_contents(item, oi)
        if kind == "reasoning":
            return [] if oi in self._streamed_items else _reasoning_contents(item)
        # A tool the library does not model (web search, MCP, custom tools): kept whole.
        return [AIContent(raw=item, additional_properties={"type": kind})]

    def _message_contents(self, item: Payload, oi: Any) -> list[AIContent]:
        contents: list[AIContent] = []
        for ci, part in enumerate(list_or_empty(item.get("content"))):
            if (oi, ci) not in self._streamed and isinstance(part, Mapping):
                content = part_content(part)
                if content is not None:
                    contents.append(content)
        return contents


def _reasoning_contents(item: Payload) -> list[AIContent]:
    parts = list_or_empty(item.get("content"))
    if not any(isinstance(p, Mapping) and p.get("text") for p in parts):
        parts = list_or_empty(item.get("summary"))  # OpenAI sends only a summary
    contents: list[AIContent] = []
    for part in parts:
        text = part.get("text") if isinstance(part, Mapping) else None
        if isinstance(text, str) and text:
            contents.append(TextReasoningContent(text))
    return contents

"""Merging streamed tool-call deltas into whole ``FunctionCallContent``s.

Every quirk in docs/wire.md §3 is accepted:

* several entries in one chunk, even two for the same ``index`` (vLLM hermes sends the name and
  the first argument fragment together);
* a missing ``index``: the fragment continues the last call unless it brings a new id;
* ``id: null`` and ``name: null`` fragments (SGLang repeats them on every fragment);
* a name re-sent in full when the parser's idea of it grows (llama.cpp): names are *set*, never
  appended, and so are ids;
* a whole call in one chunk, ``arguments`` as an object instead of a string.

Arguments are parsed once, when the calls are flushed. A text that is not a JSON object becomes
a call with ``error`` set and the text kept in ``raw_arguments``: surfaced, never dropped. So
does a call naming a tool the request did not offer (``offered``; issue #20): a server's parser
passes on whatever name the model wrote, and an agent must not run a tool it never declared.

What a server can make it hold is bounded (``Limits.max_tool_calls`` per choice,
``max_tool_argument_bytes`` per call): past either, ``ResponseTooLargeError``, and the call being
written is kept with ``error`` set.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from providers.abstractions.contents import FunctionCallContent, parse_arguments
from providers.abstractions.errors import ResponseTooLargeError
from providers.abstractions.limits import DEFAULT_LIMITS, Limits
from providers.text_tool_calls import not_offered

__all__ = [
    "CUT_BY_LENGTH",
    "CUT_BY_STREAM_END",
    "ToolCallAccumulator",
    "mark_cut_call",
    "parse_arguments",
    "text_bytes",
]


_ENTRY_KEYS = frozenset({"index", "id", "type", "function"})


def text_bytes(text: str) -> int:
    """UTF-8 length of ``text``, without encoding it when it is ASCII (the usual case)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


class _PendingCall:
    __slots__ = ("call_id", "error", "extra", "fragments", "name", "size")

    def __init__(self) -> None:
        self.call_id: str | None = None
        self.name: str | None = None
        self.fragments: list[str] = []
        self.extra: dict[str, Any] | None = None
        self.size = 0  # bytes in ``fragments``
        self.error: str | None = None  # set when the call was cut short by a limit


class ToolCallAccumulator:
    """Collects the deltas of one choice; ``flush()`` returns the calls in index order.

    ``offered``: the names of the tools the request offered (``None``: not checked, for a
    caller that has no request to check against).
    """

    __slots__ = ("_calls", "_count", "_last", "_limits", "_offered")

    def __init__(self, offered: frozenset[str] | None = None, limits: Limits | None = None) -> None:
        self._calls: dict[int, _PendingCall] = {}
        self._last: int | None = None
        self._offered = offered
        self._limits = limits or DEFAULT_LIMITS
        self._count = 0  # calls begun, flushed or not

    def __bool__(self) -> bool:
        return bool(self._calls)

    def add(self, entries: Iterable[Any], *, positional: bool = False) -> None:
        """Merge a delta's ``tool_calls`` entries. ``positional``: the entries are a whole
        message's calls, which carry no index: their position is it."""
        for position, entry in enumerate(entries):
            if type(entry) is dict or isinstance(entry, Mapping):  # dict first: cheap check
                self._add_one({**entry, "index": position} if positional else entry)

    def _add_one(self, entry: Mapping[str, Any]) -> None:
        index = entry.get("index")
        call_id = entry.get("id")
        if type(index) is not int:
            index = self._index_without_one(call_id)
        call = self._calls.get(index)
        if call is None:
            call = self._new_call(index)
        self._last = index
        if call_id is not None and call_id != "":
            call.call_id = str(call_id)
        function = entry.get("function")
        if type(function) is dict or isinstance(function, Mapping):
            name = function.get("name")
            if name and type(name) is str:
                call.name = name
            arguments = function.get("arguments")
            if type(arguments) is str:
                if arguments:
                    self._grow(call, arguments)
            elif isinstance(arguments, Mapping | list):
                # Some servers send the parsed object; it is the whole argument text.
                self._grow(call, json.dumps(arguments, ensure_ascii=False), replace=True)
        if entry.keys() <= _ENTRY_KEYS:
            return
        for key, value in entry.items():
            if key not in _ENTRY_KEYS and value is not None:
                if call.extra is None:
                    call.extra = {}
                call.extra[key] = value

    def pending_bytes(self) -> int:
        """UTF-8 size of the argument text of the calls not flushed yet."""
        return sum(call.size for call in self._calls.values())

    def append_arguments(self, index: int, text: str) -> bool:
        """``add`` of one entry holding only call ``index`` and an argument fragment ``text``
        (the normaliser's fast path, ``chunk_shapes.FragmentTemplate``); ``False``, with
        nothing done, when that call has not begun."""
        call = self._calls.get(index)
        if call is None:
            return False
        self._last = index
        size = call.size + (len(text) if text.isascii() else text_bytes(text))
        if size > self._limits.max_tool_argument_bytes:
            self._grow(call, text)  # (raises, as past the limit it must)
        call.fragments.append(text)
        call.size = size
        return True

    def _new_call(self, index: int) -> _PendingCall:
        limit = self._limits.max_tool_calls
        if self._count >= limit:
            raise ResponseTooLargeError(
                f"the server sent more than {limit} tool calls (limits.max_tool_calls)",
                limit="max_tool_calls",
            )
        self._count += 1
        call = self._calls[index] = _PendingCall()
        return call

    def _grow(self, call: _PendingCall, text: str, *, replace: bool = False) -> None:
        """Add ``text`` to the call's arguments (or make it all of them)."""
        size = text_bytes(text) + (0 if replace else call.size)
        limit = self._limits.max_tool_argument_bytes
        if size > limit:
            call.error = f"the argument text passed {limit} bytes (limits.max_tool_argument_bytes)"
            raise ResponseTooLargeError(
                f"a tool call's argument text passed {limit} bytes "
                "(limits.max_tool_argument_bytes)",
                limit="max_tool_argument_bytes",
            )
        if replace:
            call.fragments = [text]
        else:
            call.fragments.append(text)
        call.size = size

    def _index_without_one(self, call_id: Any) -> int:
        if self._last is None:
            return 0
        if call_id and self._calls[self._last].call_id not in (None, call_id):
            return max(self._calls) + 1  # a new id: a new call
        return self._last

    def flush(self) -> list[FunctionCallContent]:
        """The merged calls, oldest index first; the accumulator is empty afterwards."""
        calls: list[FunctionCallContent] = []
        for index in sorted(self._calls):
            pending = self._calls[index]
            raw = "".join(pending.fragments)
            arguments, error = parse_arguments(raw, self._limits.max_json_depth)
            if not pending.name:
                error = _joined("the server sent no function name for this tool call", error)
            elif self._offered is not None and pending.name not in self._offered:
                error = _joined(not_offered(pending.name, sorted(self._offered)), error)
            if pending.error is not None:
                error = _joined(pending.error, error)
            calls.append(
                FunctionCallContent(
                    pending.call_id or f"call_{uuid.uuid4().hex[:24]}",
                    pending.name or "",
                    arguments,
                    raw,
                    error,
                    additional_properties=pending.extra,
                )
            )
        self._calls.clear()
        self._last = None
        return calls


def _joined(first: str, then: str | None) -> str:
    return f"{first}; {then}" if then else first


CUT_BY_LENGTH = (
    "generation stopped at the output token limit (finish_reason length) while this call was "
    "being written: its arguments may be incomplete"
)
CUT_BY_STREAM_END = (
    "the stream broke off while this call was being written (no finish reason came for it): "
    "its arguments may be incomplete"
)


def mark_cut_call(calls: list[FunctionCallContent], reason: str = CUT_BY_LENGTH) -> None:
    """Flag the last call of a choice that was cut off as incomplete.

    The model was writing that call when the output stopped (``finish_reason`` length, or the
    stream broke), and what arrived may parse into a call that looks complete (vLLM's hermes
    parser sends only the name, qwen3_coder ``{}`` or the first parameters; a broken stream
    leaves whatever fragments came). An agent must not run a tool on half its arguments, so
    the call is surfaced with ``error`` set, never dropped. Calls before it were finished: the
    model had moved on.
    """
    if calls and calls[-1].error is None:
        calls[-1].error = reason

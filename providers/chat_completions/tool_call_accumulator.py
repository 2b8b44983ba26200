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
a call with ``error`` set and the text kept in ``raw_arguments``: surfaced, never dropped.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from providers.abstractions.contents import FunctionCallContent, parse_arguments

__all__ = ["CUT_BY_LENGTH", "ToolCallAccumulator", "mark_cut_call", "parse_arguments"]


_ENTRY_KEYS = frozenset({"index", "id", "type", "function"})


class _PendingCall:
    __slots__ = ("call_id", "extra", "fragments", "name")

    def __init__(self) -> None:
        self.call_id: str | None = None
        self.name: str | None = None
        self.fragments: list[str] = []
        self.extra: dict[str, Any] | None = None


class ToolCallAccumulator:
    """Collects the deltas of one choice; ``flush()`` returns the calls in index order."""

    __slots__ = ("_calls", "_last")

    def __init__(self) -> None:
        self._calls: dict[int, _PendingCall] = {}
        self._last: int | None = None

    def __bool__(self) -> bool:
        return bool(self._calls)

    def add(self, entries: Iterable[Any]) -> None:
        for entry in entries:
            if type(entry) is dict or isinstance(entry, Mapping):  # dict first: cheap check
                self._add_one(entry)

    def _add_one(self, entry: Mapping[str, Any]) -> None:
        index = entry.get("index")
        call_id = entry.get("id")
        if type(index) is not int:
            index = self._index_without_one(call_id)
        call = self._calls.get(index)
        if call is None:
            call = self._calls[index] = _PendingCall()
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
                    call.fragments.append(arguments)
            elif isinstance(arguments, Mapping | list):
                # Some servers send the parsed object; it is the whole argument text.
                call.fragments = [json.dumps(arguments, ensure_ascii=False)]
        if entry.keys() <= _ENTRY_KEYS:
            return
        for key, value in entry.items():
            if key not in _ENTRY_KEYS and value is not None:
                if call.extra is None:
                    call.extra = {}
                call.extra[key] = value

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
            arguments, error = parse_arguments(raw)
            if not pending.name:
                error = "the server sent no function name for this tool call" + (
                    f"; {error}" if error else ""
                )
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


CUT_BY_LENGTH = (
    "generation stopped at the output token limit (finish_reason length) while this call was "
    "being written: its arguments may be incomplete"
)


def mark_cut_call(calls: list[FunctionCallContent]) -> None:
    """Flag the last call of a choice that finished with ``length`` as incomplete.

    The model was writing that call when the limit hit, and servers hand over what they had
    (vLLM's hermes parser only the name, qwen3_coder ``{}`` or the first parameters), which
    parses into a call that looks complete. An agent must not run a tool on half its
    arguments, so the call is surfaced with ``error`` set, never dropped. Calls before it were
    finished: the model had moved on.
    """
    if calls and calls[-1].error is None:
        calls[-1].error = CUT_BY_LENGTH

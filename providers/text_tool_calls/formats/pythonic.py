"""``pythonic``: a Python list of calls, ``[f(a=1), g(b="x")]`` (Llama 3.2/4, ``llama4_pythonic``).

Grammar and server behaviour: docs/formats.md §5. The list is parsed with ``ast`` and every
argument with ``ast.literal_eval``: model output is never evaluated, only literal syntax is
accepted (``None``/``True`` become ``null``/``true``). Calls take keyword arguments only, as in
the servers; a positional argument makes the block malformed. Dotted names (``math.sum``) are
kept whole.

Llama 4 wraps the list in ``<|python_start|>…<|python_end|>``; that marker is unambiguous and
also serves ``auto``. A bare ``[`` is a marker only when this format is chosen by name (or after
``auto`` detected it): the tracker gives it up as ordinary text at the first character that
cannot continue ``[name(``, so prose and Markdown links pass with at most a word held back.
Triple-quoted strings are not tracked (a ``]`` inside one would end the block early; the block
then fails to parse and is returned as error text).
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from providers.abstractions.contents import AIContent
from providers.text_tool_calls.literals import literal
from providers.text_tool_calls.protocol import BlockTracker, MalformedBlockError, Stop
from providers.text_tool_calls.tools import ToolBook
from providers.text_tool_calls.trackers import EndMarkerTracker

__all__ = ["Pythonic"]

START, END = "<|python_start|>", "<|python_end|>"
_OUTSIDE = re.compile(r"""[\[\](){}'"]""")
_INSIDE = {"'": re.compile(r"['\\]"), '"': re.compile(r'["\\]')}

# Tracker phases for a bare list: before the name, in it, after it, in the argument list.
_LEAD, _NAME, _NAME_SPACE, _BODY = range(4)


def _list_start(char: str) -> bool:
    return char == "[" or char.isidentifier()


class _ListTracker:
    """``[`` + name + ``(``, then brackets balanced outside Python strings."""

    __slots__ = ("_depth", "_escaped", "_phase", "_quote", "_seen", "_skip")

    def __init__(self) -> None:
        self._phase = _LEAD
        self._skip = 1  # the "["
        self._depth = 1
        self._quote = ""  # the open string's quote character
        self._escaped = False
        self._seen = 0

    def feed(self, text: str, pos: int) -> Stop | None:
        base = self._seen - pos
        self._seen += len(text) - pos
        i = pos + self._skip
        self._skip = 0
        while i < len(text):
            if self._phase == _BODY:
                end = self._body(text, i)
                return None if end < 0 else Stop(base + end)
            if not self._step(text[i]):
                return Stop(base + i, is_block=False)  # not ``[name(``: ordinary text
            i += 1
        return None

    def _step(self, char: str) -> bool:
        phase = self._phase
        if char.isspace():
            if phase == _NAME:
                self._phase = _NAME_SPACE
            return True
        if char == "(" and phase != _LEAD:
            self._phase, self._depth = _BODY, 2
            return True
        if phase == _LEAD and char.isidentifier():
            self._phase = _NAME
            return True
        return phase == _NAME and (char.isalnum() or char in "_.")

    def _body(self, text: str, i: int) -> int:
        n = len(text)
        if self._escaped and i < n:
            self._escaped, i = False, i + 1
        while i < n:
            if self._quote:
                match = _INSIDE[self._quote].search(text, i)
                if match is None:
                    return -1
                i = match.end()
                if match.group() == self._quote:
                    self._quote = ""
                elif i < n:
                    i += 1
                else:
                    self._escaped = True
                continue
            match = _OUTSIDE.search(text, i)
            if match is None:
                return -1
            i, char = match.end(), match.group()
            if char in "'\"":
                self._quote = char
            elif char in "[({":
                self._depth += 1
            else:
                self._depth -= 1
                if self._depth == 0:
                    return i
        return -1

    def finish(self) -> Stop | None:
        return None if self._phase == _BODY else Stop(self._seen, is_block=False)


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    raise MalformedBlockError("a call's function is not a (dotted) name")


def _arguments(call: ast.Call) -> dict[str, Any]:
    if call.args:
        raise MalformedBlockError("positional arguments; calls take keyword arguments only")
    arguments: dict[str, Any] = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            raise MalformedBlockError("**kwargs in a call")
        try:
            arguments[keyword.arg] = literal(keyword.value)
        except ValueError as exc:
            raise MalformedBlockError(f"argument {keyword.arg}: {exc}") from None
    return arguments


class Pythonic:
    name = "pythonic"
    markers = (START, "[")
    auto_markers = (START,)

    def tracker(self, marker: str) -> BlockTracker:
        if marker == START:
            return EndMarkerTracker(marker, (END,), lead=_list_start)
        return _ListTracker()

    def parse_block(self, block: str, tools: ToolBook) -> list[AIContent]:
        source = block
        if block.startswith(START):
            source = block[len(START) : len(block) - len(END)]
        try:
            tree = ast.parse(source.strip(), mode="eval")
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            raise MalformedBlockError(f"not a Python call list ({type(exc).__name__})") from None
        nodes = tree.body.elts if isinstance(tree.body, ast.List) else [tree.body]
        if not nodes:
            raise MalformedBlockError("empty call list")
        calls: list[AIContent] = []
        for node in nodes:
            if not isinstance(node, ast.Call):
                raise MalformedBlockError("a list item is not a call")
            arguments = _arguments(node)
            raw = json.dumps(arguments, ensure_ascii=False)
            calls.append(tools.call(_dotted(node.func), arguments, raw, raw=block))
        return calls

"""The JSON of an answer still arriving: what a streamed structured answer holds so far.

``get_streaming_response_as`` shows the caller the value as it grows. The reading is
pydantic_core's partial mode (``from_json(text, allow_partial="trailing-strings")``, the parser
pydantic validates with, the same mode openai-python's streamed ``parsed`` deltas use): an
unclosed object or array is closed where the text stops, an unfinished string is kept as far
as it goes, and a key whose value has not begun is left out. What was read is JSON, not yet
the type: the last value may still grow (``12`` may be ``125`` one token later, a string is
cut mid-word), and a required field may not have arrived.

The text is the answer's as the final reading takes it (``structured_output.answer_text``): a
leading ``<think>`` block and a Markdown fence are read through, so nothing is shown while the
model thinks, and prose before the JSON shows nothing (the final reading will refuse it).

Bounded as every buffer the server fills is (``Limits``): a value nested deeper than
``Limits.max_json_depth`` is not shown, and the text is read again only while it is at most
``Limits.max_tool_argument_bytes`` long (the bound on the other JSON the client assembles from
deltas, a tool call's arguments); past it the last value stays, and the whole text is still
validated at the end. Reading again on every update would cost the square of the answer's
length, so past ``_EVERY_UPDATE`` characters the text is read again only once it has grown by
a sixteenth: every update of a short answer shows, and a long one costs a bounded multiple of
one reading.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic_core import from_json

from providers.abstractions.server_json import nests_deeper

__all__ = ["PartialAnswer", "read_partial"]

_EVERY_UPDATE = 64 * 1024
"""Characters of answer below which every update is read again."""

_THINK_CLOSED = re.compile(r"\A\s*<think>.*?</think>", re.DOTALL)


def read_partial(text: str, max_depth: int) -> dict[str, Any] | list[Any] | None:
    """The JSON object or array ``text`` holds so far, or ``None`` (nothing yet, not JSON, or
    deeper than ``max_depth``)."""
    body = text.lstrip()
    if body.startswith("<think>"):
        closed = _THINK_CLOSED.match(body)
        if closed is None:
            return None  # still thinking
        body = body[closed.end() :].lstrip()
    if body.startswith("```"):
        line_end = body.find("\n")
        if line_end < 0:
            return None  # the fence's language tag is still arriving
        body = body[line_end + 1 :]
        fence_end = body.find("```")
        if fence_end >= 0:
            body = body[:fence_end]
        body = body.lstrip()
    if not body.startswith(("{", "[")):
        return None
    try:
        value: dict[str, Any] | list[Any] = from_json(body, allow_partial="trailing-strings")
    except ValueError:  # not JSON after all, or past pydantic_core's own recursion limit
        return None
    if nests_deeper(value, body, max_depth):
        return None
    return value


class PartialAnswer:
    """The answer's text in the current turn and the value it held when last read.

    ``reset`` at a turn boundary (a tool result: the answer is what follows the last one),
    ``add`` each text, ``value`` to read; an update that leaves the text unreadable (a stray
    character after the JSON, a depth past the limit) keeps the last value shown."""

    __slots__ = ("_max_depth", "_max_length", "_pieces", "_read_at", "_size", "value")

    def __init__(self, max_depth: int, max_length: int) -> None:
        self._max_depth = max_depth
        self._max_length = max_length
        self._pieces: list[str] = []
        self._size = 0
        self._read_at = 0
        self.value: Any = None
        """The JSON read so far: ``None`` until some has been."""

    def reset(self) -> None:
        self._pieces.clear()
        self._size = self._read_at = 0
        self.value = None

    def add(self, text: str) -> None:
        if text:
            self._pieces.append(text)
            self._size += len(text)

    def read(self) -> Any:
        """``value`` brought up to the text added (see the module docstring for when the text
        is read again)."""
        size = self._size
        grown = size - self._read_at
        if grown == 0 or size > self._max_length:
            return self.value
        if size > _EVERY_UPDATE and grown * 16 < size:
            return self.value
        text = "".join(self._pieces)
        self._pieces = [text]
        self._read_at = size
        value = read_partial(text, self._max_depth)
        if value is not None:
            self.value = value
        return self.value

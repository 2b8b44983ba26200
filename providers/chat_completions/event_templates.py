"""Event templates: a stream's common chunk recognised in its bytes, before any JSON is parsed.

A server writes its common chunk (``chunk_shapes.Template``: one choice, one text; or one
tool-call argument fragment) with the same bytes every time, but for the one string that
carries the text. So once a chunk has been read and found to be the common one, its event is
cut around that string: ``prefix``, the string, ``suffix``. An event that starts with
``prefix``, ends with ``suffix``, and has one JSON string between them is that chunk with
another text, whatever its text holds: a JSON string token can be swapped for another without
changing what the rest of the document parses to. Only the string is parsed (orjson, a few
dozen bytes instead of the chunk's few hundred), and nothing else is checked: everything else
is the bytes of a chunk already checked.

The cut is proved when it is made, not assumed from where the key name appears: a probe
string put in its place must parse to the learnt chunk with just that value replaced (a key
written with escapes, or a second copy of the key name elsewhere, fails the proof and leaves
no template). Fields that change from chunk to chunk (``created`` every second on llama.cpp)
make a later event miss the template; the reader then learns one from that event, a bounded
number of times per stream (``RELEARN_BUDGET``), and otherwise reads as it would without.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from providers.abstractions.response_update import TextKind

__all__ = ["RELEARN_BUDGET", "EventTemplate", "learn"]

RELEARN_BUDGET = 32
"""Templates one stream may learn: a server whose common chunk changes bytes every time (a
per-chunk counter) costs 32 learnings, then reads as it would without templates."""

_AFTER_KEY = re.compile(rb'[ \t\r\n]*:[ \t\r\n]*"')
_STRING_REST = re.compile(rb'(?:[^"\\]|\\.)*"', re.DOTALL)
_PROBE = "\x00oaicompat-probe"


class EventTemplate:
    """The bytes around the varying string of one stream's common chunk, and what an update
    of it holds besides the text (the values of the chunk it was learnt from)."""

    __slots__ = (
        "call",
        "created_at",
        "cut",
        "index",
        "kind",
        "model_id",
        "prefix",
        "response_id",
        "suffix",
        "tail",
    )

    def __init__(
        self,
        prefix: bytes,
        suffix: bytes,
        head: tuple[Any, Any, Any, int],
        kind: TextKind,
        call: int = 0,
    ) -> None:
        self.prefix = prefix
        self.suffix = suffix
        self.cut = len(prefix)
        self.tail = len(suffix)
        self.response_id, self.model_id, self.created_at, self.index = head
        self.kind = kind
        self.call = call

    def event_of(self, text: str) -> bytes:
        """The event of this template with ``text``: what an update read from it keeps
        instead of its bytes (``response_update.EventSource``), equal once parsed."""
        return self.prefix + orjson.dumps(text) + self.suffix


def learn(data: bytes, path: tuple[Any, ...], key: str, value: str) -> tuple[bytes, bytes] | None:
    """``(prefix, suffix)`` of ``data`` (an event's JSON) around the string
    ``value`` of ``key``, which ``path`` (keys and indexes from the top) leads to; ``None``
    when the cut cannot be proved (see the module docstring)."""
    pattern = b'"' + key.encode() + b'"'
    at = data.find(pattern)
    if at < 0 or data.find(pattern, at + 1) >= 0:
        return None
    opening = _AFTER_KEY.match(data, at + len(pattern))
    if opening is None:
        return None
    start = opening.end() - 1  # the opening quote
    closing = _STRING_REST.match(data, start + 1)
    if closing is None:
        return None
    prefix, suffix = data[:start], data[closing.end() :]
    try:
        if orjson.loads(data[start : closing.end()]) != value:
            return None
        probed = orjson.loads(prefix + orjson.dumps(_PROBE) + suffix)
        expected = orjson.loads(data)  # (a fresh copy to edit: a tenth of a deepcopy's cost)
    except ValueError:
        return None
    target: Any = expected
    for step in path:
        target = target[step]
    target[key] = _PROBE
    return (prefix, suffix) if probed == expected else None

"""Walks of JSON a server sent, for what a parser accepts and whoever reads it next cannot take.

Two, each run only when the text could need it (a test counted in C first): nesting past
``Limits.max_json_depth``, which breaks the next deep walk (``json.dumps``, ``copy``, a
validator) with an untyped ``RecursionError``; and lone surrogate escapes (``"\\ud800"``,
valid JSON), which ``json`` reads as code points no UTF-8 encoder takes, so the text would crash
whoever encodes it next (an SDK's stream, a tool loop's next request). The readers
(``transport.json_guard``, the chat event reader, ``parse_arguments``, the text parsers) call
these; the rules are written here once (issue 32).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, Final

__all__ = [
    "REPLACED_SURROGATES",
    "mark_lone_surrogates",
    "nests_deeper",
    "replace_lone_surrogates",
]

REPLACED_SURROGATES: Final = "replaced_surrogates"
"""How many strings of a chunk (or body) held a lone surrogate escape, each replaced by U+FFFD
when it was read; ``raw`` keeps what the server sent."""


def nests_deeper(payload: Any, text: str | bytes, limit: int) -> bool:
    """Whether ``payload`` (parsed from ``text``) nests more than ``limit`` levels deep.

    Measuring depth costs a walk, so it is measured only when the text could be that deep:
    nesting ``n`` levels takes at least ``2n`` characters and ``n`` opening brackets, both
    counted in C, and a healthy chunk or argument text has neither."""
    if len(text) <= 2 * limit:
        return False
    if isinstance(text, str):
        openers = text.count("[") + text.count("{")
    else:
        openers = text.count(b"[") + text.count(b"{")
    return openers > limit and _deeper(payload, limit)


def _deeper(payload: Any, limit: int) -> bool:
    """Iterative, so that measuring a deep document cannot itself recurse too deep."""
    if type(payload) is not dict and type(payload) is not list:
        return False
    pending: list[tuple[Any, int]] = [(payload, 1)]
    while pending:
        value, depth = pending.pop()
        if depth > limit:
            return True
        children = value.values() if type(value) is dict else value
        pending.extend(
            (child, depth + 1) for child in children if type(child) is dict or type(child) is list
        )
    return False


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[bytes], re.Pattern[str]]:
    """The escape (in text, in bytes) and the lone code point, compiled on the slow path's first
    use: ``re`` compiles in Python, and a cold start that never meets a refused document should
    not pay for it."""
    hex_escape = r"\\u[dD][89abcdefABCDEF]"
    return re.compile(hex_escape), re.compile(hex_escape.encode()), re.compile("[\ud800-\udfff]")


def mark_lone_surrogates(payload: Any, text: str | bytes) -> Any:
    """``replace_lone_surrogates``, and a dict payload that had any says how many strings
    changed in ``REPLACED_SURROGATES`` (a chunk's unknown key: the update's property)."""
    payload, replaced = replace_lone_surrogates(payload, text)
    if replaced and type(payload) is dict:
        payload[REPLACED_SURROGATES] = replaced
    return payload


def replace_lone_surrogates(payload: Any, text: str | bytes) -> tuple[Any, int]:
    """``(payload, replaced)``: ``payload`` (what ``json`` read from ``text``) with each lone
    surrogate, in a string or a key, replaced by U+FFFD, and how many strings changed.

    ``json`` reads ``"\\ud800"`` alone as U+D800, which no UTF-8 encoder takes; orjson refuses
    the document, so this runs only on the slow path that reads what orjson refused, and walks
    the payload only when ``text`` holds such an escape (a valid pair, which ``json`` joins,
    costs the walk and changes nothing)."""
    escape, escape_bytes, lone = _patterns()
    if isinstance(text, str):
        found = escape.search(text) is not None
    else:
        found = escape_bytes.search(text) is not None
    if not found:
        return payload, 0
    if type(payload) is str:
        fixed = lone.sub("\ufffd", payload)
        return fixed, int(fixed != payload)
    replaced = 0
    pending: list[Any] = [payload] if type(payload) is dict or type(payload) is list else []
    while pending:  # (iterative: the payload may nest as deep as json could read)
        container = pending.pop()
        if type(container) is list:
            for index, value in enumerate(container):
                if type(value) is str and lone.search(value):
                    container[index] = lone.sub("\ufffd", value)
                    replaced += 1
                elif type(value) is dict or type(value) is list:
                    pending.append(value)
            continue
        for key in list(container):
            value = container[key]
            if type(value) is str and lone.search(value):
                container[key] = value = lone.sub("\ufffd", value)
                replaced += 1
            elif type(value) is dict or type(value) is list:
                pending.append(value)
            if type(key) is str and lone.search(key):
                del container[key]
                container[lone.sub("\ufffd", key)] = value
                replaced += 1
    return payload, replaced

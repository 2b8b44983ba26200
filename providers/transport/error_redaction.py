"""What servers quote back in error messages, removed before a message is shown or logged.

Messages never carry prompt or completion text. Servers are known to echo both: pydantic's
``'input': …`` (SGLang, FastAPI validation errors repeat the offending request value),
nlohmann's ``last read: '…'`` and llama.cpp's ``Failed to parse input at pos N: …`` (both quote
text). Each is recognised by its wording and the quoted value replaced, so what is left still
says what went wrong. The untouched body stays on the error (``ProviderError.body``) for whoever
needs it.
"""

from __future__ import annotations

import re
from functools import cache

__all__ = ["REDACTED", "redact", "scrub_secrets"]

REDACTED = "<redacted>"

_CLOSERS = {"[": "]", "(": ")", "{": "}"}


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The echo key, ``last read`` and ``parse input at pos`` patterns, compiled on first use:
    every wire client imports this module, and only an error message needs them."""
    return (
        re.compile(r"""['"]input['"]\s*:\s*"""),
        re.compile(r"last read: '.*?'(?=; |;$|$)", re.DOTALL),
        re.compile(r"(Failed to parse input at pos \d+:).*", re.DOTALL),
    )


def redact(message: str) -> str:
    """Remove the request and output text servers are known to quote in error messages."""
    if "input" in message:
        message = _redact_echoed_inputs(message)
    if "last read: '" in message:
        message = _patterns()[1].sub(f"last read: {REDACTED}", message)
    if "Failed to parse input at pos" in message:
        message = _patterns()[2].sub(rf"\1 {REDACTED}", message)
    return message


def _redact_echoed_inputs(message: str) -> str:
    pieces: list[str] = []
    pos = 0
    for match in _patterns()[0].finditer(message):
        if match.start() < pos:
            continue  # inside a value already redacted
        pieces.append(message[pos : match.end()])
        pieces.append(REDACTED)
        pos = _skip_literal(message, match.end())
    if not pieces:
        return message
    pieces.append(message[pos:])
    return "".join(pieces)


def _skip_literal(text: str, start: int) -> int:
    """The end of the Python or JSON literal starting at ``start`` (a repr, best effort)."""
    end = len(text)
    if start >= end:
        return start
    opening = text[start]
    if opening in "'\"":
        return _skip_string(text, start)
    if opening in _CLOSERS:
        return _skip_bracketed(text, start)
    i = start
    while i < end and text[i] not in ",)]}\n":
        i += 1
    return i


def _skip_bracketed(text: str, start: int) -> int:
    """Past the bracket closing the one at ``start``; brackets inside strings do not count."""
    stack = [_CLOSERS[text[start]]]
    i = start + 1
    while i < len(text) and stack:
        char = text[i]
        if char in "'\"":
            i = _skip_string(text, i)
            continue
        if char in _CLOSERS:
            stack.append(_CLOSERS[char])
        elif char == stack[-1]:
            stack.pop()
        i += 1
    return i


def _skip_string(text: str, start: int) -> int:
    quote = text[start]
    i = start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1
    return i


def scrub_secrets(error: BaseException, secrets: tuple[str, ...]) -> None:
    """Replace each of ``secrets`` (the client's own credentials) wherever ``error`` quotes
    it: its message, ``body`` and ``user_message``. For errors whose text arrived inside the
    stream (``data: {"error": …}``), which no status-error path masked before parsing."""
    if not secrets:
        return
    attributes = vars(error) if hasattr(error, "__dict__") else {}
    texts = [text for text in (*error.args, *attributes.values()) if isinstance(text, str)]
    if not any(secret in text for secret in secrets for text in texts):
        return
    error.args = tuple(_masked(a, secrets) if isinstance(a, str) else a for a in error.args)
    for name in ("body", "user_message"):
        value = attributes.get(name)
        if isinstance(value, str):
            setattr(error, name, _masked(value, secrets))


def _masked(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text

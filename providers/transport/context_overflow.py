"""Recognising "the prompt does not fit", whatever status and wording the server chose.

A context overflow is terminal (retrying the same prompt cannot help), so it must be told apart
from other 400s and 500s. It is recognised by structured type first, then by each server's
wording (docs/wire.md §4.2); the prompt's size and the context window are read from the body's
fields when the server gives them (llama.cpp), else from the message.
"""

from __future__ import annotations

import re
from typing import Any

from providers.transport.error_bodies import ErrorBody

__all__ = ["context_window", "is_context_overflow", "prompt_tokens"]

_OVERFLOW_TYPES = {"exceed_context_size_error", "context_length_exceeded"}
_OVERFLOW_TEXT = re.compile(
    r"maximum context length|exceeds the available context size|context length is only"
    r"|longer than the model's context length|requested token count exceeds"
    r"|longer than the maximum model length|is larger than the max context size"
    r"|prompt is too long",
    re.IGNORECASE,
)
# Each pattern's group is the context window, or (below) the prompt's token count.
_CONTEXT_WINDOW = [
    re.compile(r"maximum context length (?:is|of) (\d+)", re.IGNORECASE),
    re.compile(r"available context size \((\d+) tokens\)", re.IGNORECASE),
    re.compile(r"model's context length \((\d+) tokens\)", re.IGNORECASE),
    re.compile(r"context length is only (\d+)", re.IGNORECASE),
    re.compile(r"maximum model length of (\d+)", re.IGNORECASE),
    re.compile(r"max context size \((\d+) tokens\)", re.IGNORECASE),
]
_PROMPT_TOKENS = [
    re.compile(r"prompt contains (?:at least )?(\d+) input tokens", re.IGNORECASE),
    re.compile(r"you passed (\d+) input tokens", re.IGNORECASE),  # vLLM >= 0.16
    re.compile(r"request \((\d+) tokens\)", re.IGNORECASE),
    re.compile(r"the input \((\d+) tokens\)", re.IGNORECASE),
    re.compile(r"\binput \((\d+) tokens\) is larger", re.IGNORECASE),
    re.compile(r"(\d+) tokens from the input messages", re.IGNORECASE),
    re.compile(r"\((\d+) in the messages", re.IGNORECASE),
    re.compile(r"decoder prompt \(length (\d+)\)", re.IGNORECASE),
    re.compile(r"parameter=input_tokens, value=(\d+)", re.IGNORECASE),
]
# Messages that mention length but are about request structure, not prompt size.
_STRUCTURAL = re.compile(
    r"system message must be at the beginning|must alternate|invalid role", re.IGNORECASE
)


def is_context_overflow(status: int | None, parsed: ErrorBody) -> bool:
    kind = (parsed.error_type or "").lower()
    code_text = str(parsed.code or "").lower()
    return bool(
        kind in _OVERFLOW_TYPES
        or code_text in _OVERFLOW_TYPES
        or status == 413
        or (_OVERFLOW_TEXT.search(parsed.message) and not _STRUCTURAL.search(parsed.message))
    )


def prompt_tokens(parsed: ErrorBody) -> int | None:
    return _positive_int(parsed.extra.get("n_prompt_tokens")) or _first_int(
        _PROMPT_TOKENS, parsed.message
    )


def context_window(parsed: ErrorBody) -> int | None:
    return _positive_int(parsed.extra.get("n_ctx")) or _first_int(_CONTEXT_WINDOW, parsed.message)


def _first_int(patterns: list[re.Pattern[str]], text: str) -> int | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    return None


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

"""Fitting ``max_tokens`` into the context window, for callers who ask for it.

SGLang rejects ``prompt + max_tokens > context`` with a 400 (vLLM ≤ 0.3x did too; 0.33 clamps
silently; llama.cpp stops at the context end with ``finish_reason: "length"``), docs/wire.md
§5. Clamping is opt-in (``clamp_max_tokens=True`` on the client) because it needs a prompt
*estimate*: an estimate too high shortens answers for nothing, too low still gets the 400.

The pre-flight check (``preflight_context_check=True`` on the client) asks the server's own
tokenizer instead (``providers.chat_completions.token_count``), and ``refuse_past_context``
refuses a request that cannot fit before it is sent; with an exact count the clamp uses it too.

Pure arithmetic; no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from providers.abstractions.errors import ContextLengthExceededError

__all__ = ["clamp_max_output_tokens", "estimate_prompt_tokens", "refuse_past_context"]

_BYTES_PER_TOKEN = 3.0
"""UTF-8 bytes per token, on the high side of the token count: English averages about 4 bytes
per token and CJK about 3 (one character), so dividing by 3 over-estimates English and is about
right for CJK. Over-estimating is the safe direction for a clamp."""

_PER_MESSAGE = 8
"""Chat-template tokens around each message (role markers, separators)."""


def estimate_prompt_tokens(
    texts: Iterable[str], *, per_message_overhead: int = _PER_MESSAGE
) -> int:
    """A deliberately generous token estimate for a list of message texts (and tool schemas
    serialised to JSON, if the caller includes them). Not a tokenizer: exact counts need the
    server's ``/tokenize``."""
    total = 0
    for text in texts:
        total += math.ceil(len(text.encode("utf-8")) / _BYTES_PER_TOKEN) + per_message_overhead
    return total


def clamp_max_output_tokens(
    requested: int | None,
    *,
    context_window: int | None,
    prompt_tokens: int,
    max_output_tokens: int | None = None,
    safety_margin: int = 0,
) -> int | None:
    """``requested`` lowered to what fits: ``context_window - prompt_tokens - safety_margin`` and
    ``max_output_tokens``.

    Returns ``requested`` unchanged when it is ``None`` (the server's own default applies; we do
    not invent a limit), when the context window is unknown, or when the prompt alone already
    fills the window (clamping to nothing would hide the real problem; the server's context error
    — ``ContextLengthExceededError`` — says it better).
    """
    if requested is None or context_window is None:
        return requested
    limit = requested
    if max_output_tokens is not None:
        limit = min(limit, max_output_tokens)
    available = context_window - prompt_tokens - safety_margin
    if available < 1:
        return requested
    return max(1, min(limit, available))


def refuse_past_context(
    *,
    prompt_tokens: int,
    max_output_tokens: int | None,
    context_window: int | None,
    backend: str | None = None,
    counted_by: str = "",
) -> None:
    """``ContextLengthExceededError`` when ``prompt_tokens`` and the output asked for (at least
    one token when ``max_output_tokens`` is ``None``: the server's default takes what is left)
    pass ``context_window``; nothing when they fit or the window is unknown."""
    if context_window is None:
        return
    output = max_output_tokens if max_output_tokens else 1
    if prompt_tokens + output <= context_window:
        return
    asked = f"{max_output_tokens} output tokens" if max_output_tokens else "any output"
    raise ContextLengthExceededError(
        f"the prompt is {prompt_tokens} tokens (counted by {counted_by or 'the server'}), and "
        f"with {asked} it does not fit the context window of {context_window} tokens: refused "
        "before sending; shorten the conversation or ask for fewer output tokens",
        prompt_tokens=prompt_tokens,
        context_window=context_window,
        backend=backend,
    )

"""``clamp_max_tokens``: ask for no more output than the context window leaves.

SGLang refuses a request whose prompt plus ``max_tokens`` passes the window, where llama.cpp and
vLLM cut the answer short; clamping here makes the three behave alike. It is an opt-in, so the
capabilities package it needs is loaded on first use, never on a chat's cold start.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from providers.abstractions.messages import ChatMessage

if TYPE_CHECKING:
    from capabilities.models import ModelCapabilities
    from providers.abstractions.chat_client import ChatInput
    from providers.abstractions.options import ChatOptions

__all__ = ["clamp_to_context"]


async def clamp_to_context(
    caps: ModelCapabilities, messages: ChatInput, options: ChatOptions
) -> ChatOptions:
    """``options`` with ``max_output_tokens`` lowered to what the window leaves after an
    estimate of the prompt (unchanged when the window is unknown or there is room)."""
    # deferred: an opt-in; the first request need not load the capabilities package
    from capabilities.budget import clamp_max_output_tokens, estimate_prompt_tokens

    window = caps.context_window.value
    if not window or not options.max_output_tokens:
        return options
    texts = [m.text for m in ChatMessage.coerce_all(messages)]
    clamped = clamp_max_output_tokens(
        options.max_output_tokens,
        context_window=window,
        prompt_tokens=estimate_prompt_tokens(texts),
        max_output_tokens=caps.max_output_tokens.value,
    )
    if clamped == options.max_output_tokens:
        return options
    return replace(options, max_output_tokens=clamped)

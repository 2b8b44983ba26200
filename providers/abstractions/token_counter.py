"""``TokenCounter``: the service a client offers to count a chat request's tokens with the
server's own tokenizer (``token_count.TokenCount`` is what it returns).

A plain base class, not a ``Protocol``: ``service_of`` takes the class it looks for, and mypy
refuses a protocol there (``type-abstract``), which every caller would meet. The chat client
derives from it, so ``service_of(client, TokenCounter)`` finds it through any stack of layers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from providers.abstractions.chat_client import ChatInput
    from providers.abstractions.options import ChatOptions
    from providers.abstractions.token_count import TokenCount

__all__ = ["TokenCounter"]


class TokenCounter:
    """Counts the tokens of a chat request as the server would see it. A client that can
    subclasses it and overrides ``count_tokens``; ``isinstance`` then finds it in a stack."""

    __slots__ = ()

    async def count_tokens(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> TokenCount:
        raise NotImplementedError(f"{type(self).__name__} does not count tokens")

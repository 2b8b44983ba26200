"""How many tokens a prompt is, by the server's own tokenizer: ``TokenCount`` and the
``TokenCounter`` service.

Frameworks count tokens to trim or compact a conversation before it overflows, and most count
four characters a token. A server that serves the model also serves its tokenizer and chat
template (vLLM's ``/tokenize`` takes the messages themselves; llama.cpp renders them with
``/apply-template``), so the count can be the server's. ``TokenCounter`` is the service a client
offers for it: the chat client is one, and a framework holding only the outermost layer finds it
with ``service_of(client, TokenCounter)`` (or the layer's ``get_service(TokenCounter)``).

``TokenCounter`` (``token_counter``) is a module of its own, without a value type, since every
chat client class derives from it at import.
"""

from __future__ import annotations

from providers.abstractions.records import value_class

__all__ = ["ESTIMATE", "TokenCount"]

ESTIMATE = "estimate"
"""``TokenCount.source`` of a count that no tokenizer made (``capabilities.budget``'s
generous estimate, where the server has no tokenizer route)."""


@value_class(frozen=True)
class TokenCount:
    """The size of one prompt (messages, tools and the chat template around them)."""

    count: int
    max_model_len: int | None = None
    """The server's context window, when the tokenizer's answer says it (vLLM)."""
    exact: bool = False
    """The count of the exact prompt the server would run: its template applied and tokenized
    by its tokenizer. False for an estimate, and for a count of the messages' text alone by the
    server's tokenizer (SGLang), which leaves out the template's few tokens per message."""
    source: str = ESTIMATE
    """Who counted: ``<backend>:<route>`` (``vllm:/tokenize``,
    ``llamacpp:/apply-template+/tokenize``) or ``estimate`` (``ESTIMATE``)."""

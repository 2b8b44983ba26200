"""The chat client's opt-in checks before a request: the model id against ``/v1/models``
(once), ``max_output_tokens`` clamped to what the context leaves (SGLang rejects more), and the
pre-flight check that refuses a request that cannot fit, counted by the server's tokenizer.

A client that asked for neither holds no ``RequestPreparation`` and tests one attribute per
request; one that did pays the checks, and the model id's only until it was checked once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from providers.abstractions.chat_client import ChatInput
from providers.abstractions.options import ChatOptions

if TYPE_CHECKING:
    from providers.chat_completions.client import OpenAiCompatibleChatClient

__all__ = ["RequestPreparation"]


class RequestPreparation:
    """What one client checks before its requests (``validate_model``, ``clamp_max_tokens``,
    ``preflight_context_check``)."""

    __slots__ = ("clamp_max_tokens", "preflight_context_check", "validate_model")

    def __init__(
        self, validate_model: bool, clamp_max_tokens: bool, preflight_context_check: bool = False
    ) -> None:
        self.validate_model = validate_model
        self.clamp_max_tokens = clamp_max_tokens
        self.preflight_context_check = preflight_context_check

    @classmethod
    def if_asked(
        cls, validate_model: bool, clamp_max_tokens: bool, preflight_context_check: bool = False
    ) -> RequestPreparation | None:
        """The checks asked for, or ``None`` when none was (nothing to do per request)."""
        if validate_model or clamp_max_tokens or preflight_context_check:
            return cls(validate_model, clamp_max_tokens, preflight_context_check)
        return None

    async def prepare(
        self, client: OpenAiCompatibleChatClient, messages: ChatInput, options: ChatOptions | None
    ) -> ChatOptions | None:
        """``options`` as the request will use them, after the checks this client asked for."""
        if self.validate_model:
            # deferred: -X importtime: structlog, +13 ms on this module's ~130 ms, for an opt-in
            from capabilities.readiness import wait_until_ready

            await wait_until_ready(client._http, client.endpoint, headers=client._headers)
            await client.get_capabilities()  # (the resolver now knows the served ids)
            resolver = client._resolver
            assert resolver is not None
            if client.model_id is not None:
                client.model_id = await resolver.validate_model(client.model_id)
            self.validate_model = False
        if self.preflight_context_check:
            # deferred: an opt-in, never on a chat's cold start
            from providers.chat_completions.token_count import fit_to_context

            return await fit_to_context(client, messages, options, clamp=self.clamp_max_tokens)
        if self.clamp_max_tokens and options is not None and options.max_output_tokens:
            # deferred: an opt-in, never on a chat's cold start
            from providers.chat_completions.output_clamp import clamp_to_context

            options = await clamp_to_context(await client.get_capabilities(), messages, options)
        return options

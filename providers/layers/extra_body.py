"""``ExtraBodyChatClient``: configured top-level request-body keys, on every request.

Backends take their switches in the body (``chat_template_kwargs.enable_thinking`` on vLLM and
SGLang, ``grammar`` or ``cache_prompt`` on llama.cpp), so configuration needs a layer that adds
them without the caller repeating them and without ever overriding what the caller set.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import Any

from providers.abstractions.chat_client import ChatClient, ChatInput
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.delegating import DelegatingChatClient
from providers.abstractions.options import ChatOptions
from providers.abstractions.update_runs import UpdateRuns, runs_of

__all__ = ["ExtraBodyChatClient", "merge_extra_body"]


def merge_extra_body(extra: Mapping[str, Any], caller: Mapping[str, Any]) -> dict[str, Any]:
    """``caller`` over ``extra``, recursively for nested mappings.

    Recursive because the common configured key is ``chat_template_kwargs``: a caller passing
    ``{"chat_template_kwargs": {"foo": 1}}`` must not silently drop the configured
    ``enable_thinking``. On a conflict the caller's value always wins.
    """
    merged: dict[str, Any] = dict(extra)
    for key, value in caller.items():
        base = merged.get(key)
        if isinstance(base, Mapping) and isinstance(value, Mapping):
            merged[key] = merge_extra_body(base, value)
        else:
            merged[key] = value
    return merged


class ExtraBodyChatClient(DelegatingChatClient):
    """Adds configured top-level body keys to every request, never overriding the caller's.

    The keys travel as ``ChatOptions.additional_properties``, which the request builder already
    writes into the body without replacing a key the client sets itself. The caller's options
    are copied, never mutated: the same ``ChatOptions`` may be reused against other backends.
    """

    def __init__(self, inner: ChatClient, extra_body: Mapping[str, Any]) -> None:
        super().__init__(inner)
        self.extra_body: dict[str, Any] = dict(extra_body)

    def _options(self, options: ChatOptions | None) -> ChatOptions:
        if options is None:
            return ChatOptions(additional_properties=merge_extra_body(self.extra_body, {}))
        merged = merge_extra_body(self.extra_body, options.additional_properties)
        return replace(options, additional_properties=merged)

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        return await self.inner.get_response(messages, self._options(options))

    def get_streaming_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        return self.inner.get_streaming_response(messages, self._options(options))

    def _streaming_runs(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> UpdateRuns:
        return runs_of(self.inner, messages, self._options(options))

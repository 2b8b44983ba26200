"""``create_chat_client``: the standard pipeline in one call.

Most callers want the same stack, and getting its order wrong is a subtle bug, so it is built
here once, outermost first::

    TelemetryChatClient        times the whole call, retries included, as the caller saw it
    └── RetryingChatClient     retries what the layers below raised, before output starts
        └── ExtraBodyChatClient  configured body keys (chat_template_kwargs, grammar…)
            └── TextRecoveryChatClient  <think> tags and text tool calls → structured contents
                └── OpenAiCompatibleChatClient  the wire

Text recovery sits inside retry so a retried attempt is recovered afresh, and telemetry sits
outside retry so its timings are the caller's wall clock. Each layer is optional; removing one
removes its feature and nothing else (STYLE.md point 6). Configuration (``providers.config``) and
the CLI build their clients through this function, so the three never disagree on the order.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from providers.chat_client import ChatClient, ChatInput
from providers.chat_response import ChatResponse, ChatResponseUpdate
from providers.client import OpenAiCompatibleChatClient, Timeouts
from providers.errors import ConfigurationError
from providers.options import ChatOptions
from providers.pipeline import ChatClientBuilder, DelegatingChatClient

if TYPE_CHECKING:
    from providers.profiles import BackendProfile
    from providers.retry import RetryPolicy

__all__ = ["DEFAULT_RETRY", "ExtraBodyChatClient", "create_chat_client", "merge_extra_body"]


class _DefaultRetry:
    """Sentinel for "the default ``RetryPolicy()``": ``retry=None`` means *no* retry layer, and
    importing ``providers.retry`` (tenacity, structlog) at import time would cost cold start."""

    def __repr__(self) -> str:
        return "DEFAULT_RETRY"


DEFAULT_RETRY: Any = _DefaultRetry()


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


def create_chat_client(
    base_url: str,
    model_id: str | None = None,
    api_key: str | None = None,
    *,
    backend: str | BackendProfile | None = None,
    reasoning_tags: str | None = "auto",
    text_tool_calls: str | None = "auto",
    retry: RetryPolicy | None = DEFAULT_RETRY,
    telemetry: bool = True,
    timeouts: Timeouts | None = None,
    extra_body: Mapping[str, Any] | None = None,
    **client_kwargs: Any,
) -> ChatClient:
    """The standard pipeline over ``OpenAiCompatibleChatClient``; see the module docstring.

    ``retry`` defaults to ``RetryPolicy()``; ``None`` leaves the retry layer out.
    ``reasoning_tags`` and ``text_tool_calls`` both ``None`` (or ``"off"``) leave text recovery
    out, so the caller gets exactly what the server sent. ``telemetry=False`` leaves timings out.
    ``backend="auto"`` is read as "not known": the generic, tolerant profile (detection is the
    capability resolver's job and costs a request, so it is never done implicitly here).
    ``client_kwargs`` go to ``OpenAiCompatibleChatClient`` (``http_client``, ``headers``…).
    Closing the returned client closes every layer and the owned connection pool.
    """
    if isinstance(backend, str) and backend.strip().lower() in ("", "auto"):
        backend = None
    if timeouts is not None:
        client_kwargs["timeouts"] = timeouts
    try:
        core = OpenAiCompatibleChatClient(
            base_url, model_id, api_key, backend=backend, **client_kwargs
        )
    except TypeError as exc:  # an unknown keyword: a configuration mistake, not a crash
        raise ConfigurationError(f"create_chat_client: {exc}") from exc
    builder = ChatClientBuilder(core)
    if telemetry:
        from telemetry import TelemetryChatClient

        profile = core.profile
        builder.use(lambda inner: TelemetryChatClient(inner, backend=profile))
    if retry is not None:
        from providers.retry import RetryingChatClient, RetryPolicy

        policy = RetryPolicy() if retry is DEFAULT_RETRY else retry
        builder.use(lambda inner: RetryingChatClient(inner, policy))
    if extra_body:
        body = dict(extra_body)
        builder.use(lambda inner: ExtraBodyChatClient(inner, body))
    recovery = [v for v in (reasoning_tags, text_tool_calls) if v not in (None, "off")]
    if recovery:
        from providers.text_recovery import TextRecoveryChatClient

        tags = reasoning_tags if reasoning_tags is not None else "off"
        calls = text_tool_calls if text_tool_calls is not None else "off"
        builder.use(
            lambda inner: TextRecoveryChatClient(inner, reasoning_tags=tags, text_tool_calls=calls)
        )
    return builder.build()

"""Delegating layers: one concern each, wrapped around any ``ChatClient``.

Each layer extends ``DelegatingChatClient`` and overrides only what its concern changes; on a
stream, it is one async generator over its inner stream. ``ChatClientBuilder`` stacks them;
``create_chat_client`` builds the standard order (telemetry → retry → text recovery → wire).
Writing a new one: docs/extending.md, "A new layer".

* ``retry``: ``RetryPolicy`` and ``RetryingChatClient`` (a stream only until output starts);
* ``fallback``: ``FallbackChatClient``, another backend when the main one fails before
  answering;
* ``text_recovery`` (with ``choice_recovery``, ``choice_stages`` and ``block_whitespace``): tool
  calls and ``<think>`` tags left in text become structured contents;
* ``extra_body``: configured body keys on every request, the caller's winning;
* ``stream_head``: reading a stream's head, which retry and fallback share;
* ``function_invocation``: ``FunctionInvokingChatClient``, the tool loop that runs the
  ``AIFunction`` calls the model makes;
* ``session_affinity``: ``SessionAffinityChatClient``, one routing key per conversation for
  cache-aware routers (``SessionAffinity``);
* ``embedding_retry``, ``embedding_cache``: ``RetryingEmbeddingGenerator`` (the same
  ``RetryPolicy``) and ``CachingEmbeddingGenerator`` (an in-memory LRU), around any
  ``EmbeddingGenerator``;
* ``anonymous``: ``AnonymousDelegatingChatClient``, one-off middleware made of functions
  (``ChatClientBuilder.use(get_response=..., get_streaming_response=...)``).
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from providers.lazy_exports import lazy_exports as _lazy_exports

if _TYPE_CHECKING:
    from providers.layers.embedding_cache import (
        CachingEmbeddingGenerator as CachingEmbeddingGenerator,
    )
    from providers.layers.embedding_retry import (
        RetryingEmbeddingGenerator as RetryingEmbeddingGenerator,
    )
    from providers.layers.extra_body import ExtraBodyChatClient as ExtraBodyChatClient
    from providers.layers.fallback import FallbackChatClient as FallbackChatClient
    from providers.layers.function_invocation import (
        FunctionInvokingChatClient as FunctionInvokingChatClient,
    )
    from providers.layers.retry import RetryingChatClient as RetryingChatClient
    from providers.layers.retry import RetryPolicy as RetryPolicy
    from providers.layers.session_affinity import SessionAffinity as SessionAffinity
    from providers.layers.session_affinity import (
        SessionAffinityChatClient as SessionAffinityChatClient,
    )
    from providers.layers.text_recovery import TextRecoveryChatClient as TextRecoveryChatClient

_lazy_exports(
    __name__,
    {
        ".embedding_cache": ("CachingEmbeddingGenerator",),
        ".embedding_retry": ("RetryingEmbeddingGenerator",),
        ".extra_body": ("ExtraBodyChatClient",),
        ".fallback": ("FallbackChatClient",),
        ".function_invocation": ("FunctionInvokingChatClient",),
        ".retry": ("RetryPolicy", "RetryingChatClient"),
        ".session_affinity": ("SessionAffinity", "SessionAffinityChatClient"),
        ".text_recovery": ("TextRecoveryChatClient",),
    },
)

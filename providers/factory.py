"""``create_chat_client``: the standard pipeline in one call (and
``create_embedding_generator``, its embeddings counterpart).

Most callers want the same stack, and getting its order wrong is a subtle bug, so it is built
here once, outermost first::

    TelemetryChatClient        times the whole call, retries included, as the caller saw it
    └── SessionAffinityChatClient  the conversation's routing key (when configured)
        └── RetryingChatClient     retries what the layers below raised, before output starts
            └── ExtraBodyChatClient  configured body keys (chat_template_kwargs, grammar…)
                └── TextRecoveryChatClient  <think> tags, text tool calls → contents
                    └── OpenAiCompatibleChatClient  the wire

Text recovery sits inside retry so a retried attempt is recovered afresh, and telemetry sits
outside retry so its timings are the caller's wall clock. Session affinity sits outside retry so
a call's routing key is fixed once and every attempt resends it (retry resends the options it
was given; so does a fallback over two pipelines, each with its own affinity layer). Each layer
is optional; removing one removes its feature and nothing else. Configuration
(``providers.config``) and the CLI build their clients through this function, so the three never
disagree on the order.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from providers.abstractions.chat_client import ChatClient
from providers.abstractions.errors import ConfigurationError
from providers.abstractions.limits import Limits
from providers.builder import ChatClientBuilder
from providers.chat_completions.client import OpenAiCompatibleChatClient, Timeouts
from providers.layers.extra_body import ExtraBodyChatClient, merge_extra_body
from providers.layers.retry import RetryPolicy

if TYPE_CHECKING:
    from providers.abstractions.embeddings import EmbeddingGenerator
    from providers.backends import BackendProfile
    from providers.layers.session_affinity import SessionAffinity
    from providers.responses import OpenAiCompatibleResponsesClient

__all__ = [
    "DEFAULT_RETRY",
    "DefaultRetry",
    "ExtraBodyChatClient",
    "core_client_class",
    "create_chat_client",
    "create_embedding_generator",
    "merge_extra_body",
]


class DefaultRetry(enum.Enum):
    """``retry`` left out: the default ``RetryPolicy()``, since ``retry=None`` means *no* retry
    layer. A one-member enum is the sentinel a type checker narrows (``retry is DEFAULT_RETRY``),
    like httpx's ``USE_CLIENT_DEFAULT``."""

    DEFAULT_RETRY = "DEFAULT_RETRY"

    def __repr__(self) -> str:
        return "DEFAULT_RETRY"


DEFAULT_RETRY: Final = DefaultRetry.DEFAULT_RETRY


def create_chat_client(
    base_url: str,
    model_id: str | None = None,
    api_key: str | None = None,
    *,
    backend: str | BackendProfile | None = None,
    api: str = "chat",
    reasoning_tags: str | None = "auto",
    text_tool_calls: str | None = "auto",
    retry: RetryPolicy | DefaultRetry | None = DEFAULT_RETRY,
    telemetry: bool = True,
    timeouts: Timeouts | None = None,
    extra_body: Mapping[str, Any] | None = None,
    limits: Limits | None = None,
    session_affinity: SessionAffinity | None = None,
    **client_kwargs: Any,
) -> ChatClient:
    """The standard pipeline over ``OpenAiCompatibleChatClient``; see the module docstring.

    ``retry`` defaults to ``RetryPolicy()``; ``None`` leaves the retry layer out.
    ``reasoning_tags`` and ``text_tool_calls`` both ``None`` (or ``"off"``) leave text recovery
    out, so the caller gets exactly what the server sent. ``telemetry=False`` leaves timings out.
    ``backend="auto"`` is read as "not known": the generic, tolerant profile (detection is the
    capability resolver's job and costs a request, so it is never done implicitly here).
    ``api="responses"`` puts ``OpenAiCompatibleResponsesClient`` (``/v1/responses``) at the core
    instead of the chat-completions client; every other layer is the same, which is what lets
    an agent switch APIs by configuration.
    ``limits`` (``Limits``) bounds what a server can make the pipeline hold; it reaches the
    core client and retry (``None``: the defaults).
    ``session_affinity`` (``SessionAffinity``): send each conversation's routing key.
    ``client_kwargs`` go to the core client (``http_client``, ``headers``…).
    Closing the returned client closes every layer and the owned connection pool.
    """
    if isinstance(backend, str) and backend.strip().lower() in ("", "auto"):
        backend = None
    if timeouts is not None:
        client_kwargs["timeouts"] = timeouts
    if limits is not None:
        client_kwargs["limits"] = limits
    core_class = core_client_class(api)
    try:
        core = core_class(base_url, model_id, api_key, backend=backend, **client_kwargs)
    except TypeError as exc:  # an unknown keyword: a configuration mistake, not a crash
        raise ConfigurationError(f"create_chat_client: {exc}") from exc
    builder = ChatClientBuilder(core)
    if telemetry:
        builder.use_telemetry(backend=core.profile)
    if session_affinity is not None:
        builder.use_session_affinity(session_affinity)
    if retry is not None:
        builder.use_retry(None if retry is DEFAULT_RETRY else retry, limits=limits)
    if extra_body:
        builder.use_extra_body(extra_body)
    if reasoning_tags not in (None, "off") or text_tool_calls not in (None, "off"):
        builder.use_text_recovery(
            text_tool_calls if text_tool_calls is not None else "off",
            reasoning_tags=reasoning_tags if reasoning_tags is not None else "off",
            limits=limits,
        )
    return builder.build()


def core_client_class(
    api: str,
) -> type[OpenAiCompatibleChatClient] | type[OpenAiCompatibleResponsesClient]:
    """The wire client for an endpoint family; the Responses client is imported only if used."""
    if api == "chat":
        return OpenAiCompatibleChatClient
    if api == "responses":
        # deferred: -X importtime: about 6 ms a chat pipeline's first request need not load
        from providers.responses import OpenAiCompatibleResponsesClient

        return OpenAiCompatibleResponsesClient
    raise ConfigurationError(f"create_chat_client: api must be 'chat' or 'responses', not {api!r}")


def create_embedding_generator(
    base_url: str,
    model_id: str | None = None,
    api_key: str | None = None,
    *,
    backend: str | BackendProfile | None = None,
    retry: RetryPolicy | DefaultRetry | None = DEFAULT_RETRY,
    telemetry: bool = True,
    cache_entries: int = 0,
    timeouts: Timeouts | None = None,
    limits: Limits | None = None,
    **generator_kwargs: Any,
) -> EmbeddingGenerator:
    """The standard embedding pipeline over ``OpenAiCompatibleEmbeddingGenerator``, outermost
    first: ``TelemetryEmbeddingGenerator`` (the caller's duration, one event per call) →
    ``CachingEmbeddingGenerator`` (only with ``cache_entries`` > 0: cached values are neither
    sent nor retried) → ``RetryingEmbeddingGenerator`` → the wire.

    ``retry`` defaults to ``RetryPolicy()``; ``None`` leaves the retry layer out.
    ``telemetry=False`` leaves the event out. ``backend="auto"`` is the generic row.
    ``generator_kwargs`` go to the wire generator (``max_batch_size``, ``normalize``,
    ``encoding_format``, ``http_client``, ``headers``…). Closing the result closes every
    layer and the owned connection pool.
    """
    # deferred: the embedding modules, which a chat pipeline never loads (-X importtime)
    from providers.embeddings import OpenAiCompatibleEmbeddingGenerator

    # deferred: as above, the embedding layers
    from providers.layers.embedding_cache import CachingEmbeddingGenerator

    # deferred: as above, the embedding layers
    from providers.layers.embedding_retry import RetryingEmbeddingGenerator

    # deferred: as above, the embedding telemetry
    from telemetry.embeddings import TelemetryEmbeddingGenerator

    if isinstance(backend, str) and backend.strip().lower() in ("", "auto"):
        backend = None
    try:
        core = OpenAiCompatibleEmbeddingGenerator(
            base_url,
            model_id,
            api_key,
            backend=backend,
            timeouts=timeouts,
            limits=limits,
            **generator_kwargs,
        )
    except TypeError as exc:  # an unknown keyword: a configuration mistake, not a crash
        raise ConfigurationError(f"create_embedding_generator: {exc}") from exc
    generator: EmbeddingGenerator = core
    if retry is not None:
        policy = None if retry is DEFAULT_RETRY else retry
        generator = RetryingEmbeddingGenerator(generator, policy)
    if cache_entries:
        generator = CachingEmbeddingGenerator(generator, max_entries=cache_entries)
    if telemetry:
        generator = TelemetryEmbeddingGenerator(generator, backend=core.profile)
    return generator

"""A configured role or backend, as a client (or an embedding generator): the one step from
file to pipeline.

What the client does is ``create_chat_client``'s business (``providers.factory``), so
configuration and code can never assemble different pipelines; this module only passes the
entry's settings on and adds the fallback a role asks for.
"""

from __future__ import annotations

from typing import Any

from providers.abstractions.chat_client import ChatClient
from providers.abstractions.embeddings import EmbeddingGenerator
from providers.abstractions.errors import ConfigurationError
from providers.config.embeddings import EmbeddingsConfig
from providers.config.schema import OaicompatConfig
from providers.factory import create_chat_client
from providers.factory import create_embedding_generator as create_embedding_pipeline
from providers.layers.fallback import FallbackChatClient

__all__ = ["EMBEDDINGS_ROLE", "client_for", "create_embedding_generator"]

EMBEDDINGS_ROLE = "embeddings"
"""The role ``create_embedding_generator`` asks for by default: ``roles: {embeddings: NAME}``."""


def client_for(
    config: OaicompatConfig,
    role_or_backend: str,
    *,
    fallback: bool = True,
    **client_kwargs: Any,
) -> ChatClient:
    """The standard pipeline (``create_chat_client``) for a role or backend name.

    When the role has a fallback (``OaicompatConfig.fallback_name``) and ``fallback`` is true,
    the result is a ``FallbackChatClient`` over two standard pipelines, each with its own retry
    and telemetry, so the main backend's transient errors are retried before failing over.
    ``client_kwargs`` reach ``create_chat_client`` (``http_client``, ``telemetry``…) and win
    over the file, so a test or the CLI can swap the transport without editing configuration.
    """
    main = _pipeline_for(config, config.backend_name(role_or_backend), client_kwargs)
    fallback_name = config.fallback_name(role_or_backend) if fallback else None
    if fallback_name is None:
        return main
    main_backend = config.backends[config.backend_name(role_or_backend)]
    return FallbackChatClient(
        main,
        _pipeline_for(config, fallback_name, client_kwargs),
        main_name=config.backend_name(role_or_backend),
        fallback_name=fallback_name,
        limits=client_kwargs.get("limits", config.pipeline_settings(main_backend).get("limits")),
    )


def _pipeline_for(
    config: OaicompatConfig, backend_name: str, client_kwargs: dict[str, Any]
) -> ChatClient:
    backend = config.backends[backend_name]
    settings = {**config.pipeline_settings(backend), **client_kwargs}
    if "http_client" in client_kwargs:  # (the caller's client brings its own proxy settings)
        settings.pop("proxy", None)
        settings.pop("trust_env", None)
    api_key = backend.api_key.get_secret_value() if backend.api_key is not None else None
    return create_chat_client(backend.base_url, backend.model_id, api_key, **settings)


def create_embedding_generator(
    config: OaicompatConfig | str, role: str | None = None, **generator_kwargs: Any
) -> EmbeddingGenerator:
    """The standard embedding pipeline (``providers.factory.create_embedding_generator``) for
    a role or backend name, with the backend's ``embeddings:`` settings.

    Given a server URL instead of a configuration, it is the factory itself:
    ``create_embedding_generator("http://127.0.0.1:8080", "bge-m3")`` (``role`` is then the
    model id), as ``create_chat_client`` takes a URL.

    ``role`` is looked up as ``client_for`` does (``roles: {embeddings: local-embed}``, or a
    backend's own name); when the default ``embeddings`` role is not written, the one backend
    that declares ``embeddings:`` serves it. A role's ``fallback`` is not used: vectors from
    another model do not compare with the ones already stored, so failing over would corrupt
    an index rather than save a request. ``generator_kwargs`` win over the file.
    """
    if isinstance(config, str):
        return create_embedding_pipeline(config, role, **generator_kwargs)
    name = _embedding_backend_name(config, role or EMBEDDINGS_ROLE)
    backend = config.backends[name]
    embeddings = backend.embeddings or EmbeddingsConfig()
    settings: dict[str, Any] = {
        "backend": backend.backend,
        "retry": config.retry_for(backend),
        "timeouts": config.timeouts_for(backend),
        "limits": config.limits_for(backend),
        **config.network_for(backend),
        "normalize": embeddings.normalize,
        "cache_entries": embeddings.cache_entries,
    }
    if embeddings.max_batch_size is not None:
        settings["max_batch_size"] = embeddings.max_batch_size
    if embeddings.encoding_format is not None:
        settings["encoding_format"] = embeddings.encoding_format
    settings.update(generator_kwargs)
    if "http_client" in generator_kwargs:  # (the caller's client brings its own proxy settings)
        settings.pop("proxy", None)
        settings.pop("trust_env", None)
    api_key = backend.api_key.get_secret_value() if backend.api_key is not None else None
    model_id = embeddings.model_id or backend.model_id
    return create_embedding_pipeline(backend.base_url, model_id, api_key, **settings)


def _embedding_backend_name(config: OaicompatConfig, role: str) -> str:
    if role in config.roles or role in config.backends or role != EMBEDDINGS_ROLE:
        return config.backend_name(role)
    declared = [name for name, entry in config.backends.items() if entry.embeddings is not None]
    if len(declared) == 1:
        return declared[0]
    if declared:
        raise ConfigurationError(
            f"several backends declare embeddings ({', '.join(sorted(declared))}): name one "
            f"with roles: {{{EMBEDDINGS_ROLE}: NAME}}"
        )
    return config.backend_name(role)  # (its error lists the known names)

"""A configured role or backend, as a client: the one step from file to pipeline.

What the client does is ``create_chat_client``'s business (``providers.factory``), so
configuration and code can never assemble different pipelines; this module only passes the
entry's settings on and adds the fallback a role asks for.
"""

from __future__ import annotations

from typing import Any

from providers.abstractions.chat_client import ChatClient
from providers.config.schema import OaicompatConfig
from providers.factory import create_chat_client
from providers.layers.fallback import FallbackChatClient

__all__ = ["client_for"]


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

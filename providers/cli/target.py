"""Which backend a command talks to, and the client for it.

``--base-url`` (with ``--model``, ``--backend``) names one directly; otherwise the configuration
file (``--config``, else ``./oaicompat.yaml``, else ``~/.config/oaicompat/config.yaml``) does,
through the role or backend named by ``--use``. Either way the client is ``create_chat_client``'s
standard pipeline, so the CLI exercises what the library builds.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import field
from pathlib import Path
from typing import Any

import httpx
from pydantic import ValidationError

from capabilities.models import CapabilityOverrides
from providers.abstractions.chat_client import ChatClient
from providers.abstractions.errors import ConfigurationError
from providers.abstractions.records import value_class
from providers.chat_completions.http_client_base import url_for_errors
from providers.cli.flags import extra_body_flag
from providers.config import (
    BackendConfig,
    OaicompatConfig,
    default_config_paths,
    find_config,
    load_config,
)
from providers.factory import create_chat_client
from providers.transport.stale_connections import new_http_client

__all__ = ["Target", "closing", "target_from"]


@value_class()
class Target:
    """One backend as the command line or the configuration described it."""

    name: str
    base_url: str
    model_id: str | None
    api_key: str | None
    backend: str
    capabilities: CapabilityOverrides | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    """``create_chat_client`` keywords (retry, timeouts, recovery, extra_body)."""

    @property
    def shown_url(self) -> str:
        """``base_url`` as the CLI may print it: without the user info it may carry."""
        return url_for_errors(self.base_url)

    def probe_http(self) -> httpx.AsyncClient:
        """The probes' HTTP client, through the backend's proxy (or the environment's, unless
        ``trust_env`` is off) as its requests go; the caller closes it."""
        return new_http_client(
            proxy=self.settings.get("proxy"), trust_env=self.settings.get("trust_env", True)
        )

    def client(self, **overrides: Any) -> ChatClient:
        settings = {"backend": self.backend, **self.settings, **overrides}
        return create_chat_client(self.base_url, self.model_id, self.api_key, **settings)


def target_from(args: argparse.Namespace) -> Target:
    extra = extra_body_flag(args.extra_body)
    if args.base_url:
        _check_base_url_flag(args.base_url)
        return Target(
            url_for_errors(args.base_url),
            args.base_url,
            args.model,
            os.environ.get(args.api_key_env) or None,
            args.backend or "auto",
            settings={"extra_body": extra or None, "api": args.api or "chat"},
        )
    return _configured_target(args, extra)


def _check_base_url_flag(url: str) -> None:
    """``--base-url`` is held to the rule a configuration's ``base_url`` is, so a bad one is a
    usage error (exit 2) before any client is built, not a traceback from the first request."""
    try:
        BackendConfig(base_url=url)
    except ValidationError:
        raise ConfigurationError(
            "--base-url is not an http(s) URL with a host (http://host:port/…)"
        ) from None


def _configured_target(args: argparse.Namespace, extra: dict[str, Any]) -> Target:
    """The role or backend ``--use`` names in the configuration file; flags win over it."""
    path = find_config(args.config)
    if path is None:
        tried = ", ".join(str(p) for p in default_config_paths())
        raise ConfigurationError(f"no backend: pass --base-url or write a configuration ({tried})")
    config = load_config(path)
    name = args.use or _default_name(config, path)
    backend = config.backend(name)
    settings = config.pipeline_settings(backend)
    del settings["backend"]  # --backend may override it: passed on its own below
    settings["extra_body"] = {**backend.extra_body, **extra} or None
    if args.api and args.api != backend.api:
        settings["api"] = args.api
        settings.pop("conversation_mode", None)  # a Responses-only setting
    key = backend.api_key.get_secret_value() if backend.api_key is not None else None
    return Target(
        name,
        backend.base_url,
        args.model or backend.model_id,
        key,
        args.backend or backend.backend,
        backend.capabilities,
        settings,
    )


def _default_name(config: OaicompatConfig, path: Path) -> str:
    """Role ``main``, else the only backend; anything else needs ``--use``."""
    if "main" in config.roles:
        return "main"
    if len(config.backends) == 1:
        return str(next(iter(config.backends)))
    raise ConfigurationError(f"{path}: no role 'main' and several backends: pass --use NAME")


class closing:
    """``async with`` for any ``ChatClient``: the protocol has ``aclose``, not ``__aenter__``."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client

    async def __aenter__(self) -> ChatClient:
        return self.client

    async def __aexit__(self, *exc: object) -> None:
        await self.client.aclose()

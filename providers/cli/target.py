"""Which backend a command talks to, and the client for it.

``--base-url`` (with ``--model``, ``--backend``) names one directly; otherwise the configuration
file (``--config``, else ``./oaicompat.yaml``, else ``~/.config/oaicompat/config.yaml``) does,
through the role or backend named by ``--use``. Either way the client is ``create_chat_client``'s
standard pipeline, so the CLI exercises what the library builds; ``chat`` answers through the
role's fallback as ``client_for`` does (``Target.answering_client``), while ``probe``, ``check``
and ``record`` examine the one backend the role names first.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import field, replace
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
from providers.layers.fallback import FallbackChatClient
from providers.transport.stale_connections import new_http_client
from providers.transport.timeouts import Timeouts

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
    fallback: Target | None = None
    """The backend the configured role falls back to (flags never apply to it)."""
    backend_name: str = ""
    """The configuration's name of this backend (a role's ``name`` is the role)."""
    timeout: float | None = None
    """``--timeout``: also the probes' HTTP timeout."""

    @property
    def shown_url(self) -> str:
        """``base_url`` as the CLI may print it: without the user info it may carry."""
        return url_for_errors(self.base_url)

    def probe_http(self) -> httpx.AsyncClient:
        """The probes' HTTP client, through the backend's proxy (or the environment's, unless
        ``trust_env`` is off) as its requests go; the caller closes it."""
        return new_http_client(
            self.timeout or 5.0,
            proxy=self.settings.get("proxy"),
            trust_env=self.settings.get("trust_env", True),
        )

    def client(self, **overrides: Any) -> ChatClient:
        """This one backend's standard pipeline."""
        settings = {"backend": self.backend, **self.settings, **overrides}
        return create_chat_client(self.base_url, self.model_id, self.api_key, **settings)

    def answering_client(self) -> ChatClient:
        """What the library's ``client_for`` builds for the role: the pipeline, wrapped in a
        ``FallbackChatClient`` when the role has a fallback."""
        main = self.client()
        if self.fallback is None:
            return main
        return FallbackChatClient(
            main,
            self.fallback.client(),
            main_name=self.backend_name or self.name,
            fallback_name=self.fallback.name,
            limits=self.settings.get("limits"),
        )


DEFAULT_KEY_VARIABLE = "OAICOMPAT_API_KEY"


def target_from(args: argparse.Namespace) -> Target:
    extra = extra_body_flag(args.extra_body)
    if args.base_url:
        _check_base_url_flag(args.base_url)
        target = Target(
            url_for_errors(args.base_url),
            args.base_url,
            args.model,
            _key_from_environment(args.api_key_env),
            args.backend or "auto",
            settings={"extra_body": extra or None, "api": args.api or "chat"},
        )
    else:
        if args.api_key_env:
            raise ConfigurationError(
                "--api-key-env works with --base-url; with a configuration file the key is "
                "the backend's api_key: ${VAR}"
            )
        target = _configured_target(args, extra)
    return _with_timeout(target, args.timeout) if args.timeout else target


def _key_from_environment(variable: str | None) -> str | None:
    """The default variable may be unset (a local server needs no key); one the user named on
    the command line must be set, or the first request would fail with a bare 401."""
    key = os.environ.get(variable or DEFAULT_KEY_VARIABLE) or None
    if variable and key is None:
        raise ConfigurationError(
            f"--api-key-env {variable}: the environment variable {variable} is unset or empty; "
            f"export {variable}=<key> or leave --api-key-env out"
        )
    return key


def _with_timeout(target: Target, seconds: float) -> Target:
    """``--timeout`` caps each attempt's phases (first token, idle, total) at ``seconds``."""
    timeouts = target.settings.get("timeouts") or Timeouts()
    capped = {
        name: seconds if value is None else min(value, seconds)
        for name in ("connect", "first_token", "idle", "total")
        for value in [getattr(timeouts, name)]
    }
    settings = {**target.settings, "timeouts": replace(timeouts, **capped)}
    return replace(target, settings=settings, timeout=seconds)


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
    main = _backend_target(config, name, args, extra)
    fallback_name = config.fallback_name(name)
    if fallback_name is not None:
        fallback = _backend_target(config, fallback_name, None, {})
        main = replace(main, fallback=fallback)
    return main


def _backend_target(
    config: OaicompatConfig, name: str, args: argparse.Namespace | None, extra: dict[str, Any]
) -> Target:
    """One configured backend; ``args`` (the flags, which win over the file) for the main one."""
    backend = config.backend(name)
    settings = config.pipeline_settings(backend)
    del settings["backend"]  # --backend may override it: passed on its own below
    settings["extra_body"] = {**backend.extra_body, **extra} or None
    api = args.api if args is not None else None
    if api and api != backend.api:
        settings["api"] = api
        settings.pop("conversation_mode", None)  # a Responses-only setting
    key = backend.api_key.get_secret_value() if backend.api_key is not None else None
    return Target(
        name,
        backend.base_url,
        (args.model if args is not None else None) or backend.model_id,
        key,
        (args.backend if args is not None else None) or backend.backend,
        backend.capabilities,
        settings,
        backend_name=config.backend_name(name),
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

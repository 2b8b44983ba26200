"""``providers.gateway.asgi:app``: the gateway for an ASGI server the user runs.

    OAICOMPAT_CONFIG=backends.yaml uvicorn providers.gateway.asgi:app --workers 4

The configuration is read when the server first asks for ``app`` (not when the module is
imported, so tools that import every module need no configuration), from the file
``OAICOMPAT_CONFIG`` names (default: the CLI's search, ``oaicompat.yaml`` and the user's
configuration directory). Each worker is a separate gateway with its own pipelines; none holds
state another needs.
"""

from __future__ import annotations

import os

from providers.config.loading import find_config, load_config
from providers.gateway.app import GatewayApp
from providers.gateway.server import CONFIG_ENV

__all__ = ["app"]  # noqa: F822  (made by __getattr__ on first access)


def _app() -> GatewayApp:
    path = find_config(os.environ.get(CONFIG_ENV))
    if path is None:
        # deferred: only a misconfigured start needs it
        from providers.abstractions.errors import ConfigurationError

        raise ConfigurationError(f"no configuration file: set {CONFIG_ENV}=path/to/backends.yaml")
    access_log = os.environ.get("OAICOMPAT_ACCESS_LOG") == "1" or None
    return GatewayApp(load_config(path), access_log=access_log)


def __getattr__(name: str) -> GatewayApp:
    """``app``, made on first access and kept (PEP 562)."""
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    made = globals()["app"] = _app()
    return made

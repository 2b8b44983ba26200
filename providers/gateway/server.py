"""Running the gateway: uvicorn, one process or several.

uvicorn with uvloop and httptools (its ``standard`` extra) is the ASGI server: the gateway's
work per chunk is one ``send``, so the server's own cost per write decides throughput, and
uvicorn's httptools protocol is among the cheapest in Python; it also gives the graceful
shutdown the gateway needs (on SIGTERM it stops accepting, lets open answers finish for
``serve.drain_seconds``, then cuts them). ``docs/serve.md`` has the measurements.
"""

from __future__ import annotations

import math
import os
import socket
import sys
from pathlib import Path
from typing import Any

from providers.config.schema import OaicompatConfig

__all__ = ["CONFIG_ENV", "run", "uvicorn_config"]

CONFIG_ENV = "OAICOMPAT_CONFIG"
"""The configuration file the module-level app (``providers.gateway.asgi:app``) reads."""


def uvicorn_config(app: Any, config: OaicompatConfig, **overrides: Any) -> Any:
    """A ``uvicorn.Config`` with the gateway's settings: drain deadline, header bound, quiet
    logs (the gateway's access log is its own event), no ``Server`` header."""
    import uvicorn  # deferred: the serve extra

    settings = config.serve
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        lifespan="on",
        timeout_graceful_shutdown=math.ceil(settings.drain_seconds),
        h11_max_incomplete_event_size=settings.max_header_bytes,
        log_level="warning",
        access_log=False,
        server_header=False,
        **overrides,
    )


def run(
    config_path: Path,
    config: OaicompatConfig,
    *,
    host: str | None = None,
    port: int | None = None,
    workers: int = 1,
    access_log: bool = False,
) -> None:
    """Serves until SIGTERM or SIGINT. One worker runs the app in this process; several run
    ``providers.gateway.asgi:app``, each reading ``config_path`` from ``OAICOMPAT_CONFIG``."""
    import uvicorn  # deferred: the serve extra

    host = host or config.serve.host
    port = config.serve.port if port is None else port
    if workers > 1:
        os.environ[CONFIG_ENV] = str(config_path.resolve())
        if access_log:
            os.environ["OAICOMPAT_ACCESS_LOG"] = "1"
        target = "providers.gateway.asgi:app"
        settings = uvicorn_config(target, config, host=host, port=port, workers=workers)
        _announce(host, port, workers)
        uvicorn.Server(settings).run()
        return
    # deferred: a multi-worker start never builds the app in this process
    from providers.gateway.app import GatewayApp

    app = GatewayApp(config, access_log=access_log)
    listener = socket.create_server((host, port), family=_family(host), backlog=2048)
    _announce(host, listener.getsockname()[1], workers)
    uvicorn.Server(uvicorn_config(app, config)).run(sockets=[listener])


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _announce(host: str, port: int, workers: int) -> None:
    """The one line an operator needs: where to point clients (stderr: stdout is theirs)."""
    shown = f"[{host}]" if ":" in host else host
    plural = "s" if workers > 1 else ""
    print(
        f"oaicompat serve: http://{shown}:{port}/v1 ({workers} worker{plural}; Ctrl-C stops)",
        file=sys.stderr,
        flush=True,
    )

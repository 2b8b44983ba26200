"""What every adapter does the same way: a client from a configuration file, and the question
whether oaicompat's own telemetry should run under a framework that instruments the call itself.
"""

from __future__ import annotations

import os
from typing import Any

from providers.abstractions.chat_client import ChatClient
from providers.config import client_for, load_config

__all__ = ["client_from_config"]


def client_from_config(
    path: str | os.PathLike[str], role: str = "main", **client_kwargs: Any
) -> ChatClient:
    """The standard pipeline for ``role`` (or a backend name) of the YAML file at ``path``.

    oaicompat's telemetry layer is left out unless ``telemetry=True`` is passed: the frameworks
    time and trace the model call themselves (agent-framework's telemetry layer, pydantic-ai's
    instrumentation), and two spans or two log lines per request for one call is noise.
    """
    client_kwargs.setdefault("telemetry", False)
    return client_for(load_config(path), role, **client_kwargs)

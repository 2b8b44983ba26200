"""The flags whose value is JSON (``--extra-body``, ``--tools``), read into Python values.

A flag that is not the JSON it should be is a ``ConfigurationError`` naming the flag (exit 2),
not a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from providers.abstractions.errors import ConfigurationError

__all__ = ["extra_body_flag", "tools_flag"]


def extra_body_flag(text: str | None) -> dict[str, Any]:
    """``--extra-body``: a JSON object, or ``{}`` when the flag is absent."""
    if not text:
        return {}
    try:
        extra = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"--extra-body is not JSON: {exc.msg}") from None
    if not isinstance(extra, dict):
        raise ConfigurationError("--extra-body must be a JSON object")
    return extra


def tools_flag(spec: str | None) -> list[Any] | None:
    """``--tools``: an OpenAI-style tool list, inline or ``@FILE``."""
    if not spec:
        return None
    text = _read_flag_file("--tools", spec[1:]) if spec.startswith("@") else spec
    try:
        tools = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"--tools is not JSON: {exc.msg}") from None
    if not isinstance(tools, list):
        raise ConfigurationError("--tools must be a JSON list of tools")
    return tools


def _read_flag_file(flag: str, name: str) -> str:
    try:
        return Path(name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ConfigurationError(
            f"{flag} @{name}: cannot read the file ({reason}); name a readable JSON file"
        ) from None

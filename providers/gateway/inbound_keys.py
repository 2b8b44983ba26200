"""Inbound API keys: read once from the environment, compared in constant time.

The keys live in an environment variable the ``serve:`` block names, never in the file. A server
told to ask for keys that finds none refuses to start: an operator who set ``api_keys_env`` and
forgot to export it would otherwise serve the network without any.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Mapping

from providers.abstractions.errors import AuthenticationError, ConfigurationError

__all__ = ["InboundKeys"]


class InboundKeys:
    """The accepted keys (none: every request is let in)."""

    __slots__ = ("_keys",)

    def __init__(self, keys: Iterable[str] = ()) -> None:
        self._keys = tuple(key.encode() for key in keys)

    def __repr__(self) -> str:  # never the keys themselves
        return f"InboundKeys(<{len(self._keys)} keys>)"

    @classmethod
    def from_environment(cls, variable: str | None, env: Mapping[str, str]) -> InboundKeys:
        if variable is None:
            return cls()
        keys = [key.strip() for key in env.get(variable, "").split(",") if key.strip()]
        if not keys:
            raise ConfigurationError(
                f"serve.api_keys_env names {variable}, which is unset or empty in the"
                " environment: export the comma-separated keys, or remove api_keys_env"
            )
        return cls(keys)

    @property
    def required(self) -> bool:
        return bool(self._keys)

    def check(self, authorization: bytes | None) -> None:
        """Lets the request in, or raises ``AuthenticationError`` (a 401). Every key is
        compared, whatever matched, so the time taken says nothing about which key is close."""
        if not self._keys:
            return
        scheme, _, token = (authorization or b"").partition(b" ")
        offered = token.strip() if scheme.lower() == b"bearer" else b""
        matched = False
        for key in self._keys:
            matched |= hmac.compare_digest(offered, key)
        if not matched:
            raise AuthenticationError(
                "a valid API key is required: send it as `Authorization: Bearer <key>`",
                status=401,
                error_type="invalid_request_error",
                code="invalid_api_key",
            )

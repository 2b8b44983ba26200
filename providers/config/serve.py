"""The ``serve:`` block: how ``oaicompat serve`` listens and what it lets in.

Every default is the safe one: loopback only, no request bigger than a chat with a few images,
a concurrency limit, nothing of the inbound request's credentials forwarded. Inbound API keys
are never written in the file: ``api_keys_env`` names the environment variable that holds them,
so the file can be committed and the keys rotated without editing it.
"""

from __future__ import annotations

from pydantic import Field, NonNegativeFloat, PositiveFloat, PositiveInt, field_validator

from providers.config.strict import Strict

__all__ = ["ServeConfig"]

_NEVER_FORWARDED = ("authorization", "cookie", "proxy-authorization", "x-api-key", "api-key")


class ServeConfig(Strict):
    """``oaicompat serve``'s settings (every key optional)."""

    host: str = "127.0.0.1"
    """Address to bind; the default accepts connections from this machine only. Set
    ``0.0.0.0`` (with ``api_keys_env``) to serve a network."""
    port: int = Field(default=8000, ge=0, le=65535)
    """TCP port (0: any free port)."""
    api_keys_env: str | None = None
    """Name of the environment variable holding the accepted inbound API keys, comma-separated;
    requests must then send one as ``Authorization: Bearer <key>``. Unset: no key is asked for.
    Set but empty in the environment: the server refuses to start."""
    max_body_bytes: PositiveInt = 16 * 1024 * 1024
    """Largest request body accepted (413 above it)."""
    max_header_bytes: PositiveInt = 16 * 1024
    """Largest total size of a request's header names and values (431 above it)."""
    body_timeout_seconds: PositiveFloat = 30.0
    """Longest a client may take to send its request body (408 after it), so a slow sender
    cannot hold a request slot."""
    max_concurrent_requests: PositiveInt = 256
    """Requests answered at once; one more is answered 429 with ``Retry-After``."""
    retry_after_seconds: PositiveInt = 1
    """The ``Retry-After`` of a 429 for the concurrency limit."""
    drain_seconds: NonNegativeFloat = 30.0
    """On SIGTERM, how long open streams may finish before they are cut."""
    access_log: bool = False
    """One ``oaicompat.gateway.request`` event per request (``-v`` turns it on too)."""
    opentelemetry: bool = False
    """An OpenTelemetry span and GenAI metrics per request (needs the ``otel`` extra and an
    SDK the application configures)."""
    forward_headers: list[str] = Field(default_factory=list)
    """Inbound header names sent on to the backend (``traceparent``, a tenant header…). None
    by default; credentials (``Authorization``, ``Cookie``, ``X-Api-Key``…) never, even if
    listed: backends use their own ``api_key``."""

    @field_validator("forward_headers")
    @classmethod
    def _no_credentials(cls, names: list[str]) -> list[str]:
        lowered = [name.strip().lower() for name in names]
        refused = [name for name in lowered if name in _NEVER_FORWARDED]
        if refused:
            raise ValueError(f"credential headers are never forwarded: {', '.join(refused)}")
        return lowered

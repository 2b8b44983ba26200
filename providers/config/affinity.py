"""The ``session_affinity:`` entry of a backend (``providers.SessionAffinity``), validated."""

from __future__ import annotations

from typing import Literal

from pydantic import PositiveInt, model_validator

from providers.abstractions.errors import ConfigurationError
from providers.config.strict import Strict
from providers.layers.session_affinity import SessionAffinity

__all__ = ["SessionAffinityConfig"]


class SessionAffinityConfig(Strict):
    """How the backend's router learns which conversation a request continues, so a
    cache-aware router keeps it on one replica (``providers.SessionAffinity``):
    ``{mode: vllm-router}``, ``{mode: smg}``, ``{mode: header, header: x-user-id}`` or
    ``{mode: echo}``.

    The key is the caller's ``ChatOptions.conversation_id``, else a hash of the conversation's
    opening (its messages up to the first user message), which stays the same as it grows.
    """

    mode: Literal["vllm-router", "smg", "header", "echo"]
    """``vllm-router``: ``X-Session-ID`` (its ``consistent_hash`` policy); ``smg``: SGLang model
    gateway's ``X-SMG-Routing-Key`` (``consistent_hashing``); ``header``: the key in ``header``
    (vLLM production-stack's ``--session-key``); ``echo``: send back the token the router issued
    in ``header`` (llm-d's ``x-session-token``)."""
    header: str | None = None
    """The header name: required by ``header``, default ``x-session-token`` for ``echo``, not
    allowed for the other modes (their header is the router's)."""
    max_conversations: PositiveInt | None = None
    """``echo``: how many conversations' tokens are kept, least recently used out first
    (default 4096)."""

    @model_validator(mode="after")
    def _valid(self) -> SessionAffinityConfig:
        try:
            self.to_affinity()
        except ConfigurationError as exc:
            raise ValueError(str(exc)) from None
        return self

    def to_affinity(self) -> SessionAffinity:
        """The ``SessionAffinity`` the pipeline's layer is made with."""
        extra = (
            {} if self.max_conversations is None else {"max_conversations": self.max_conversations}
        )
        return SessionAffinity(self.mode, self.header, **extra)

"""The configuration file's schema: what each key means and which values it takes.

The file is outside input, so it is validated once, with these pydantic models:
unknown keys are errors (``extra="forbid"``: a typo like ``api_kye`` must not silently drop
the key), and ``api_key`` is a ``SecretStr``, so ``repr``, ``str`` and ``model_dump_json`` show
``**********``. Attribute docstrings become field descriptions, from which
``providers.config.reference`` renders the README's configuration reference.
"""

from __future__ import annotations

from typing import Any, Literal

import httpx
from pydantic import (
    Field,
    NonNegativeFloat,
    PositiveFloat,
    PositiveInt,
    SecretStr,
    field_validator,
    model_validator,
)

from capabilities.family_table import FAMILIES
from capabilities.models import CapabilityOverrides
from capabilities.reasoning_families import REASONING_FAMILIES
from providers.abstractions.errors import ConfigurationError
from providers.abstractions.limits import Limits
from providers.config.affinity import SessionAffinityConfig
from providers.config.embeddings import EmbeddingsConfig
from providers.config.key_paths import did_you_mean, printable
from providers.config.overlay import overlay
from providers.config.serve import ServeConfig
from providers.config.strict import Strict
from providers.layers.retry import RetryPolicy
from providers.reasoning import FORMATS as REASONING_FORMATS
from providers.text_tool_calls import FORMAT_NAMES as TOOL_CALL_FORMATS
from providers.transport.credentials import sensitive_header_names
from providers.transport.endpoint import Endpoint
from providers.transport.proxies import check_proxy_url
from providers.transport.timeouts import Timeouts

__all__ = [
    "BackendConfig",
    "DefaultsConfig",
    "LimitsConfig",
    "OaicompatConfig",
    "RetryConfig",
    "RoleConfig",
    "SessionAffinityConfig",
    "TimeoutsConfig",
]


class TimeoutsConfig(Strict):
    """Per-request budgets in seconds (``providers.Timeouts``); an unset field keeps the
    library default, so a backend may override just ``first_token``."""

    connect: PositiveFloat | None = None
    """TCP/TLS set-up (library default 10). The only phase a retry is always safe after."""
    first_token: PositiveFloat | None = None
    """Request sent → first text, reasoning or tool call (default 600): queueing and prefill
    count, keepalives do not."""
    idle: PositiveFloat | None = None
    """Longest silence between two reads once output started (default 120)."""
    total: PositiveFloat | None = None
    """The whole request, retries excluded (default 3600)."""


class RetryConfig(Strict):
    """``providers.RetryPolicy`` fields; an unset field keeps the policy default."""

    max_attempts: PositiveInt | None = None
    """Attempts including the first (default 3); 1 disables retry."""
    base_delay: NonNegativeFloat | None = None
    """Seconds; the backoff window doubles from here, with full jitter (default 0.5)."""
    max_delay: NonNegativeFloat | None = None
    """Cap of the backoff window in seconds (default 8)."""
    max_retry_after: NonNegativeFloat | None = None
    """Longest ``Retry-After`` waited; longer fails at once (default 120)."""
    max_total_delay: NonNegativeFloat | None = None
    """Cap of all waiting for one call, in seconds (default 300)."""


class LimitsConfig(Strict):
    """``providers.Limits`` fields: how much one request may make the client hold before it
    fails with ``ResponseTooLargeError``; an unset (or null) field keeps the library default."""

    max_event_bytes: PositiveInt | None = None
    """One SSE line or event, before it is parsed (default 16 MiB)."""
    max_body_bytes: PositiveInt | None = None
    """A whole non-streamed body after decompression (default 64 MiB)."""
    max_stream_bytes: PositiveInt | None = None
    """A whole streamed body after decompression (default 1024 MiB)."""
    max_error_body_bytes: PositiveInt | None = None
    """How much of an error body the exception keeps (default 64 KiB)."""
    max_output_bytes: PositiveInt | None = None
    """A response's text, reasoning and tool-call arguments in UTF-8 bytes (default 64 MiB)."""
    max_tool_argument_bytes: PositiveInt | None = None
    """The argument text of one tool call, assembled from its deltas (default 8 MiB)."""
    max_tool_calls: PositiveInt | None = None
    """Tool calls in one response (default 1024)."""
    max_held_text_bytes: PositiveInt | None = None
    """Text the recovery layer holds back while a block is unclosed (default 8 MiB)."""
    max_held_updates: PositiveInt | None = None
    """Updates retry and fallback hold before the first substantive one (default 100000)."""
    max_json_depth: PositiveInt | None = None
    """Nesting depth of any JSON the server sends (default 200)."""
    max_connections: PositiveInt | None = None
    """Connections the client's pool opens to the server at once (default 1000)."""
    max_keepalive_connections: PositiveInt | None = None
    """Idle connections kept open for reuse (default 100)."""

    @field_validator("*", mode="before")
    @classmethod
    def _not_a_boolean(cls, value: Any) -> Any:
        # pydantic reads ``true`` as 1 for an integer: a limit of one byte is never meant.
        if isinstance(value, bool):
            raise ValueError("must be an integer > 0, not a boolean")
        return value


class DefaultsConfig(Strict):
    """Settings every backend inherits field by field unless it sets its own."""

    timeouts: TimeoutsConfig | None = None
    """Default time budgets (see ``timeouts``)."""
    retry: RetryConfig | None = None
    """Default retry policy (see ``retry``)."""
    limits: LimitsConfig | None = None
    """Default bounds on what a server may make the client hold (see ``limits``)."""
    trust_env: bool | None = None
    """Default of every backend's ``trust_env`` (library default ``true``)."""
    sensitive_headers: list[str] | None = None
    """Header names every backend treats as credentials; a backend's own list adds to it."""

    @field_validator("sensitive_headers")
    @classmethod
    def _header_names(cls, value: list[str] | None) -> list[str] | None:
        return _header_names(value)


class BackendConfig(Strict):
    """One server and model.

    ``backend`` is ``auto`` (the generic, tolerant profile; ``oaicompat probe`` detects the real
    one) or a profile name (``llamacpp``, ``vllm``, ``sglang``…). ``capabilities`` are overrides
    that win over every probe. ``reasoning_tags`` / ``text_tool_calls`` configure text recovery:
    ``auto``, ``off`` or a format name. ``extra_body`` keys go into every request body unless the
    caller sets the same key. ``api`` picks chat completions or the Responses API.
    """

    base_url: str
    """Server root or API base (``http://host:8080``, ``https://host/prefix/v1``); ``/v1`` is
    added only when missing."""
    model_id: str | None = None
    """The ``model`` sent in requests; checked against ``/v1/models`` by ``oaicompat probe``."""
    api_key: SecretStr | None = None
    """Bearer token, normally ``${ENV_VAR}``; never printed or logged."""
    backend: str = "auto"
    """``auto``, ``llamacpp``, ``vllm``, ``sglang``, ``openai``…: request-side quirks only;
    responses from any server are parsed whatever this says."""
    capabilities: CapabilityOverrides | None = None
    """Values that win over every probe (see ``capabilities``)."""
    reasoning_tags: str = "auto"
    """``<think>``-style reasoning left in text: ``auto``, ``off`` or a format (``think``,
    ``deepseek_r1``, ``qwen3``, ``kimi``, ``kimi_k2``, ``gpt_oss``)."""
    text_tool_calls: str = "auto"
    """Tool calls left in text: ``auto``, ``off`` or a format (``hermes``, ``qwen3_coder``,
    ``mistral``, ``llama3_json``, ``pythonic``, ``kimi_k2``, ``deepseek_v3``, ``deepseek_v31``,
    ``gpt_oss``, ``nemotron``)."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Top-level request-body keys added to every request unless the caller sets them
    (merged recursively, the caller wins)."""
    timeouts: TimeoutsConfig | None = None
    """Overrides ``defaults.timeouts`` field by field."""
    retry: RetryConfig | None = None
    """Overrides ``defaults.retry`` field by field."""
    limits: LimitsConfig | None = None
    """Overrides ``defaults.limits`` field by field."""
    api: Literal["chat", "responses"] = "chat"
    """The endpoint family: ``chat`` (``/v1/chat/completions``) or ``responses``
    (``/v1/responses``); callers see the same updates either way."""
    session_affinity: SessionAffinityConfig | None = None
    """Send each conversation's routing key to the router in front of the backend's replicas
    (see ``session_affinity``); unset: none."""
    conversation_mode: Literal["stateless", "previous_response_id"] = "stateless"
    """With ``api: responses``: send the whole history each turn (works on every server), or
    chain turns by ``previous_response_id`` (needs the server's response store; falls back to
    stateless with one warning when the store is off)."""
    proxy: SecretStr | None = None
    """Proxy for every request to this backend (``http://user:pass@proxy:3128``, ``https://…``,
    ``socks5://…``); the environment's proxies are then not read. Never printed or logged with
    its password."""
    trust_env: bool | None = None
    """Read ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY``/``NO_PROXY`` (and ``SSL_CERT_FILE``)
    as httpx does when ``proxy`` is unset (default ``true``, or ``defaults.trust_env``)."""
    sensitive_headers: list[str] | None = None
    """Header names (besides `Authorization`, `Cookie` and any holding key, token, secret,
    password, auth or cookie) that carry credentials: masked in errors, never sent to a
    fallback at another origin."""
    model_family: str | None = None
    """The model's family (`qwen3`, `gpt-oss`, `deepseek-v3.1`, `glm`, `granite`…), which
    decides how reasoning is switched; unset: read from `model_id` (set it when the id does
    not name the family, e.g. a served alias)."""
    unsupported_options: Literal["raise", "warn", "ignore"] = "raise"
    """An option this backend or model cannot honour (thinking off on a model that always
    thinks): `raise` an error before sending, `warn` (an event) and send without it, or
    `ignore` it and send without it."""
    embeddings: EmbeddingsConfig | None = None
    """This backend embeds (`embeddings: {}` says so): `create_embedding_generator` settings."""

    @field_validator("sensitive_headers")
    @classmethod
    def _header_names(cls, value: list[str] | None) -> list[str] | None:
        return _header_names(value)

    @field_validator("model_family")
    @classmethod
    def _known_family(cls, value: str | None) -> str | None:
        return None if value is None else _known(value.strip().lower(), _FAMILIES, "family")

    @field_validator("proxy")
    @classmethod
    def _proxy_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            try:
                check_proxy_url(value.get_secret_value())
            except ConfigurationError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        # Checked here, not at the first request: a bad URL is the file's mistake (exit 2),
        # and the message quotes nothing, since the URL may come from the environment or
        # carry a password.
        try:
            Endpoint.from_base_url(value)
            port = httpx.URL(value.strip()).port
        except (ValueError, httpx.InvalidURL):
            port = -1
        if port is not None and not 0 < port < 65536:
            raise ValueError("not an http(s) URL with a host (http://host:port/…)")
        return value

    @field_validator("reasoning_tags")
    @classmethod
    def _known_reasoning_format(cls, value: str) -> str:
        return _known(value, ("off", *REASONING_FORMATS))

    @field_validator("text_tool_calls")
    @classmethod
    def _known_tool_call_format(cls, value: str) -> str:
        return _known(value, ("off", *TOOL_CALL_FORMATS))

    @model_validator(mode="after")
    def _conversation_mode_needs_responses(self) -> BackendConfig:
        if self.conversation_mode != "stateless" and self.api != "responses":
            raise ValueError("conversation_mode applies only with api: responses")
        return self


class RoleConfig(Strict):
    """A role with its own fallback: ``summarise: {backend: small-llama, fallback: gpu-vllm}``."""

    backend: str
    """The backend that serves the role."""
    fallback: str | None = None
    """The backend used when ``backend`` fails before answering (``FallbackChatClient``)."""


class OaicompatConfig(Strict):
    """The whole file: ``defaults``, named ``backends``, and ``roles`` mapping a role name
    (``main``, ``fallback``…) to a backend name, so code asks for a role and the file decides.

    A role's fallback is its ``fallback`` key when it is written as a mapping; the role named
    ``fallback`` is the fallback of ``main``, as in ``roles: {main: gpu-vllm, fallback: local}``.
    """

    defaults: DefaultsConfig = Field(default_factory=DefaultsConfig)
    """Settings every backend inherits unless it sets its own."""
    backends: dict[str, BackendConfig] = Field(default_factory=dict)
    """Named backends; the name is what roles and ``--use`` refer to."""
    roles: dict[str, str | RoleConfig] = Field(default_factory=dict)
    """Role name → backend name (or ``{backend, fallback}``)."""
    serve: ServeConfig = Field(default_factory=ServeConfig)
    """``oaicompat serve``: where it listens, inbound keys and limits."""

    def backend_name(self, role_or_backend: str) -> str:
        """The backend a role names, or the name itself when it is a backend."""
        if role_or_backend in self.roles:
            role = self.roles[role_or_backend]
            return role if isinstance(role, str) else role.backend
        if role_or_backend in self.backends:
            return role_or_backend
        known = sorted({*self.roles, *self.backends})
        raise ConfigurationError(
            f"no role or backend named {role_or_backend!r}{did_you_mean(role_or_backend, known)}"
            f" (known: {printable(', '.join(known)) or 'none'})"
        )

    def backend(self, role_or_backend: str) -> BackendConfig:
        return self.backends[self.backend_name(role_or_backend)]

    def fallback_name(self, role_or_backend: str) -> str | None:
        """The backend a role falls back to, if any (never the role's own backend)."""
        role = self.roles.get(role_or_backend)
        fallback: str | None = None
        if isinstance(role, RoleConfig):
            fallback = role.fallback
        elif role_or_backend == "main" and "fallback" in self.roles:
            fallback = self.backend_name("fallback")
        if fallback == self.backend_name(role_or_backend):
            return None
        return fallback

    def timeouts_for(self, backend: BackendConfig) -> Timeouts | None:
        """Defaults overlaid field by field with the backend's own; ``None`` if neither is set."""
        merged = overlay(self.defaults.timeouts, backend.timeouts)
        return None if merged is None else Timeouts(**merged)

    def pipeline_settings(self, backend: BackendConfig) -> dict[str, Any]:
        """``create_chat_client`` keywords for ``backend`` (all but the URL, model and key), so
        the library and the CLI build the same pipeline from the same entry."""
        return {
            "backend": backend.backend,
            "reasoning_tags": backend.reasoning_tags,
            "text_tool_calls": backend.text_tool_calls,
            "retry": self.retry_for(backend),
            "timeouts": self.timeouts_for(backend),
            "limits": self.limits_for(backend),
            "extra_body": backend.extra_body or None,
            "api": backend.api,
            "session_affinity": (
                backend.session_affinity.to_affinity() if backend.session_affinity else None
            ),
            **self.network_for(backend),
            **({"model_family": backend.model_family} if backend.model_family else {}),
            "unsupported_options": backend.unsupported_options,
            **(
                {"conversation_mode": backend.conversation_mode}
                if backend.api == "responses"
                else {}
            ),
        }

    def network_for(self, backend: BackendConfig) -> dict[str, Any]:
        """The wire client's ``proxy``, ``trust_env`` and ``sensitive_headers`` keywords, each
        only when the file sets it (the backend's over ``defaults``; the header lists added)."""
        settings: dict[str, Any] = {}
        if backend.proxy is not None:
            settings["proxy"] = backend.proxy.get_secret_value()
        trust_env = backend.trust_env if backend.trust_env is not None else self.defaults.trust_env
        if trust_env is not None:
            settings["trust_env"] = trust_env
        names = [*(self.defaults.sensitive_headers or ()), *(backend.sensitive_headers or ())]
        if names:
            settings["sensitive_headers"] = names
        return settings

    def retry_for(self, backend: BackendConfig) -> RetryPolicy:
        return RetryPolicy(**(overlay(self.defaults.retry, backend.retry) or {}))

    def limits_for(self, backend: BackendConfig) -> Limits | None:
        """Defaults overlaid field by field with the backend's own; ``None`` (the library's
        ``DEFAULT_LIMITS``) if neither is set. A null field keeps the library default."""
        merged = overlay(self.defaults.limits, backend.limits)
        if merged is None:
            return None
        return Limits(**{name: value for name, value in merged.items() if value is not None})


def _header_names(value: list[str] | None) -> list[str] | None:
    try:
        sensitive_header_names(value)
    except ConfigurationError as exc:
        raise ValueError(str(exc)) from None
    return value


_FAMILIES = tuple(sorted({r.family for r in REASONING_FAMILIES} | {r.family for r in FAMILIES}))


def _known(value: str, names: tuple[str, ...], what: str = "format") -> str:
    """``value`` if it is one of ``names``; the error quotes only the names, never the value."""
    if value not in names:
        raise ValueError(
            f"unknown {what}{did_you_mean(value, list(names))}; known: {', '.join(names)}"
        )
    return value

"""YAML configuration: many backends in one file, and which role uses which.

This module owns reading and validating the file and turning one entry into a client; what the
client does is ``create_chat_client``'s business (``providers.factory``), so configuration and
code can never assemble different pipelines. The file is outside input, so it is validated once,
here, with pydantic, and every mistake is a ``ConfigurationError`` that names
the file, the line and the key path, because "field required" without a location is useless in a
file with ten backends.

Rules: ``yaml.safe_load`` semantics only (no Python tags); ``${VAR}`` and ``${VAR:-default}`` are
expanded inside string values only (never in keys, so a key path is always what is written);
unknown keys are errors with a did-you-mean (a typo like ``api_kye`` must not silently drop the
key); ``api_key`` is a ``SecretStr``, so ``repr``, ``str`` and ``model_dump_json`` show
``**********``, and no error message ever quotes a value.
"""

from __future__ import annotations

import difflib
import os
import re
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml  # type: ignore[import-untyped, unused-ignore]  # stubs: types-PyYAML
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeFloat,
    PositiveFloat,
    PositiveInt,
    SecretStr,
    ValidationError,
    model_validator,
)

from capabilities.models import CapabilityOverrides
from providers.abstractions.errors import ConfigurationError

if TYPE_CHECKING:
    from providers.abstractions.chat_client import ChatClient
    from providers.chat_completions.client import Timeouts
    from providers.layers.retry import RetryPolicy

__all__ = [
    "BackendConfig",
    "DefaultsConfig",
    "OaicompatConfig",
    "RetryConfig",
    "RoleConfig",
    "TimeoutsConfig",
    "client_for",
    "default_config_paths",
    "find_config",
    "load_config",
]

KeyPath = tuple[str | int, ...]


class _Strict(BaseModel):
    # Attribute docstrings become field descriptions: the README's configuration reference is
    # generated from them (``providers.config.reference``), so code and docs cannot drift.
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class TimeoutsConfig(_Strict):
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


class RetryConfig(_Strict):
    """``providers.RetryPolicy`` fields; an unset field keeps the policy default."""

    max_attempts: PositiveInt | None = None
    """Attempts including the first (default 3); 1 disables retry."""
    base_delay: NonNegativeFloat | None = None
    """Seconds; the backoff window doubles from here, with full jitter (default 0.5)."""
    max_delay: NonNegativeFloat | None = None
    """Cap of the backoff window in seconds (default 8)."""
    max_retry_after: NonNegativeFloat | None = None
    """Longest server-requested ``Retry-After`` that is waited; longer fails at once (default
    120)."""
    max_total_delay: NonNegativeFloat | None = None
    """Cap of all waiting for one call, in seconds (default 300)."""


class DefaultsConfig(_Strict):
    """Settings every backend inherits field by field unless it sets its own."""

    timeouts: TimeoutsConfig | None = None
    """Default time budgets (see ``timeouts``)."""
    retry: RetryConfig | None = None
    """Default retry policy (see ``retry``)."""


class BackendConfig(_Strict):
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
    ``gpt_oss``)."""
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Top-level request-body keys added to every request unless the caller sets them
    (merged recursively, the caller wins)."""
    timeouts: TimeoutsConfig | None = None
    """Overrides ``defaults.timeouts`` field by field."""
    retry: RetryConfig | None = None
    """Overrides ``defaults.retry`` field by field."""
    api: Literal["chat", "responses"] = "chat"
    """The endpoint family: ``chat`` (``/v1/chat/completions``) or ``responses``
    (``/v1/responses``); callers see the same updates either way."""
    conversation_mode: Literal["stateless", "previous_response_id"] = "stateless"
    """With ``api: responses``: send the whole history each turn (works on every server), or
    chain turns by ``previous_response_id`` (needs the server's response store; falls back to
    stateless with one warning when the store is off)."""

    @model_validator(mode="after")
    def _conversation_mode_needs_responses(self) -> BackendConfig:
        if self.conversation_mode != "stateless" and self.api != "responses":
            raise ValueError("conversation_mode applies only with api: responses")
        return self


class RoleConfig(_Strict):
    """A role with its own fallback: ``summarise: {backend: small-llama, fallback: gpu-vllm}``."""

    backend: str
    """The backend that serves the role."""
    fallback: str | None = None
    """The backend used when ``backend`` fails before answering (``FallbackChatClient``)."""


class OaicompatConfig(_Strict):
    """The whole file: ``defaults``, named ``backends``, and ``roles`` mapping a role name
    (``main``, ``fallback``…) to a backend name, so code asks for a role and the file decides.

    A role's fallback is its ``fallback`` key when it is written as a mapping; the role named
    ``fallback`` is the fallback of ``main``, as in ``roles: {main: gpu-vllm, fallback: local}``.
    """

    defaults: DefaultsConfig = Field(default_factory=DefaultsConfig)
    """Settings every backend inherits unless it sets its own."""
    backends: dict[str, BackendConfig] = Field(default_factory=dict)
    """Named backends; the name is what roles and ``--backend`` refer to."""
    roles: dict[str, str | RoleConfig] = Field(default_factory=dict)
    """Role name → backend name (or ``{backend, fallback}``)."""

    def backend_name(self, role_or_backend: str) -> str:
        """The backend a role names, or the name itself when it is a backend."""
        if role_or_backend in self.roles:
            role = self.roles[role_or_backend]
            return role if isinstance(role, str) else role.backend
        if role_or_backend in self.backends:
            return role_or_backend
        known = sorted({*self.roles, *self.backends})
        raise ConfigurationError(
            f"no role or backend named {role_or_backend!r}{_did_you_mean(role_or_backend, known)}"
            f" (known: {', '.join(known) or 'none'})"
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
        merged = _overlay(self.defaults.timeouts, backend.timeouts)
        if merged is None:
            return None
        from providers.chat_completions.client import Timeouts

        return Timeouts(**merged)

    def pipeline_settings(self, backend: BackendConfig) -> dict[str, Any]:
        """``create_chat_client`` keywords for ``backend`` (all but the URL, model and key), so
        the library and the CLI build the same pipeline from the same entry."""
        return {
            "backend": backend.backend,
            "reasoning_tags": backend.reasoning_tags,
            "text_tool_calls": backend.text_tool_calls,
            "retry": self.retry_for(backend),
            "timeouts": self.timeouts_for(backend),
            "extra_body": backend.extra_body or None,
            "api": backend.api,
            **(
                {"conversation_mode": backend.conversation_mode}
                if backend.api == "responses"
                else {}
            ),
        }

    def retry_for(self, backend: BackendConfig) -> RetryPolicy:
        from providers.layers.retry import RetryPolicy

        return RetryPolicy(**(_overlay(self.defaults.retry, backend.retry) or {}))


def _overlay(base: BaseModel | None, top: BaseModel | None) -> dict[str, Any] | None:
    if base is None and top is None:
        return None
    merged: dict[str, Any] = {}
    for part in (base, top):
        if part is not None:
            merged.update(part.model_dump(exclude_unset=True))
    return merged


# -- loading ---------------------------------------------------------------------------------


def default_config_paths() -> list[Path]:
    """Where the CLI looks when no ``--config`` is given, in order."""
    return [Path("oaicompat.yaml"), Path.home() / ".config" / "oaicompat" / "config.yaml"]


def find_config(explicit: str | os.PathLike[str] | None = None) -> Path | None:
    """``explicit`` if given (it must exist), else the first default path that exists."""
    if explicit is not None:
        path = Path(explicit)
        if not path.is_file():
            raise ConfigurationError(f"{path}: configuration file not found")
        return path
    return next((p for p in default_config_paths() if p.is_file()), None)


def load_config(
    path: str | os.PathLike[str], env: Mapping[str, str] | None = None
) -> OaicompatConfig:
    """Read, interpolate and validate ``path``; ``env`` defaults to ``os.environ``.

    Every failure is a ``ConfigurationError`` whose message starts ``file:line:`` and names the
    key path; none quotes a value, since values may be secrets.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"{path}: cannot read configuration: {exc.strerror}") from exc
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigurationError(f"{where}: {problem}") from None
    lines = _line_map(root)
    locate = _Locator(path, lines)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigurationError(f"{locate(())}: the top level must be a mapping")
    data = _interpolate(data, (), env if env is not None else os.environ, locate)
    try:
        config = OaicompatConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigurationError(_describe(exc, locate)) from None
    for role, entry in config.roles.items():
        targets: dict[KeyPath, str] = (
            {(): entry} if isinstance(entry, str) else {("backend",): entry.backend}
        )
        if isinstance(entry, RoleConfig) and entry.fallback is not None:
            targets[("fallback",)] = entry.fallback
        for suffix, target in targets.items():
            if target not in config.backends:
                hint = _did_you_mean(target, list(config.backends))
                key_path: KeyPath = ("roles", role, *suffix)
                raise ConfigurationError(
                    f"{locate(key_path)}: {_dotted(key_path)}: no backend named {target!r}{hint}"
                )
    return config


class _Locator:
    """``file:line`` for a key path: the line of the deepest key that exists in the file."""

    def __init__(self, path: Path, lines: dict[KeyPath, int]) -> None:
        self.path = path
        self.lines = lines

    def __call__(self, key_path: KeyPath) -> str:
        for depth in range(len(key_path), -1, -1):
            line = self.lines.get(key_path[:depth])
            if line is not None:
                return f"{self.path}:{line}"
        return str(self.path)


def _line_map(node: yaml.Node | None) -> dict[KeyPath, int]:
    """Key path → 1-based line, from the composed node tree (the same parse as ``safe_load``)."""
    lines: dict[KeyPath, int] = {}
    if node is None:
        return lines
    lines[()] = node.start_mark.line + 1

    def walk(current: yaml.Node, prefix: KeyPath) -> None:
        if isinstance(current, yaml.MappingNode):
            for key, value in current.value:
                if isinstance(key, yaml.ScalarNode):
                    child = (*prefix, str(key.value))
                    lines.setdefault(child, key.start_mark.line + 1)
                    walk(value, child)
        elif isinstance(current, yaml.SequenceNode):
            for index, item in enumerate(current.value):
                child = (*prefix, index)
                lines.setdefault(child, item.start_mark.line + 1)
                walk(item, child)

    walk(node, ())
    return lines


_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}")


def _interpolate(value: Any, key_path: KeyPath, env: Mapping[str, str], locate: _Locator) -> Any:
    """Expand ``${VAR}`` / ``${VAR:-default}`` in string values; keys and non-strings untouched.

    ``:-`` follows the shell: the default also applies when the variable is set but empty.
    """
    if isinstance(value, str):

        def substitute(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            found = env.get(name)
            if found:
                return found
            if default is not None:
                return default
            raise ConfigurationError(
                f"{locate(key_path)}: {_dotted(key_path)}: environment variable {name} is not "
                f"set (write ${{{name}:-default}} to give a default)"
            )

        return _VARIABLE.sub(substitute, value)
    if isinstance(value, dict):
        return {k: _interpolate(v, (*key_path, str(k)), env, locate) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, (*key_path, i), env, locate) for i, v in enumerate(value)]
    return value


def _describe(exc: ValidationError, locate: _Locator) -> str:
    """One line per problem, ``file:line: key.path: what``; never the offending value."""
    messages = []
    for error in exc.errors(include_input=False, include_url=False):
        loc: KeyPath = tuple(error["loc"])
        if error["type"] == "extra_forbidden":
            known = _field_names(loc[:-1])
            what = f"unknown key {loc[-1]!r}{_did_you_mean(str(loc[-1]), known)}"
        else:
            what = error["msg"]
        messages.append(f"{locate(loc)}: {_dotted(loc) or '(top level)'}: {what}")
    return "\n".join(messages)


def _field_names(loc: KeyPath) -> list[str]:
    """The keys the model at ``loc`` accepts, found by walking the annotations."""
    current: Any = OaicompatConfig
    for part in loc:
        current = _unwrap(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            if field is None:
                return []
            current = field.annotation
        elif typing.get_origin(current) is dict:
            current = typing.get_args(current)[1]
        else:
            return []
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return list(current.model_fields)
    return []


def _unwrap(annotation: Any) -> Any:
    """``X | None`` → ``X``."""
    if typing.get_origin(annotation) in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _did_you_mean(word: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(word, candidates, n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _dotted(key_path: KeyPath) -> str:
    return ".".join(f"[{p}]" if isinstance(p, int) else p for p in key_path).replace(".[", "[")


# -- building --------------------------------------------------------------------------------


def client_for(
    config: OaicompatConfig,
    role_or_backend: str,
    *,
    fallback: bool = True,
    **client_kwargs: Any,
) -> ChatClient:
    """The standard pipeline (``create_chat_client``) for a role or backend name.

    When the role has a fallback (``OaicompatConfig.fallback_name``) and ``fallback`` is true,
    the result is a ``FallbackChatClient`` over two standard pipelines, each with its own retry
    and telemetry, so the main backend's transient errors are retried before failing over.
    ``client_kwargs`` reach ``create_chat_client`` (``http_client``, ``telemetry``…) and win
    over the file, so a test or the CLI can swap the transport without editing configuration.
    """
    main = _pipeline_for(config, config.backend_name(role_or_backend), client_kwargs)
    fallback_name = config.fallback_name(role_or_backend) if fallback else None
    if fallback_name is None:
        return main
    from providers.layers.fallback import FallbackChatClient

    return FallbackChatClient(
        main,
        _pipeline_for(config, fallback_name, client_kwargs),
        main_name=config.backend_name(role_or_backend),
        fallback_name=fallback_name,
    )


def _pipeline_for(
    config: OaicompatConfig, backend_name: str, client_kwargs: dict[str, Any]
) -> ChatClient:
    from providers.factory import create_chat_client

    backend = config.backends[backend_name]
    settings = {**config.pipeline_settings(backend), **client_kwargs}
    api_key = backend.api_key.get_secret_value() if backend.api_key is not None else None
    return create_chat_client(backend.base_url, backend.model_id, api_key, **settings)

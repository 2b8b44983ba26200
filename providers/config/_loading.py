"""Finding the configuration file and reading it into a validated ``OaicompatConfig``.

YAML is read with ``safe_load`` semantics only (no Python tags); ``${VAR}`` is expanded
(``providers.config._interpolation``) before validation; and every failure, from unreadable
YAML to a role naming a backend that does not exist, is a ``ConfigurationError`` whose message
starts ``file:line:`` and names the key path (``providers.config._key_paths``).
"""

from __future__ import annotations

import os
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped, unused-ignore]  # stubs: types-PyYAML
from pydantic import BaseModel, ValidationError

from providers.abstractions.errors import ConfigurationError
from providers.config._interpolation import interpolate
from providers.config._key_paths import KeyPath, Locator, did_you_mean, dotted, line_map
from providers.config._schema import OaicompatConfig, RoleConfig

__all__ = ["default_config_paths", "find_config", "load_config"]


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
    data, locate = _read_yaml(path)
    data = interpolate(data, (), env if env is not None else os.environ, locate)
    try:
        config = OaicompatConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigurationError(_describe(exc, locate)) from None
    _check_role_targets(config, locate)
    return config


def _read_yaml(path: Path) -> tuple[dict[str, Any], Locator]:
    """The file's top-level mapping, and where each of its keys is written."""
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
    locate = Locator(path, line_map(root))
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigurationError(f"{locate(())}: the top level must be a mapping")
    return data, locate


def _check_role_targets(config: OaicompatConfig, locate: Locator) -> None:
    """Every backend a role names (and its fallback) exists: pydantic cannot see across keys."""
    for role, entry in config.roles.items():
        targets: dict[KeyPath, str] = (
            {(): entry} if isinstance(entry, str) else {("backend",): entry.backend}
        )
        if isinstance(entry, RoleConfig) and entry.fallback is not None:
            targets[("fallback",)] = entry.fallback
        for suffix, target in targets.items():
            if target not in config.backends:
                hint = did_you_mean(target, list(config.backends))
                key_path: KeyPath = ("roles", role, *suffix)
                raise ConfigurationError(
                    f"{locate(key_path)}: {dotted(key_path)}: no backend named {target!r}{hint}"
                )


def _describe(exc: ValidationError, locate: Locator) -> str:
    """One line per problem, ``file:line: key.path: what``; never the offending value."""
    messages = []
    for error in exc.errors(include_input=False, include_url=False):
        loc: KeyPath = tuple(error["loc"])
        if error["type"] == "extra_forbidden":
            known = _field_names(loc[:-1])
            what = f"unknown key {loc[-1]!r}{did_you_mean(str(loc[-1]), known)}"
        else:
            what = error["msg"]
        messages.append(f"{locate(loc)}: {dotted(loc) or '(top level)'}: {what}")
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

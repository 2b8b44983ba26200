"""Finding the configuration file and reading it into a validated ``OaicompatConfig``.

The document is read once and within bounds (``providers.config.document``: no Python tags,
no alias bombs); ``${VAR}`` is expanded (``providers.config.interpolation``) before validation;
and every failure, from unreadable YAML to a role naming a backend that does not exist, is a
``ConfigurationError`` whose message starts ``file:line:`` and names the key path
(``providers.config.key_paths``), without quoting a value that came from the environment.
"""

from __future__ import annotations

import os
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from providers.abstractions.errors import ConfigurationError
from providers.config.document import read_document
from providers.config.interpolation import FromEnvironment, interpolate
from providers.config.key_paths import KeyPath, Locator, did_you_mean, dotted, printable
from providers.config.schema import OaicompatConfig, RoleConfig

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
    key path; none quotes a value from the environment, since values there may be secrets.
    """
    path = Path(path)
    data, locate = read_document(path)
    data, from_env = interpolate(data, env if env is not None else os.environ, locate)
    try:
        config = OaicompatConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigurationError(_describe(exc, locate, from_env)) from None
    _check_role_targets(config, locate, from_env)
    return config


def _check_role_targets(
    config: OaicompatConfig, locate: Locator, from_env: FromEnvironment
) -> None:
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
                named = from_env.quote(key_path, target)
                raise ConfigurationError(
                    f"{locate(key_path)}: {dotted(key_path)}: no backend named {named}{hint}"
                )


def _describe(exc: ValidationError, locate: Locator, from_env: FromEnvironment) -> str:
    """One line per problem, ``file:line: key.path: what``; never the offending value, and the
    variable's name when the value came from the environment."""
    messages = []
    for error in exc.errors(include_input=False, include_url=False):
        loc: KeyPath = tuple(error["loc"])
        if error["type"] == "extra_forbidden":
            known = _field_names(loc[:-1])
            what = f"unknown key {loc[-1]!r}{did_you_mean(str(loc[-1]), known)}"
        else:
            # "Value error, " is pydantic's prefix for a validator's own message: noise here.
            what = printable(error["msg"].removeprefix("Value error, ")) + from_env.note(loc)
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

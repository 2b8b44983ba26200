"""``${VAR}`` and ``${VAR:-default}`` in the configuration file, expanded from the environment.

Only string values are expanded, never keys, so a key path in an error message is always what
is written in the file. A missing variable without a default is an error that names the
variable and the key, not the value it would have had.

The environment is where secrets live (``api_key: ${VLLM_API_KEY}``), and a secret put in the
wrong variable or under the wrong key still fails validation; so the expansion remembers which
key paths took text from the environment (``FromEnvironment``), and an error about one of
them names the variable instead of quoting the value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from providers.abstractions.errors import ConfigurationError
from providers.config.key_paths import KeyPath, Locator, dotted

__all__ = ["FromEnvironment", "interpolate"]

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}")


class FromEnvironment:
    """The key paths whose value took text from an environment variable, and which ones."""

    def __init__(self) -> None:
        self.variables: dict[KeyPath, list[str]] = {}

    def names(self, key_path: KeyPath) -> list[str]:
        """The variables whose text is in the value at ``key_path`` (empty: all written)."""
        return self.variables.get(key_path, [])

    def quote(self, key_path: KeyPath, value: str) -> str:
        """``value`` quoted when it is written in the file; the variables' names when not."""
        names = self.names(key_path)
        if not names:
            return repr(value)
        return "(the value of " + ", ".join(f"${{{name}}}" for name in names) + ")"

    def note(self, key_path: KeyPath) -> str:
        """`` (the value comes from ${VAR})`` for a value from the environment, else ``""``."""
        names = self.names(key_path)
        if not names:
            return ""
        return " (the value comes from " + ", ".join(f"${{{name}}}" for name in names) + ")"


def interpolate(value: Any, env: Mapping[str, str], locate: Locator) -> tuple[Any, FromEnvironment]:
    """Expand ``${VAR}`` / ``${VAR:-default}`` in string values; keys and non-strings untouched.

    ``:-`` follows the shell: the default also applies when the variable is set but empty.
    """
    sources = FromEnvironment()
    return _expand(value, (), env, locate, sources), sources


def _expand(
    value: Any, key_path: KeyPath, env: Mapping[str, str], locate: Locator, sources: FromEnvironment
) -> Any:
    if isinstance(value, str):
        used: list[str] = []

        def substitute(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            found = env.get(name)
            if found:
                used.append(name)
                return found
            if default is not None:
                return default
            raise ConfigurationError(
                f"{locate(key_path)}: {dotted(key_path)}: environment variable {name} is not "
                f"set (write ${{{name}:-default}} to give a default)"
            )

        expanded = _VARIABLE.sub(substitute, value)
        if used:
            sources.variables[key_path] = used
        return expanded
    if isinstance(value, dict):
        return {k: _expand(v, (*key_path, str(k)), env, locate, sources) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand(v, (*key_path, i), env, locate, sources) for i, v in enumerate(value)]
    return value

"""``${VAR}`` and ``${VAR:-default}`` in the configuration file, expanded from the environment.

Only string values are expanded, never keys, so a key path in an error message is always what
is written in the file. A missing variable without a default is an error that names the
variable and the key, not the value it would have had.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from providers.abstractions.errors import ConfigurationError
from providers.config._key_paths import KeyPath, Locator, dotted

__all__ = ["interpolate"]

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-(.*?))?\}")


def interpolate(value: Any, key_path: KeyPath, env: Mapping[str, str], locate: Locator) -> Any:
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
                f"{locate(key_path)}: {dotted(key_path)}: environment variable {name} is not "
                f"set (write ${{{name}:-default}} to give a default)"
            )

        return _VARIABLE.sub(substitute, value)
    if isinstance(value, dict):
        return {k: interpolate(v, (*key_path, str(k)), env, locate) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, (*key_path, i), env, locate) for i, v in enumerate(value)]
    return value

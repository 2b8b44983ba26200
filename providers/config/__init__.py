"""YAML configuration: many backends in one file, and which role uses which.

The package reads and validates the file and turns one entry into a client; what the client
does is ``create_chat_client``'s business (``providers.factory``), so configuration and code can
never assemble different pipelines. Its modules, one job each:

* ``schema``: the pydantic models, i.e. what each key means (``OaicompatConfig`` and its parts);
* ``loading``: finding the file and reading it into a validated ``OaicompatConfig``;
* ``document``: the YAML document read once and within bounds (size, depth, alias expansion);
* ``interpolation``: ``${VAR}`` and ``${VAR:-default}`` in string values;
* ``key_paths``: the ``file:line: key.path`` every error message starts with;
* ``clients``: ``client_for``, a role or backend as a client;
* ``reference``: the README's configuration reference, rendered from the models.

Rules: ``yaml.safe_load`` semantics only (no Python tags), within bounds (an alias bomb or a
recursive alias is a ``ConfigurationError``, not gigabytes or a traceback); ``${VAR}`` and
``${VAR:-default}`` are expanded inside string values only (never in keys, so a key path is
always what is written);
unknown keys are errors with a did-you-mean (a typo like ``api_kye`` must not silently drop the
key); ``api_key`` is a ``SecretStr``, so ``repr``, ``str`` and ``model_dump_json`` show
``**********``, and no error message quotes a value that came from the environment.
"""

from providers.config.clients import client_for
from providers.config.loading import default_config_paths, find_config, load_config
from providers.config.schema import (
    BackendConfig,
    DefaultsConfig,
    LimitsConfig,
    OaicompatConfig,
    RetryConfig,
    RoleConfig,
    SessionAffinityConfig,
    TimeoutsConfig,
)

__all__ = [
    "BackendConfig",
    "DefaultsConfig",
    "LimitsConfig",
    "OaicompatConfig",
    "RetryConfig",
    "RoleConfig",
    "SessionAffinityConfig",
    "TimeoutsConfig",
    "client_for",
    "default_config_paths",
    "find_config",
    "load_config",
]

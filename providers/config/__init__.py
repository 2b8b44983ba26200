"""YAML configuration: many backends in one file, and which role uses which.

The package reads and validates the file and turns one entry into a client; what the client
does is ``create_chat_client``'s business (``providers.factory``), so configuration and code can
never assemble different pipelines. Its modules, one job each:

* ``schema``: the pydantic models, i.e. what each key means (``OaicompatConfig`` and its parts);
* ``loading``: finding the file and reading it into a validated ``OaicompatConfig``;
* ``document``: the YAML document read once and within bounds (size, depth, alias expansion);
* ``interpolation``: ``${VAR}`` and ``${VAR:-default}`` in string values;
* ``key_paths``: the ``file:line: key.path`` every error message starts with;
* ``clients``: ``client_for``, a role or backend as a client, and
  ``create_embedding_generator``, one as an embedding generator;
* ``embeddings``: a backend's ``embeddings:`` block (``EmbeddingsConfig``);
* ``overlay``: ``defaults`` and a backend's own settings merged field by field;
* ``reference``: the README's configuration reference, rendered from the models.

Rules: ``yaml.safe_load`` semantics only (no Python tags), within bounds (an alias bomb or a
recursive alias is a ``ConfigurationError``, not gigabytes or a traceback); ``${VAR}`` and
``${VAR:-default}`` are expanded inside string values only (never in keys, so a key path is
always what is written);
unknown keys are errors with a did-you-mean (a typo like ``api_kye`` must not silently drop the
key); ``api_key`` is a ``SecretStr``, so ``repr``, ``str`` and ``model_dump_json`` show
``**********``, and no error message quotes a value that came from the environment.
"""

from providers.config.clients import client_for as client_for
from providers.config.clients import create_embedding_generator as create_embedding_generator
from providers.config.embeddings import EmbeddingsConfig as EmbeddingsConfig
from providers.config.loading import default_config_paths as default_config_paths
from providers.config.loading import find_config as find_config
from providers.config.loading import load_config as load_config
from providers.config.schema import BackendConfig as BackendConfig
from providers.config.schema import DefaultsConfig as DefaultsConfig
from providers.config.schema import LimitsConfig as LimitsConfig
from providers.config.schema import OaicompatConfig as OaicompatConfig
from providers.config.schema import RetryConfig as RetryConfig
from providers.config.schema import RoleConfig as RoleConfig
from providers.config.schema import SessionAffinityConfig as SessionAffinityConfig
from providers.config.schema import TimeoutsConfig as TimeoutsConfig
from providers.lazy_exports import lazy_exports as _lazy_exports

_lazy_exports(__name__, {})

"""The ``oaicompat`` command. Thin: every subcommand calls the library.

``main`` (``dispatch``) parses the command line (``arguments``) and imports only the command it
runs, so ``oaicompat --help`` is instant and ``import providers`` never pays for the CLI. The
rest is one module per job:

* ``backend_commands``: the frame of the commands that talk to a backend (logging to stderr,
  errors to exit codes), which are ``probe``, ``chat``, ``check`` (with its battery in
  ``check_battery``) and ``record``;
* ``replay`` and ``demo``: the commands that need no backend;
* ``target``: which backend a command talks to (``--base-url`` or the configuration file);
* ``flags``: the JSON-valued flags; ``output``: tables and the streamed answer.
"""

from providers.cli.dispatch import main as main
from providers.lazy_exports import lazy_exports as _lazy_exports

_lazy_exports(__name__, {})

"""The ``oaicompat`` command. Thin: every subcommand calls the library.

``main`` (``_main``) parses the command line (``_arguments``) and imports only the command it
runs, so ``oaicompat --help`` is instant and ``import providers`` never pays for the CLI. The
rest is one module per job:

* ``_backend_commands``: the frame of the commands that talk to a backend (logging to stderr,
  errors to exit codes), which are ``_probe``, ``_chat``, ``_check`` (with its battery in
  ``_check_battery``) and ``_record``;
* ``_replay`` and ``demo``: the commands that need no backend;
* ``_target``: which backend a command talks to (``--base-url`` or the configuration file);
* ``_flags``: the JSON-valued flags; ``_output``: tables and the streamed answer.
"""

from providers.cli.dispatch import main

__all__ = ["main"]

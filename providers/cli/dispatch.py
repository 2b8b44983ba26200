"""``main``: parse the command line, run one command, and turn how it ended into an exit code.

Only ``argparse`` and the standard library load before a command is chosen: each command's
module is imported once it is known to be needed, so ``oaicompat --help`` and a usage error
stay fast and ``import providers`` never pays for the CLI.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from providers.cli.arguments import EXIT_OK, EXIT_USAGE, build_parser

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """The ``oaicompat`` command: run one subcommand and return its exit code (0 ok, 1 the
    backend failed, 2 usage or configuration), never raising for a user's mistake. Takes
    ``argv`` so tests call it in-process."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        return _run(args)
    except BrokenPipeError:  # `oaicompat demo | head`: the reader left, nothing is wrong
        sys.stderr.close()
        return EXIT_OK
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        # A bad file or flag of demo or replay: one line naming it and the fix, no traceback.
        # deferred: --help and argparse's usage errors load nothing of the library
        from providers.abstractions.errors import ConfigurationError

        if not isinstance(exc, ConfigurationError):
            raise
        # deferred: the escaping loads the response types, which --help does without
        from providers.cli.output import terminal_safe

        print(f"oaicompat: {terminal_safe(str(exc), layout=True)}", file=sys.stderr)
        return EXIT_USAGE


def _run(args: argparse.Namespace) -> int:
    if args.command == "demo":
        # deferred: the demo loads the wire client, layers and replay server (~160 ms importtime)
        from providers.cli.demo import run_demo

        return asyncio.run(run_demo(args.transcripts))
    if args.command == "replay":
        # deferred: the transcript reader adds ~7 ms (importtime) to --help's ~100 ms
        from providers.cli.replay import replay

        return asyncio.run(replay(args.file))
    if args.command == "serve":
        # deferred: the gateway and its ASGI server
        from providers.cli.serve import run_serve

        return run_serve(args)
    # deferred: configuration, capabilities and the client stack (~450 ms importtime)
    from providers.cli.backend_commands import run_backend_command

    return run_backend_command(args)

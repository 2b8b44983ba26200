"""``oaicompat serve``: the gateway from the command line.

The command is an application, so it may configure logging: ``-v`` turns the access log on and
prints the library's info events to stderr, ``-vv`` its debug events too. Without it only the
address line and errors are printed.
"""

from __future__ import annotations

import argparse
import logging
import sys

from providers.abstractions.errors import ConfigurationError
from providers.cli.arguments import EXIT_OK
from providers.config.loading import find_config, load_config

__all__ = ["run_serve"]


def run_serve(args: argparse.Namespace) -> int:
    path = find_config(args.config)
    if path is None:
        raise ConfigurationError(
            "no configuration file: pass --config backends.yaml (docs/serve.md has an example)"
        )
    config = load_config(path)
    try:
        import uvicorn  # noqa: F401  (only to say which extra is missing)
    except ImportError:
        raise ConfigurationError(
            "oaicompat serve needs its extra: pip install 'oaicompat[serve]'"
        ) from None
    if args.workers < 1:
        raise ConfigurationError("--workers must be at least 1")
    if args.verbose:
        level = logging.INFO if args.verbose == 1 else logging.DEBUG
        logging.basicConfig(level=level, stream=sys.stderr, format="%(message)s")
    # deferred: the server loads the whole pipeline
    from providers.gateway.server import run

    run(
        path,
        config,
        host=args.host,
        port=args.port,
        workers=args.workers,
        access_log=args.verbose > 0 or config.serve.access_log,
    )
    return EXIT_OK

"""The frame shared by the commands that talk to a backend (probe, chat, check, record).

Library events go to stderr (errors only unless ``-v``: a command's own expected failures,
such as ``check``'s context-overflow probe, must not read as trouble), so stdout stays the answer
or the JSON; their text is escaped like everything else the CLI prints (``terminal_safe``), since an
event often carries what the server said. A ``ConfigurationError`` is the user's to fix
(exit 2); any other ``ProviderError`` is the backend's (exit 1); both are one line on stderr,
never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Callable, Coroutine, MutableMapping
from typing import Any

import structlog

from providers.abstractions.errors import ConfigurationError, ProviderError
from providers.cli.arguments import EXIT_BACKEND, EXIT_USAGE
from providers.cli.chat import chat
from providers.cli.check import check
from providers.cli.output import terminal_safe
from providers.cli.probe import probe
from providers.cli.record import record
from providers.cli.target import DEFAULT_KEY_VARIABLE

__all__ = ["run_backend_command"]

_Command = Callable[[argparse.Namespace], Coroutine[Any, Any, int]]

_COMMANDS: dict[str, _Command] = {"probe": probe, "chat": chat, "check": check, "record": record}


def run_backend_command(args: argparse.Namespace) -> int:
    restore = _configure_logging(args.verbose)
    try:
        command = _COMMANDS.get(args.command)
        if command is not None:
            return asyncio.run(command(args))
    except ConfigurationError as exc:
        print(f"oaicompat: {terminal_safe(str(exc), layout=True)}", file=sys.stderr)
        return EXIT_USAGE
    except ProviderError as exc:
        message = terminal_safe(str(exc), layout=True)
        print(f"oaicompat: {type(exc).__name__}: {message}{_key_hint(args, exc)}", file=sys.stderr)
        return EXIT_BACKEND
    finally:
        restore()
    return EXIT_USAGE  # pragma: no cover - argparse rejects unknown commands


def _key_hint(args: argparse.Namespace, exc: ProviderError) -> str:
    """A 401/403 after ``--base-url`` sent no key: say which variable was unset."""
    if exc.status not in (401, 403) or not args.base_url:
        return ""
    variable = args.api_key_env or DEFAULT_KEY_VARIABLE
    if os.environ.get(variable):
        return ""
    return (
        f" (no API key was sent: {variable} is unset; export it, or name another with "
        "--api-key-env)"
    )


def _configure_logging(verbose: int) -> Callable[[], None]:
    """The CLI is an application, so it may configure structlog; it restores the previous
    configuration afterwards because ``main`` is also called in-process (tests)."""
    previous = structlog.get_config()
    level = logging.ERROR if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    processors = list(previous["processors"])
    processors.insert(max(len(processors) - 1, 0), _escape_event)  # just before the renderer
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
    )
    return lambda: structlog.configure(**previous)


def _escape_event(
    logger: object, method: str, event: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """Every string in the event through ``terminal_safe``; the renderer ``repr``s the rest,
    which escapes control characters already."""
    return {key: terminal_safe(v) if isinstance(v, str) else v for key, v in event.items()}

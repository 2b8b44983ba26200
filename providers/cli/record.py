"""``oaicompat record``: capture one exchange, byte for byte, in the ``transcripts/README.md``
layout.

The client's own body builder makes the request; ``providers.replay.recording`` sends it, keeps
the body exactly as the server sent it and writes the sidecar, whose ``expected`` is what the
core client (text recovery off) makes of those bytes, replayed on a loopback server. Review it
before committing: it is the client's reading, not an independent one.

Captures go to ``./oaicompat-transcripts`` unless ``--transcripts`` says otherwise, never to the
repository's bundled ``transcripts/`` by default, and an existing capture is replaced only with
``--force``: a transcript is evidence, and one run from the repository root once overwrote a
bundled capture silently.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from providers.abstractions.errors import ConfigurationError
from providers.abstractions.options import ChatOptions
from providers.cli.arguments import EXIT_BACKEND, EXIT_OK
from providers.cli.flags import tools_flag
from providers.cli.output import print_waiting
from providers.cli.target import target_from
from providers.factory import core_client_class
from providers.replay.recording import record_exchange

__all__ = ["record"]

_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _label(flag: str, value: str) -> str:
    """``--name`` and ``--setup`` become part of a file name: one path segment, no ``..``."""
    if not _LABEL.fullmatch(value) or ".." in value:
        raise ConfigurationError(
            f"{flag} {value!r} is not a file-name label: use letters, digits, '.', '_' and '-' "
            "(e.g. stream-text)"
        )
    return value


@asynccontextmanager
async def _no_client() -> AsyncIterator[None]:
    yield None  # record_exchange makes its own, with its long default timeout


async def record(args: argparse.Namespace) -> int:
    name, setup = _label("--name", args.name), _label("--setup", args.setup)
    tools = tools_flag(args.tools)
    target = target_from(args)
    api = target.settings.get("api", "chat")
    core = core_client_class(api)(
        target.base_url,
        target.model_id,
        backend=None if target.backend == "auto" else target.backend,
    )
    extra = target.settings.get("extra_body") or {}
    options = ChatOptions(
        max_output_tokens=args.max_tokens,
        tools=tools,
        additional_properties=dict(extra),
    )
    body = core.build_request_body(args.prompt, options, stream=not args.no_stream)
    await core.aclose()
    print_waiting(target.shown_url, target.timeout, sys.stderr)
    try:
        async with target.probe_http() if target.timeout else _no_client() as http:
            recording = await record_exchange(
                target.base_url,
                body,
                root=args.transcripts,
                scenario=f"captured--{setup}--{'responses--' if api != 'chat' else ''}{name}",
                api_key=target.api_key,
                source="oaicompat record",
                api=api,
                overwrite=args.force,
                http_client=http,
            )
    except FileExistsError as exc:
        raise ConfigurationError(
            f"{exc.args[0]} exists: pass --force to replace it, or another --name"
        ) from None
    except OSError as exc:
        where = exc.filename if exc.filename is not None else args.transcripts
        raise ConfigurationError(
            f"cannot write the transcript to {where}: {exc.strerror or exc}; "
            "pass --transcripts DIR naming a writable folder"
        ) from None
    print(f"recorded {recording.body_path} and {recording.sidecar_path}")
    if not 200 <= recording.exchange.status < 300:
        status = recording.exchange.status
        print(f"oaicompat: the server answered HTTP {status} (recorded)", file=sys.stderr)
        return EXIT_BACKEND
    return EXIT_OK

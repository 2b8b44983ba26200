"""``oaicompat record``: capture one exchange, byte for byte, in the ``transcripts/README.md``
layout.

The client's own body builder makes the request; ``providers.replay.recording`` sends it, keeps
the body exactly as the server sent it and writes the sidecar, whose ``expected`` is what the
core client (text recovery off) makes of those bytes, replayed on a loopback server. Review it
before committing: it is the client's reading, not an independent one.
"""

from __future__ import annotations

import argparse

from providers.abstractions.options import ChatOptions
from providers.cli.arguments import EXIT_BACKEND, EXIT_OK
from providers.cli.flags import tools_flag
from providers.cli.target import target_from
from providers.factory import core_client_class
from providers.replay.recording import record_exchange

__all__ = ["record"]


async def record(args: argparse.Namespace) -> int:
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
        tools=tools_flag(args.tools),
        additional_properties=dict(extra),
    )
    body = core.build_request_body(args.prompt, options, stream=not args.no_stream)
    await core.aclose()
    recording = await record_exchange(
        target.base_url,
        body,
        root=args.transcripts,
        scenario=f"captured--{args.setup}--{'responses--' if api != 'chat' else ''}{args.name}",
        api_key=target.api_key,
        source="oaicompat record",
        api=api,
    )
    print(f"recorded {recording.body_path} and {recording.sidecar_path}")
    return EXIT_OK if 200 <= recording.exchange.status < 300 else EXIT_BACKEND

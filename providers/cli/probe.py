"""``oaicompat probe``: what the server can do, each value with where it came from."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from capabilities import OpenAiCompatibleCapabilityResolver
from providers.cli.arguments import EXIT_BACKEND, EXIT_OK
from providers.cli.output import json_text, print_probe_table, terminal_safe
from providers.cli.target import target_from

__all__ = ["probe"]


async def probe(args: argparse.Namespace) -> int:
    target = target_from(args)
    overrides: Any = target.capabilities
    if target.backend not in ("", "auto") and (overrides is None or overrides.backend is None):
        overrides = {**(overrides.model_dump(exclude_unset=True) if overrides else {})}
        overrides["backend"] = target.backend
    async with (
        target.probe_http() as http,
        OpenAiCompatibleCapabilityResolver(
            target.base_url, http, api_key=target.api_key, overrides=overrides
        ) as resolver,
    ):
        caps = await resolver.resolve(target.model_id)
    data = {"target": target.name, "base_url": target.shown_url, **caps.to_dict()}
    if args.json:
        print(json_text(data))
    else:
        print_probe_table(data, sys.stdout)
    if not caps.answered_probes:
        print(f"oaicompat: no probe of {terminal_safe(target.shown_url)} answered", file=sys.stderr)
        return EXIT_BACKEND
    return EXIT_OK

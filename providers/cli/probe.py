"""``oaicompat probe``: what the server can do, each value with where it came from.

The model id (``--model`` or the entry's ``model_id``) is checked against the served ids: one
the server does not serve is a usage error (exit 2) naming the served ids, since ``chat`` would
get a 404 for it, unless the server answers whatever ``model`` says (llama.cpp's single-model
mode), where a note says which model answers instead. Then whether the server embeds,
reranks and tokenizes (``providers.cli.services``), each from one real request.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from capabilities import OpenAiCompatibleCapabilityResolver
from capabilities.models import ModelCapabilities
from providers.cli.arguments import EXIT_BACKEND, EXIT_OK, EXIT_USAGE
from providers.cli.output import json_text, print_probe_table, terminal_safe
from providers.cli.services import probe_services, services_line
from providers.cli.target import target_from
from providers.config.key_paths import did_you_mean

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
        services = (
            await probe_services(target, http, caps.backend.value) if caps.answered_probes else {}
        )
    data = {"target": target.name, "base_url": target.shown_url, **caps.to_dict()}
    if args.json:
        print(json_text({**data, "services": services}))
    else:
        print_probe_table(data, sys.stdout)
        for name, found in services.items():
            print(terminal_safe(services_line(name, found)))
    if not caps.answered_probes:
        print(f"oaicompat: no probe of {terminal_safe(target.shown_url)} answered", file=sys.stderr)
        return EXIT_BACKEND
    return _check_model(target.model_id, caps)


def _check_model(model_id: str | None, caps: ModelCapabilities) -> int:
    served = list(caps.served_model_ids.value or ())
    if not model_id or not served or model_id.casefold() in {s.casefold() for s in served}:
        return EXIT_OK
    listed = terminal_safe(", ".join(served))
    if caps.model_field_ignored:
        print(
            f"oaicompat: note: {terminal_safe(model_id)!r} is not a served id ({listed}); this "
            "server ignores the model field, so that model answers",
            file=sys.stderr,
        )
        return EXIT_OK
    hint = terminal_safe(did_you_mean(model_id, served))
    print(
        f"oaicompat: the server does not serve model {terminal_safe(model_id)!r}{hint} "
        f"(served: {listed}); pass --model with one of them or fix model_id",
        file=sys.stderr,
    )
    return EXIT_USAGE

"""``oaicompat check``: run the compatibility battery (``providers.cli.check_battery``) against
one backend and report each check's outcome.

Each check is one request; a failure is a finding, not a crash, so all of them run. Retry is
off, so a check sees the server's first answer.
"""

from __future__ import annotations

import argparse
import sys

from capabilities import ModelCapabilities, OpenAiCompatibleCapabilityResolver
from providers.abstractions.chat_client import ChatClient
from providers.abstractions.errors import ProviderError
from providers.abstractions.records import value_class
from providers.cli.arguments import EXIT_BACKEND, EXIT_OK
from providers.cli.check_battery import BATTERY, Check
from providers.cli.output import json_text, terminal_safe
from providers.cli.target import Target, closing, target_from

__all__ = ["check"]


@value_class()
class _CheckResult:
    name: str
    outcome: str
    """``ok``, ``differs`` (works, but not the OpenAI way) or ``failed``."""
    detail: str


async def check(args: argparse.Namespace) -> int:
    target = target_from(args)
    async with (
        target.probe_http() as http,
        OpenAiCompatibleCapabilityResolver(
            target.base_url, http, api_key=target.api_key
        ) as resolver,
    ):
        caps = await resolver.resolve(target.model_id)
        if not caps.answered_probes:
            print(
                f"oaicompat: no probe of {terminal_safe(target.shown_url)} answered",
                file=sys.stderr,
            )
            return EXIT_BACKEND
        results = await _run_battery(target, args, caps, resolver)
    _print_report(target, caps, results, as_json=args.json)
    plain = results[0]
    return EXIT_BACKEND if plain.outcome == "failed" else EXIT_OK


async def _run_battery(
    target: Target,
    args: argparse.Namespace,
    caps: ModelCapabilities,
    resolver: OpenAiCompatibleCapabilityResolver,
) -> list[_CheckResult]:
    progress = sys.stderr.isatty()
    results: list[_CheckResult] = []
    async with closing(target.client(retry=None)) as client:
        for name, run in BATTERY:
            if progress:
                print(f"… {name}", file=sys.stderr, flush=True)
            results.append(await _run_check(name, run, client, args, caps=caps, resolver=resolver))
    return results


async def _run_check(
    name: str,
    run: Check,
    client: ChatClient,
    args: argparse.Namespace,
    *,
    caps: ModelCapabilities,
    resolver: OpenAiCompatibleCapabilityResolver,
) -> _CheckResult:
    try:
        outcome, detail = await run(client, args, caps, resolver)
    except ProviderError as exc:
        outcome, detail = "failed", f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
    return _CheckResult(name, outcome, detail)


def _print_report(
    target: Target, caps: ModelCapabilities, results: list[_CheckResult], *, as_json: bool
) -> None:
    header = {
        "base_url": target.shown_url,
        "backend": caps.backend.value,
        "version": caps.backend_version.value,
    }
    if as_json:
        rows = [{"check": r.name, "outcome": r.outcome, "detail": r.detail} for r in results]
        print(json_text({**header, "checks": rows}))
        return
    title = f"{header['backend']} {header['version'] or ''} at {target.shown_url}".strip()
    print(terminal_safe(title))
    width = max(len(r.name) for r in results)
    for r in results:
        print(f"  {r.name:<{width}}  {r.outcome:<8} {terminal_safe(r.detail)}")

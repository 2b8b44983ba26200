"""``oaicompat check``: run the compatibility battery (``providers.cli.check_battery``) against
one backend and report each check's outcome, then what the server does with each mapped request
option (``providers.cli.check_honours``): honoured, enforced here or refused, probed or from the
table; then whether the server embeds, reranks and tokenizes (``providers.cli.services``).

Each check is one request; a failure is a finding, not a crash, so all of them run. Retry is
off, so a check sees the server's first answer.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from capabilities import ModelCapabilities, OpenAiCompatibleCapabilityResolver
from capabilities.option_verdicts import OptionVerdict
from providers.abstractions.chat_client import ChatClient
from providers.abstractions.errors import ProviderError
from providers.abstractions.records import value_class
from providers.backends import profile_for
from providers.cli.arguments import EXIT_BACKEND, EXIT_OK
from providers.cli.check_battery import BATTERY, Check
from providers.cli.check_honours import HONOURS_PROBES, HonoursContext, client_settings, run_probe
from providers.cli.honours import verdict_text
from providers.cli.output import json_text, terminal_safe
from providers.cli.services import probe_services, services_line
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
        honours = await _run_honours(target, args, caps)
        services = await probe_services(target, http, caps.backend.value)
    _print_report(target, caps, results, (honours, services), as_json=args.json)
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


async def _run_honours(
    target: Target, args: argparse.Namespace, caps: ModelCapabilities
) -> list[OptionVerdict]:
    """The honours probes, on a client for the detected backend (its row maps the options)
    told the model family the capabilities found, as the table's rows are computed for."""
    api = str(target.settings.get("api") or "chat")
    named = target.backend not in ("", "auto")
    backend = target.backend if named else caps.backend.value
    family = target.settings.get("model_family") or caps.family  # configured, else found
    context = HonoursContext(profile_for(backend), family, api, args.max_tokens)
    settings = {"retry": None, "backend": context.profile.name, **client_settings(api, family)}
    progress = sys.stderr.isatty()
    rows: list[OptionVerdict] = []
    async with closing(target.client(**settings)) as client:
        for option, probe in HONOURS_PROBES:
            if progress:
                print(f"… {option}", file=sys.stderr, flush=True)
            rows.append(await run_probe(option, probe, client, context))
    return rows


def _print_report(
    target: Target,
    caps: ModelCapabilities,
    results: list[_CheckResult],
    found: tuple[list[OptionVerdict], dict[str, dict[str, Any]]],
    *,
    as_json: bool,
) -> None:
    honours, services = found
    header = {
        "base_url": target.shown_url,
        "backend": caps.backend.value,
        "version": caps.backend_version.value,
        "family": honours[0].family if honours else caps.family,
    }
    if as_json:
        rows = [{"check": r.name, "outcome": r.outcome, "detail": r.detail} for r in results]
        verdicts = [_honours_json(h) for h in honours]
        print(json_text({**header, "checks": rows, "honours": verdicts, "services": services}))
        return
    title = f"{header['backend']} {header['version'] or ''} at {target.shown_url}".strip()
    print(terminal_safe(title))
    width = max(len(r.name) for r in results)
    for r in results:
        print(f"  {r.name:<{width}}  {r.outcome:<8} {terminal_safe(r.detail)}")
    family = honours[0].family if honours else caps.family
    print(terminal_safe(f"options (model family {family or 'unknown'}):"))
    width = max((len(h.option) for h in honours), default=0)
    for h in honours:
        line = f"  {h.option:<{width}}  {verdict_text(h):<22}  {h.provenance:<6}  {h.note}"
        print(terminal_safe(line.rstrip()))
    print("services:")
    for name, service in services.items():
        print(terminal_safe(f"  {services_line(name, service)}"))


def _honours_json(row: OptionVerdict) -> dict[str, str | None]:
    return {
        "option": row.option,
        "verdict": row.verdict,
        "provenance": row.provenance,
        "wire": row.wire,
        "note": row.note,
    }

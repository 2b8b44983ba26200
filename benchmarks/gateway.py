"""Issue 35's gateway benchmark: ``oaicompat serve`` against LiteLLM's proxy and direct, one run.

``PYTHONPATH=$PWD python benchmarks/gateway.py [--streams 200] [--chunks 500] [--quick]``

One loopback backend (``gateway_backend``, paced like a decoding server) serves three targets:
**direct** (client → backend), **gateway** (client → ``oaicompat serve`` → backend) and
**litellm** (client → ``litellm`` proxy → backend, skipped with a message when no executable is
found: ``--litellm``, ``$OAICOMPAT_BENCH_LITELLM``, ``litellm`` on PATH,
the README's ``.venv-litellm/bin/litellm``). Both proxies stay up for the whole run.

1. Warm-up: a few concurrent full streams through each target (code paths, pools).
2. Idle probes: ``--probes`` short streams per target, one at a time, targets interleaved:
   the added time to first token of one request on an idle proxy.
3. Load phases, **sequential**: each target in turn (the order rotated per ``--rounds``) is
   driven by a fresh load-generator process (``gateway_client``) opening ``--streams`` streams
   at once; the proxy's process-tree CPU is read just before and after, the backend's arrival
   list after. The targets never run at the same time, so they do not compete for the 2 cores.

It prints the table and issue 35's bars and writes ``benchmarks/results/gateway.json`` (every
request's timings). Exit code 1 when a stream failed its check (text, ``[DONE]``, usage).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.gateway_backend import MODEL_ID, Pacing, expected_text
from benchmarks.gateway_client import Endpoint, LoadResult, StreamRecord, chat_body, stream_once
from benchmarks.gateway_stats import (
    DIRECT,
    PhaseResult,
    bar_lines,
    percentile,
    render,
    rows,
    tree_cpu_seconds,
)
from benchmarks.gateway_targets import (
    API_KEY,
    API_KEY_ENV,
    Backend,
    Proxy,
    find_litellm,
    gateway_proxy,
    litellm_proxy,
)
from benchmarks.sse_server import child_env

_ROOT = Path(__file__).resolve().parent.parent
_RESULTS = _ROOT / "benchmarks" / "results" / "gateway.json"
_PROFILE = _ROOT / "benchmarks" / "results" / "gateway-profile.txt"
_WARMUP_STREAMS = 4
_PROBE_CHUNKS = 16


@dataclass(frozen=True, slots=True)
class Target:
    name: str
    endpoint: Endpoint
    model: str
    pid: int | None
    """The proxy's process (its tree's CPU is measured); ``None`` for direct."""


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--chunks", type=int, default=500, help="token chunks per stream")
    parser.add_argument("--rounds", type=int, default=1, help="load phases per target")
    parser.add_argument("--probes", type=int, default=20, help="idle probes per target")
    parser.add_argument("--quick", action="store_true", help="50 streams of 100 chunks")
    parser.add_argument("--litellm", default=None, help="the litellm executable")
    parser.add_argument("--targets", default="direct,gateway,litellm")
    defaults = Pacing()
    parser.add_argument("--first-delay", type=float, default=defaults.first_delay)
    parser.add_argument("--pace", type=float, default=defaults.pace)
    parser.add_argument("--per-piece", type=int, default=defaults.per_piece)
    parser.add_argument("--output", type=Path, default=_RESULTS)
    parser.add_argument(
        "--profile",
        action="store_true",
        help="run the gateway under cProfile (its CPU figures then include the profiler's "
        "cost); writes results/gateway-profile.txt",
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.streams, args.chunks, args.probes = 50, 100, 5
    return args


def _load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def _start_proxies(args: argparse.Namespace, workdir: Path, backend: Backend) -> list[Proxy]:
    wanted = args.targets.split(",")
    proxies = []
    if "gateway" in wanted:
        profile = workdir / "gateway.prof" if args.profile else None
        proxies.append(gateway_proxy(workdir, backend.url, profile))
    if "litellm" in wanted:
        executable = find_litellm(args.litellm)
        if executable is None:
            print(
                "litellm: no executable found (--litellm, $OAICOMPAT_BENCH_LITELLM, PATH); skipped"
            )
        else:
            proxies.append(litellm_proxy(workdir, backend.url, executable))
    for proxy in proxies:
        proxy.start(workdir)
    for proxy in proxies:
        proxy.wait_ready()
    return proxies


async def _warm_up(target: Target, chunks: int) -> str | None:
    body = chat_body(target.model, chunks)
    expected = expected_text(chunks)
    records = await asyncio.gather(
        *(stream_once(target.endpoint, body, expected) for _ in range(_WARMUP_STREAMS))
    )
    return next((r.error for r in records if r.error is not None), None)


async def _probes(targets: Sequence[Target], count: int) -> dict[str, list[StreamRecord]]:
    """Short streams one at a time, the targets interleaved (a rotating order)."""
    expected = expected_text(_PROBE_CHUNKS)
    found: dict[str, list[StreamRecord]] = {t.name: [] for t in targets}
    for index in range(count):
        shift = index % len(targets)
        for target in [*targets[shift:], *targets[:shift]]:
            body = chat_body(target.model, _PROBE_CHUNKS)
            found[target.name].append(await stream_once(target.endpoint, body, expected))
    return found


def _drive(target: Target, backend: Backend, args: argparse.Namespace) -> PhaseResult:
    """One load phase: a fresh load generator, the proxy's CPU read around its streams."""
    command = [sys.executable, "-m", "benchmarks.gateway_client", "--port"]
    command += [str(target.endpoint.port), "--model", target.model]
    command += ["--streams", str(args.streams), "--chunks", str(args.chunks)]
    if target.endpoint.api_key:
        command += ["--api-key-env", API_KEY_ENV]
    env = {**child_env(), API_KEY_ENV: API_KEY}
    generator = subprocess.Popen(
        command, cwd=_ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert generator.stdin is not None and generator.stdout is not None
    if generator.stdout.readline().strip() != "READY":
        generator.kill()
        raise RuntimeError("the load generator did not start")
    backend.arrivals()  # a new list: only this phase's requests
    assert backend.child is not None
    proxy_before = None if target.pid is None else tree_cpu_seconds(target.pid)
    backend_before = tree_cpu_seconds(backend.child.pid)
    generator.stdin.write("go\n")
    generator.stdin.flush()
    line = generator.stdout.readline()
    proxy_cpu = None if target.pid is None else tree_cpu_seconds(target.pid) - (proxy_before or 0)
    backend_cpu = tree_cpu_seconds(backend.child.pid) - backend_before
    generator.wait(timeout=30)
    if not line:
        raise RuntimeError(f"the load generator of {target.name} ended without a result")
    load = LoadResult.from_json(json.loads(line))
    return PhaseResult(target.name, load, args.chunks, proxy_cpu, backend_cpu, backend.arrivals())


def _probe_summary(probes: dict[str, list[StreamRecord]]) -> list[str]:
    direct = [r.ttft for r in probes.get(DIRECT, []) if r.ttft is not None]
    lines = []
    for name, records in probes.items():
        ttfts = [r.ttft for r in records if r.ttft is not None]
        failed = sum(r.error is not None for r in records)
        line = f"{name}: TTFT p50 {percentile(ttfts, 50) * 1e3:.2f} ms"
        line += f", p99 {percentile(ttfts, 99) * 1e3:.2f} ms ({len(records)} probes"
        line += f", {failed} failed)" if failed else ")"
        if direct and name != DIRECT:
            added = percentile(ttfts, 50) - percentile(direct, 50)
            line += f"; added p50 {added * 1e3:.2f} ms"
        lines.append(line)
    return lines


def _targets(backend: Backend, proxies: Sequence[Proxy], wanted: Sequence[str]) -> list[Target]:
    targets = []
    if DIRECT in wanted:
        targets.append(Target(DIRECT, Endpoint(backend.port), MODEL_ID, None))
    for proxy in proxies:
        targets.append(
            Target(proxy.name, Endpoint(proxy.port, api_key=API_KEY), proxy.model, proxy.pid)
        )
    return targets


def _measure(
    args: argparse.Namespace, backend: Backend, proxies: Sequence[Proxy]
) -> dict[str, Any]:
    targets = _targets(backend, proxies, args.targets.split(","))
    for target in targets:
        error = asyncio.run(_warm_up(target, args.chunks))
        if error is not None:
            raise RuntimeError(f"{target.name}'s warm-up stream failed: {error}")
    probes = asyncio.run(_probes(targets, args.probes))
    phases = []
    for round_index in range(args.rounds):
        shift = round_index % len(targets)
        for target in [*targets[shift:], *targets[:shift]]:
            print(f"  {target.name}: {args.streams} streams …", flush=True)
            phases.append(_drive(target, backend, args))
    return {"phases": phases, "probes": probes}


def _write_profile(source: Path, target: Path) -> None:
    """The gateway's cProfile, by own time and by cumulative time, 40 lines each."""
    import io
    import pstats

    if not source.is_file():
        print(f"no profile was written ({source.name}): did the gateway stop cleanly?")
        return
    out = io.StringIO()
    stats = pstats.Stats(str(source), stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(40)
    stats.sort_stats("cumulative").print_stats(40)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(out.getvalue())
    print(f"profile: {target}")


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    pacing = Pacing(args.first_delay, args.pace, args.per_piece)
    load_before = _load_average()
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="gateway-bench-") as tmp:
        workdir = Path(tmp)
        with Backend(pacing, args.chunks, workdir) as backend:
            proxies = _start_proxies(args, workdir, backend)
            try:
                measured = _measure(args, backend, proxies)
            finally:
                for proxy in proxies:
                    proxy.stop()
            if args.profile:
                _write_profile(workdir / "gateway.prof", _PROFILE)
    table = rows(measured["phases"])
    header = (
        f"{args.streams} streams x {args.chunks} chunks, {args.rounds} round(s), pacing "
        f"{pacing.first_delay}s then {pacing.per_piece} events/{pacing.pace}s; "
        f"load average {load_before} before, {_load_average()} after; {os.cpu_count()} CPUs; "
        f"{time.time() - started:.0f} s"
    )
    print(header, render(table), "", "Idle probes (one request at a time):", sep="\n")
    print("\n".join(_probe_summary(measured["probes"])))
    print("", "Issue 35 (gateway):", *bar_lines(table), sep="\n")
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(
        json.dumps(
            {
                "header": header,
                "phases": [phase.to_json() for phase in measured["phases"]],
                "probes": {n: [r.to_json() for r in rs] for n, rs in measured["probes"].items()},
            }
        )
    )
    return 1 if any(row.failed for row in table) else 0


if __name__ == "__main__":
    sys.exit(main())

"""Many concurrent streams per client, each client in a fresh process.

The suite runs this phase against the server's paced mode (``sse_server.paced``): the streams
overlap in time as they do on a real LLM server, so a client that queues requests in its own
pool shows it in ``last_arrival_fraction``. Each client opens its ``concurrency_session`` (the
library's clients on their own default pool), and ``POOL_CHECK``, the floor on httpx's default
pool, is run beside them to show that the arrival figure can fail.

A fresh process per client makes the memory figure that client's alone: after the imports, the
session and one warm-up stream, the peak-RSS counter is reset (``/proc/self/clear_refs``, Linux);
then all streams run at once under ``asyncio.gather`` and the new peak (``VmHWM``) minus the RSS
at the reset is the growth. Every outcome is checked, and the child reports JSON on stdout. A
``--baseline`` client's child imports the library from that revision's tree (``--tree``).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import gc
import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from benchmarks.baseline import use_tree
from benchmarks.clients import (
    BUILDER_CHECK,
    OBJECTS_CHECK,
    POOL_CHECK,
    STANDARD_BUILDER_CHECK,
    ClientSpec,
    builder_check_client,
    default_clients,
    objects_check_client,
    pool_check_client,
    silence_library_logs,
)
from benchmarks.scenarios import Scenario, describe_mismatch, generate
from benchmarks.sse_server import child_env, pin_to_cpu

__all__ = ["ConcurrencyResult", "measure_in_subprocess", "median_run", "run_streams"]

_ROOT = Path(__file__).resolve().parent.parent


@dataclass(slots=True)
class ConcurrencyResult:
    client: str
    scenario: str
    streams: int
    completed: int
    wall_seconds: float
    cpu_seconds: float
    rss_before_kib: int
    peak_rss_growth_kib: int
    rss_after_kib: int
    peak_method: str
    errors: list[str]
    last_arrival_fraction: float | None = None
    """When the last request reached the server, as a fraction of the wall time: a client
    that queues streams in its own connection pool sends the last ones late."""


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear_refs:
            clear_refs.write("5")
    except OSError:
        return False
    return True


async def run_streams(
    spec: ClientSpec, base: str, scenario: Scenario, streams: int
) -> ConcurrencyResult:
    session = spec.concurrency_session or spec.session
    if session is None:
        raise ValueError(f"{spec.label} cannot run: {spec.unavailable}")
    expected = spec.expected(generate(scenario))
    errors: list[str] = []
    async with session(base, streams) as stream:
        warm = describe_mismatch(expected, await stream(scenario))
        if warm is not None:
            errors.append(f"warm-up: {warm}")
        gc.collect()
        reset = _reset_peak()
        rss_before = _status_kib("VmRSS") or 0
        maxrss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        await _arrivals(base)  # (starts a new list: the warm-up's request is not counted)
        cpu = time.process_time()
        started = time.monotonic()
        wall = time.perf_counter()
        outcomes = await asyncio.gather(
            *(stream(scenario) for _ in range(streams)), return_exceptions=True
        )
        wall = time.perf_counter() - wall
        cpu = time.process_time() - cpu
        arrived = await _arrivals(base)
        last = (max(arrived) - started) / wall if arrived and wall > 0 else None
        if reset:
            peak = _status_kib("VmHWM") or 0
            growth, method = peak - rss_before, "VmHWM after clear_refs"
        else:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            growth, method = peak - maxrss_before, "ru_maxrss difference (lower bound)"
        completed = 0
        for outcome in outcomes:
            if isinstance(outcome, BaseException):
                errors.append(repr(outcome))
                continue
            detail = describe_mismatch(expected, outcome)
            if detail is None:
                completed += 1
            else:
                errors.append(detail)
        del outcomes
        gc.collect()
        rss_after = _status_kib("VmRSS") or 0
    return ConcurrencyResult(
        spec.name,
        scenario.id,
        streams,
        completed,
        wall,
        cpu,
        rss_before,
        max(0, growth),
        rss_after,
        method,
        sorted(set(errors))[:5],
        last,
    )


async def _arrivals(base: str) -> list[float]:
    """The server's arrival times since the last call (``sse_server._Arrivals``)."""
    # deferred: only the concurrency child asks, after its client's imports were measured
    import httpx

    async with httpx.AsyncClient() as client:
        answer = await client.get(f"{base}/_arrivals")
        times: list[float] = answer.json()
        return times


def measure_in_subprocess(
    spec: ClientSpec, base: str, scenario: Scenario, streams: int, *, cpu: int | None = None
) -> dict[str, Any]:
    """Run ``run_streams`` for ``spec`` in a fresh interpreter; its JSON result."""
    client = spec.name
    command = [
        sys.executable,
        "-m",
        "benchmarks.concurrency",
        "--client",
        spec.registry_name,
        "--base",
        base,
        "--scenario",
        scenario.id,
        "--streams",
        str(streams),
    ]
    if cpu is not None:
        command += ["--cpu", str(cpu)]
    if spec.revision is not None:
        command += ["--tree", str(spec.revision.tree)]
    done = subprocess.run(
        command,
        check=False,
        cwd=_ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        return {
            "client": client,
            "scenario": scenario.id,
            "streams": streams,
            "completed": 0,
            "errors": [f"exit {done.returncode}: {done.stderr.strip()[-500:]}"],
        }
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["client"] = client  # the child knows the registry name only
    return result


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run of median peak RSS growth, with every run's growth beside it.

    One fresh process gives one figure, and that figure moves by about 100 KiB from process to
    process (where the allocator's pages fall); the target compares clients a few percent
    apart, so each client runs several times and the median run stands for it. A failed run
    (no growth figure, or streams lost) stands for the client whenever there is one.
    """
    failed = [
        run
        for run in runs
        if "peak_rss_growth_kib" not in run or run.get("completed") != run.get("streams")
    ]
    if failed:
        return {**failed[0], "runs": len(runs)}
    ordered = sorted(runs, key=lambda run: int(run["peak_rss_growth_kib"]))
    chosen = ordered[(len(ordered) - 1) // 2]
    return {
        **chosen,
        "runs": len(runs),
        "peak_rss_growth_samples_kib": [run["peak_rss_growth_kib"] for run in runs],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", required=True)
    parser.add_argument("--base", required=True)
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--cpu", type=int, default=None)
    parser.add_argument("--tree", default=None, help="a --baseline revision's extracted packages")
    args = parser.parse_args(argv)
    use_tree(args.tree)
    pin_to_cpu(args.cpu)
    silence_library_logs()
    checks: dict[str, Callable[[], ClientSpec]] = {
        POOL_CHECK: pool_check_client,
        OBJECTS_CHECK: objects_check_client,
        BUILDER_CHECK: builder_check_client,
        STANDARD_BUILDER_CHECK: functools.partial(builder_check_client, standard=True),
    }
    spec = checks[args.client]() if args.client in checks else default_clients()[args.client]
    result = asyncio.run(run_streams(spec, args.base, Scenario.parse(args.scenario), args.streams))
    sys.stdout.write(json.dumps(asdict(result)) + "\n")


if __name__ == "__main__":
    main()

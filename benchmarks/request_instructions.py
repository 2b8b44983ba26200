"""Instructions per request of each client on short streams, counted by valgrind (callgrind).

``python -m benchmarks.request_instructions [-n 100] [--kinds text reasoning tools]``

Why a second measure beside ``run.py``'s CPU time: on a 2-core machine that is doing anything
else (a CI job, a test run) the per-request CPU of a 100-chunk stream moves by ±0.2x between
runs of the same code, so a 1.2x line cannot be judged by it. An instruction count does not
depend on the load. It is not time either: it leaves out cache misses and the kernel, so it
ranks per-request work, and ``run.py`` on a quiet machine stays the figure of record.

Each client streams the scenario from the benchmark server (its own process, not counted) in a
child under callgrind, once ``--few`` times and once ``--many`` times after the same warm-up;
the difference over the extra requests is the cost of one request, so start-up, imports and
the first request's set-up cancel out. ``--logging structlog`` configures structlog's default
processors (console rendering) to ``/dev/null``, as ``run.py`` does; ``shipped`` leaves logging
as a library user gets it when the application configured none (events dropped at the level
check).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchmarks.scenarios import Scenario

_ROOT = Path(__file__).resolve().parent.parent
_COLLECTED = re.compile(rb"Collected : (\d+)")
CLIENTS = ("floor_orjson", "oaicompat", "full_retry")


def _child(argv: list[str]) -> None:
    """The measured process: ``reps`` streams of one scenario by one client."""
    from benchmarks.clients import default_clients, silence_library_logs
    from benchmarks.scenarios import Scenario

    client, scenario_id, base, logging, reps = argv
    if logging == "structlog":
        silence_library_logs()
    scenario = Scenario.parse(scenario_id)

    spec = default_clients()[client]
    if spec.session is None:
        raise SystemExit(f"{client} cannot run: {spec.unavailable}")
    session = spec.session

    async def run() -> None:
        async with session(base, 1) as stream:
            for _ in range(int(reps)):
                await stream(scenario)

    asyncio.run(run())


def _count(args: list[str]) -> int:
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        "-m",
        "benchmarks.request_instructions",
        "--child",
        *args,
    ]
    done = subprocess.run(command, cwd=_ROOT, capture_output=True, timeout=900, check=True)
    found = _COLLECTED.search(done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no count: {done.stderr[-500:]!r}")
    return int(found.group(1))


def per_request(
    client: str, scenario: Scenario, *, base: str, logging: str, few: int, many: int
) -> float:
    """Instructions of one request: the difference between ``many`` and ``few`` requests."""
    common = [client, scenario.id, base, logging]
    low = _count([*common, str(few)])
    high = _count([*common, str(many)])
    return (high - low) / (many - few)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        _child(argv[1:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=100, help="chunks per stream (default 100)")
    parser.add_argument("--kinds", nargs="+", default=["text", "reasoning", "tools"])
    parser.add_argument("--backend", default="vllm", help="the stream shape (default vllm)")
    parser.add_argument("--logging", choices=["structlog", "shipped"], default="structlog")
    parser.add_argument("--few", type=int, default=20)
    parser.add_argument("--many", type=int, default=60)
    options = parser.parse_args(argv)
    from benchmarks.scenarios import Scenario
    from benchmarks.sse_server import ServerProcess

    print(
        f"instructions per request, {options.backend} shape, n = {options.n}, "
        f"logging {options.logging}"
    )
    with ServerProcess() as base:
        for kind in options.kinds:
            scenario = Scenario(options.backend, kind, options.n)
            counts = {
                client: per_request(
                    client,
                    scenario,
                    base=base,
                    logging=options.logging,
                    few=options.few,
                    many=options.many,
                )
                for client in CLIENTS
            }
            floor = counts["floor_orjson"]
            cells = "  ".join(
                f"{client} {count / 1e6:.2f}M ({count / floor:.2f}x)"
                for client, count in counts.items()
            )
            print(f"{kind:10} {cells}", flush=True)
    return 0


if __name__ == "__main__":
    if str(_ROOT) not in sys.path:
        sys.path.insert(0, str(_ROOT))
    sys.exit(main())

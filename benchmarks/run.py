"""``python benchmarks/run.py [--quick]``: every benchmark of issue 9, one table, one JSON file.

Default (a few minutes on 2 cores): N = 10,000 chunks per stream, 5 interleaved runs,
200 concurrent streams per client, cold imports. ``--quick``: N = 500, 3 runs, short
concurrent streams (under 30 s). ``--profile`` adds cProfile reports of our client.
``--baseline REV`` also measures the library's clients on git revision ``REV``'s code, in the
same run, interleaved, as ``… @REV`` rows with after/before ratios.
Exit code 1 when a client produced a wrong outcome (or, with ``--strict``, a target failed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    if str(_ROOT) not in sys.path:
        sys.path.insert(0, str(_ROOT))  # run as a script: make `benchmarks` importable
    from benchmarks.baseline import BaselineError
    from benchmarks.clients import default_clients, silence_library_logs
    from benchmarks.scenarios import BACKENDS, KINDS, grid
    from benchmarks.sse_server import ServerProcess, pin_to_cpu
    from benchmarks.suite import RESULTS, Options, run_suite

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small N, few runs (< 30 s)")
    parser.add_argument("-n", type=int, help="chunks per stream (default 10000)")
    parser.add_argument("--runs", type=int, help="timed runs per client and scenario (default 5)")
    parser.add_argument("--clients", nargs="+", choices=list(default_clients()))
    parser.add_argument("--backends", nargs="+", choices=BACKENDS)
    parser.add_argument("--kinds", nargs="+", choices=KINDS)
    parser.add_argument("--streams", type=int, help="concurrent streams (default 200)")
    parser.add_argument("--stream-n", type=int, help="chunks per concurrent stream")
    parser.add_argument(
        "--concurrency-runs", type=int, help="fresh processes per client (default 5, median)"
    )
    parser.add_argument("--no-cpu", action="store_true", help="skip CPU per chunk")
    parser.add_argument(
        "--only-concurrency",
        action="store_true",
        help="only the concurrent streams (--no-cpu --no-imports --no-text-parser)",
    )
    parser.add_argument(
        "--unpaced-concurrency",
        action="store_true",
        help="concurrent streams written at once, as before issue 21 (arrivals then meaningless)",
    )
    parser.add_argument("--no-imports", action="store_true")
    parser.add_argument("--no-concurrency", action="store_true")
    parser.add_argument("--no-text-parser", action="store_true")
    parser.add_argument("--no-pin", action="store_true", help="do not pin client/server CPUs")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target fails")
    parser.add_argument("--profile", action="store_true", help="also cProfile our client")
    parser.add_argument(
        "--baseline",
        metavar="REV",
        help="also measure the library's clients at this git revision (e.g. e319521, main~3)",
    )
    parser.add_argument("--output", type=Path, help="default benchmarks/results/run.json")
    args = parser.parse_args(argv)

    silence_library_logs()
    options = Options.quick_defaults() if args.quick else Options()
    if args.n is not None:
        options.n = args.n
    if args.runs is not None:
        options.runs = args.runs
    if args.streams is not None:
        options.streams = args.streams
    if args.stream_n is not None:
        options.stream_n = args.stream_n
    if args.concurrency_runs is not None:
        options.concurrency_runs = max(1, args.concurrency_runs)
    if args.output is not None:
        options.output = args.output
    options.clients = args.clients
    options.backends = args.backends or options.backends
    options.kinds = args.kinds or options.kinds
    only = args.only_concurrency
    options.cpu = not (args.no_cpu or only)
    options.imports = not (args.no_imports or only)
    options.concurrency = not args.no_concurrency
    options.paced = not args.unpaced_concurrency
    options.text_parser = not (args.no_text_parser or only)
    options.strict = args.strict
    options.pin = not args.no_pin
    options.baseline = args.baseline
    if options.pin:
        pin_to_cpu(0)  # the server is pinned to the other CPU

    try:
        _, code = run_suite(options)
    except BaselineError as exc:
        parser.error(str(exc))
    if args.profile:
        from benchmarks.profiling import profile_client

        kinds = [k for k in ("text", "reasoning") if k in options.kinds]
        scenarios = grid(options.backends, kinds, options.n)
        with ServerProcess(cpu=1 if options.pin else None) as base:
            for path in profile_client(default_clients()["oaicompat"], base, scenarios, RESULTS):
                print(f"profile: {path}")
    return code


if __name__ == "__main__":
    sys.exit(main())

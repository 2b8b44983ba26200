"""Issue 36's embeddings benchmark: the library's generator against openai-python, one run.

``python -m benchmarks.embeddings`` starts the loopback server (``embeddings_server``, pinned
to the second CPU), then measures every client ``--runs`` times, each run of each client in a
fresh process (``embeddings_clients``, pinned to the first CPU) so that its peak RSS is its
own; the clients' order is rotated from run to run, to spread drift over all of them. The
table gives each client's median CPU per vector and its ratio to openai-python's median on
the same wire form in the same run (``REFERENCES``), the peak and retained RSS growth while
holding every vector and their ratio to the vectors' raw float32 size, and the number of
vectors that differed from the server's (any is a failure: exit code 1). ``--profile DIR``
adds, after the measured runs, one cProfile (CPU clock) and one tracemalloc run of each
client to ``DIR`` (CPU only for openai-python: tracemalloc over its 10 million float objects
takes many minutes).

Targets (issue 36): CPU per vector <= 0.5x openai-python's; peak RSS for holding the vectors
<= 1.2x their raw size (``count x dimensions x 4`` bytes).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.embeddings_clients import CLIENTS, REFERENCES
from benchmarks.embeddings_server import DIMENSIONS, EmbeddingsServer
from benchmarks.sse_server import child_env

__all__ = ["CPU_TARGET", "RSS_TARGET", "main", "render", "summarise"]

CPU_TARGET = 0.5
RSS_TARGET = 1.2
_ROOT = Path(__file__).resolve().parent.parent


def run_client(
    name: str, base: str, *, count: int, batch: int, dimensions: int, profile: str | None = None
) -> dict[str, Any]:
    """One measured run of client ``name`` in a fresh process (pinned to CPU 0)."""
    command = [sys.executable, "-m", "benchmarks.embeddings_clients", "--client", name]
    command += ["--base", base, "--count", str(count), "--batch", str(batch)]
    command += ["--dimensions", str(dimensions), "--cpu", "0"]
    if profile is not None:
        command += ["--profile", profile]
    done = subprocess.run(
        command, cwd=_ROOT, env=child_env(), capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{name} failed ({done.returncode}): {done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def summarise(runs: dict[str, list[dict[str, Any]]], raw_bytes: int) -> list[dict[str, Any]]:
    """One row per client: medians over its runs, ratios to its wire form's openai-python
    row (absent when that row was not measured) and to the raw size."""
    medians = {
        name: {
            key: statistics.median(run[key] for run in results)
            for key in ("cpu_s", "peak_growth_kib", "retained_kib", "wall_s")
        }
        for name, results in runs.items()
    }
    rows = []
    for name, results in runs.items():
        count = results[0]["count"]
        median = medians[name]
        reference = medians.get(REFERENCES[CLIENTS[name].form])
        rows.append(
            {
                "client": name,
                "label": CLIENTS[name].label,
                "form": CLIENTS[name].form,
                "cpu_us_per_vector": median["cpu_s"] / count * 1e6,
                "cpu_us_runs": [run["cpu_s"] / count * 1e6 for run in results],
                "cpu_ratio": median["cpu_s"] / reference["cpu_s"] if reference else None,
                "peak_mb": median["peak_growth_kib"] * 1024 / 1e6,
                "peak_mb_runs": [run["peak_growth_kib"] * 1024 / 1e6 for run in results],
                "peak_over_raw": median["peak_growth_kib"] * 1024 / raw_bytes,
                "retained_over_raw": median["retained_kib"] * 1024 / raw_bytes,
                "wall_s": median["wall_s"],
                "problems": sorted({p for run in results for p in run["problems"]})[:5],
            }
        )
    return rows


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def render(rows: Sequence[dict[str, Any]], raw_bytes: int) -> str:
    """The Markdown table, then a PASS/FAIL line per library row and target."""
    lines = [
        "| client | wire | CPU µs/vector (runs) | CPU vs openai-python, same wire | "
        "peak RSS growth MB (runs) | peak / raw | retained / raw | wrong vectors |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        cpu_runs = ", ".join(f"{value:.0f}" for value in row["cpu_us_runs"])
        peak_runs = ", ".join(f"{value:.1f}" for value in row["peak_mb_runs"])
        lines.append(
            f"| {row['label']} | {row['form']} | {row['cpu_us_per_vector']:.1f} ({cpu_runs}) | "
            f"{_ratio(row['cpu_ratio'])} | {row['peak_mb']:.1f} ({peak_runs}) | "
            f"{row['peak_over_raw']:.2f}x | {row['retained_over_raw']:.2f}x | "
            f"{len(row['problems'])} |"
        )
    lines += ["", f"raw float32 size of the vectors: {raw_bytes / 1e6:.2f} MB"]
    for row in rows:
        if row["client"].startswith("openai"):
            continue
        cpu = row["cpu_ratio"]
        cpu_verdict = "n/a" if cpu is None else ("PASS" if cpu <= CPU_TARGET else "FAIL")
        rss_verdict = "PASS" if row["peak_over_raw"] <= RSS_TARGET else "FAIL"
        lines.append(
            f"{row['client']}: CPU {_ratio(cpu)} (<= {CPU_TARGET}x) {cpu_verdict}; "
            f"peak RSS {row['peak_over_raw']:.2f}x raw (<= {RSS_TARGET}x) {rss_verdict}"
        )
    return "\n".join(lines)


def _uptime() -> str:
    try:
        with open("/proc/loadavg", encoding="ascii") as loadavg:
            return "load average " + " ".join(loadavg.read().split()[:3])
    except OSError:
        return "load average unknown"


def _measure_all(args: argparse.Namespace, base: str) -> dict[str, list[dict[str, Any]]]:
    names: list[str] = args.clients
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for run in range(args.runs):
        order = names[run % len(names) :] + names[: run % len(names)]
        for name in order:
            result = run_client(
                name, base, count=args.count, batch=args.batch, dimensions=args.dimensions
            )
            runs[name].append(result)
            sys.stderr.write(
                f"run {run + 1} {name}: {result['cpu_s']:.2f} s CPU, "
                f"{result['peak_growth_kib'] / 1024:.1f} MiB peak\n"
            )
    return runs


def _profile_all(args: argparse.Namespace, base: str) -> None:
    directory = Path(args.profile)
    directory.mkdir(parents=True, exist_ok=True)
    for name in args.clients:
        # tracemalloc over openai-python's 10 million float objects takes many minutes and
        # gigabytes; its memory is plain to see without it (32 bytes a float and its pointer)
        kinds = ("cpu",) if name.startswith("openai") else ("cpu", "memory")
        for kind in kinds:
            result = run_client(
                name,
                base,
                count=args.count,
                batch=args.batch,
                dimensions=args.dimensions,
                profile=kind,
            )
            (directory / f"embeddings-{name}-{kind}.txt").write_text(result["profile"] or "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--dimensions", type=int, default=DIMENSIONS)
    parser.add_argument("--clients", nargs="+", choices=sorted(CLIENTS), default=list(CLIENTS))
    parser.add_argument("--profile", metavar="DIR", default=None)
    parser.add_argument("--json", default=str(_ROOT / "benchmarks/results/embeddings.json"))
    args = parser.parse_args(argv)
    raw_bytes = args.count * args.dimensions * 4
    load_before = _uptime()
    started = time.strftime("%Y-%m-%d %H:%M")
    with EmbeddingsServer(cpu=1, dimensions=args.dimensions) as base:
        runs = _measure_all(args, base)
        if args.profile:
            _profile_all(args, base)
    rows = summarise(runs, raw_bytes)
    header = (
        f"embeddings, {started}: {args.count} texts, {args.dimensions} dims, batch "
        f"{args.batch}, median of {args.runs}; {load_before} before, {_uptime()} after"
    )
    print(header + "\n\n" + render(rows, raw_bytes))
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"header": header, "rows": rows, "runs": runs}))
    return 1 if any(row["problems"] for row in rows) else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())

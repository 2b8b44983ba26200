"""The gateway benchmark's figures: process-tree CPU, percentiles, the table and the bars.

**CPU per chunk** of a proxy is the CPU time (user + system) of its process and every
descendant over the phase it is driven, read from ``/proc/<pid>/stat`` (``utime``, ``stime``,
and ``cutime``/``cstime`` for children it reaped), divided by the token chunks the backend sent
through it (streams x chunks): the same unit of work for every target, whatever a proxy merges
or splits on the way out. **Added TTFT** is a difference of percentiles (the proxy's p50 minus
direct's p50, likewise p99): the requests of two phases cannot be paired one to one.
**Last start** is when the last chat request reached the backend, as a fraction of the phase's
wall time, from the load generator's first request to the end of its last stream.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.gateway_client import LoadResult

__all__ = [
    "BARS",
    "PhaseResult",
    "Row",
    "bar_lines",
    "percentile",
    "render",
    "rows",
    "tree_cpu_seconds",
]

DIRECT = "direct"
GATEWAY = "gateway"
LITELLM = "litellm"
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

BARS = {"cpu_ratio": 0.2, "added_p50_ms": 2.0, "last_start": 0.35}
"""Issue 35's targets: CPU per chunk <= 0.2x LiteLLM's, added p50 TTFT <= 2 ms, the last
request started within the first 35 % of the wall time."""


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100), linear between closest ranks (numpy's default)."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _stat_fields(pid: int) -> list[str] | None:
    """``/proc/<pid>/stat`` after the command name (which may hold spaces and parentheses)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            text = stat.read()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def _children(pid: int) -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(int(entry))
            if fields is not None:
                tree.setdefault(int(fields[1]), []).append(int(entry))
    return tree


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of ``pid`` and its live descendants (with the children they reaped)."""
    tree = _children(pid)
    total = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        fields = _stat_fields(current)
        if fields is not None:
            # fields[0] is the state (stat field 3): utime is field 14, so index 11.
            total += sum(int(value) for value in fields[11:15])
        pending.extend(tree.get(current, ()))
    return total / _TICKS


@dataclass(slots=True)
class PhaseResult:
    """One target driven once by the load generator."""

    target: str
    load: LoadResult
    chunks: int
    proxy_cpu: float | None
    """The proxy's CPU seconds over the phase; ``None`` for direct."""
    backend_cpu: float
    arrivals: list[float] = field(default_factory=list)

    @property
    def last_start(self) -> float | None:
        if not self.arrivals or self.load.wall <= 0:
            return None
        return (max(self.arrivals) - self.load.started) / self.load.wall

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "chunks": self.chunks,
            "proxy_cpu": self.proxy_cpu,
            "backend_cpu": self.backend_cpu,
            "arrivals": self.arrivals,
            "load": self.load.to_json(),
        }


@dataclass(frozen=True, slots=True)
class Row:
    target: str
    streams: int
    failed: int
    first_error: str | None
    cpu_us_per_chunk: float | None
    ttft_p50: float
    ttft_p99: float
    last_start: float | None
    wall: float
    delivered: tuple[int, int]
    """Fewest and most content chunks a stream received."""
    backend_us_per_chunk: float
    client_us_per_chunk: float
    arrival_p50: float
    """Median time from the phase's start to a request's arrival at the backend."""
    ratio: float | None = None
    added_p50: float | None = None
    added_p99: float | None = None


def _row(target: str, phases: Sequence[PhaseResult]) -> Row:
    records = [r for phase in phases for r in phase.load.records]
    failed = [r for r in records if r.error is not None]
    ttfts = [r.ttft for r in records if r.ttft is not None]
    sent = sum(len(p.load.records) * p.chunks for p in phases) or 1
    cpus = [p.proxy_cpu for p in phases if p.proxy_cpu is not None]
    starts = [p.last_start for p in phases if p.last_start is not None]
    delivered = [r.chunks for r in records] or [0]
    arrivals = [t - p.load.started for p in phases for t in p.arrivals]
    return Row(
        target=target,
        streams=len(records),
        failed=len(failed),
        first_error=failed[0].error if failed else None,
        cpu_us_per_chunk=sum(cpus) / sent * 1e6 if cpus else None,
        ttft_p50=percentile(ttfts, 50),
        ttft_p99=percentile(ttfts, 99),
        last_start=max(starts) if starts else None,
        wall=sum(p.load.wall for p in phases) / len(phases),
        delivered=(min(delivered), max(delivered)),
        backend_us_per_chunk=sum(p.backend_cpu for p in phases) / sent * 1e6,
        client_us_per_chunk=sum(p.load.cpu for p in phases) / sent * 1e6,
        arrival_p50=percentile(arrivals, 50),
    )


def rows(phases: Sequence[PhaseResult]) -> list[Row]:
    """One row per target (its phases pooled), with ratio and added TTFT filled in."""
    by_target: dict[str, list[PhaseResult]] = {}
    for phase in phases:
        by_target.setdefault(phase.target, []).append(phase)
    made = {name: _row(name, group) for name, group in by_target.items()}
    direct = made.get(DIRECT)
    litellm = made.get(LITELLM)
    out = []
    for row in made.values():
        ratio = added_p50 = added_p99 = None
        if litellm and litellm.cpu_us_per_chunk and row.cpu_us_per_chunk is not None:
            ratio = row.cpu_us_per_chunk / litellm.cpu_us_per_chunk
        if direct is not None and row is not direct:
            added_p50 = row.ttft_p50 - direct.ttft_p50
            added_p99 = row.ttft_p99 - direct.ttft_p99
        out.append(
            Row(**{**_fields(row), "ratio": ratio, "added_p50": added_p50, "added_p99": added_p99})
        )
    return out


def _fields(row: Row) -> dict[str, Any]:
    return {name: getattr(row, name) for name in Row.__slots__}


def _ms(seconds: float | None) -> str:
    return "—" if seconds is None or math.isnan(seconds) else f"{seconds * 1e3:,.1f}"


def _num(value: float | None, spec: str) -> str:
    return "—" if value is None else format(value, spec)


def render(table: Sequence[Row]) -> str:
    """The markdown table the README shows."""
    lines = [
        "| target | streams ok | CPU µs/chunk | ratio to LiteLLM | TTFT p50 ms | TTFT p99 ms "
        "| added p50 ms | added p99 ms | reached backend p50 ms | last start | wall s "
        "| content chunks/stream |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in table:
        low, high = row.delivered
        chunks = str(low) if low == high else f"{low}-{high}"
        lines.append(
            f"| {row.target} | {row.streams - row.failed}/{row.streams} "
            f"| {_num(row.cpu_us_per_chunk, ',.1f')} | {_num(row.ratio, '.3f')} "
            f"| {_ms(row.ttft_p50)} | {_ms(row.ttft_p99)} | {_ms(row.added_p50)} "
            f"| {_ms(row.added_p99)} | {_ms(row.arrival_p50)} | {_num(row.last_start, '.1%')} "
            f"| {row.wall:.1f} | {chunks} |"
        )
    return "\n".join(lines)


def bar_lines(table: Sequence[Row], target: str = GATEWAY) -> list[str]:
    """Issue 35's three bars for ``target``, PASS/FAIL/n/a each, and any failed stream."""
    row = next((r for r in table if r.target == target), None)
    if row is None:
        return [f"{target}: not measured"]

    def verdict(value: float | None, limit: float) -> str:
        return "n/a" if value is None else ("PASS" if value <= limit else "FAIL")

    added = None if row.added_p50 is None else row.added_p50 * 1e3
    lines = [
        f"CPU per chunk <= {BARS['cpu_ratio']}x LiteLLM's: {_num(row.ratio, '.3f')}x "
        f"{verdict(row.ratio, BARS['cpu_ratio'])}",
        f"added p50 TTFT <= {BARS['added_p50_ms']} ms: {_num(added, '.1f')} ms "
        f"{verdict(added, BARS['added_p50_ms'])}",
        f"last request starts within {BARS['last_start']:.0%} of wall time: "
        f"{_num(row.last_start, '.1%')} {verdict(row.last_start, BARS['last_start'])}",
    ]
    for other in table:
        if other.failed:
            lines.append(f"{other.target}: {other.failed} streams failed, e.g. {other.first_error}")
    return lines

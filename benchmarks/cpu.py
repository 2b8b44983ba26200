"""Client CPU per chunk, clients interleaved, every outcome checked.

For each repetition and each scenario, every client streams the scenario once, in an order
rotated per (repetition, scenario) so that no client always runs first or last: slow drift of the
machine (frequency, the server's cache, the allocator) spreads over all clients alike. CPU time is
``time.process_time()`` of this process around one ``StreamFn`` call; the server runs in another
process, so it is not counted. ``gc.collect()`` runs before each timed call, so one client's
garbage is not collected on another's clock; the collector stays on during the call, because what
a client makes the collector do is part of its cost.

Correctness is not sampled: every call's outcome is compared with what that client must produce.
"""

from __future__ import annotations

import gc
import json
import statistics
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

from benchmarks.clients import ClientSpec, StreamFn
from benchmarks.scenarios import GeneratedStream, Outcome, Scenario, generate

__all__ = ["CpuResult", "Mismatch", "describe_mismatch", "measure_cpu"]

_WARMUP_N = 200


@dataclass(frozen=True, slots=True)
class Mismatch:
    client: str
    scenario: str
    detail: str


@dataclass(slots=True)
class CpuResult:
    runs: int
    events: dict[str, int] = field(default_factory=dict)
    """Scenario id → SSE events in its stream (role, deltas, finish, usage, ``[DONE]``)."""
    cpu_seconds: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    """Client name → scenario id → CPU seconds of each timed run."""
    wall_seconds: dict[str, dict[str, list[float]]] = field(default_factory=dict)
    mismatches: list[Mismatch] = field(default_factory=list)

    def us_per_chunk(self, client: str, scenario: str) -> float | None:
        samples = self.cpu_seconds.get(client, {}).get(scenario)
        if not samples:
            return None
        return statistics.median(samples) / self.events[scenario] * 1e6

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "events": self.events,
            "cpu_seconds": self.cpu_seconds,
            "wall_seconds": self.wall_seconds,
            "mismatches": [
                {"client": m.client, "scenario": m.scenario, "detail": m.detail}
                for m in self.mismatches
            ],
        }


def describe_mismatch(expected: Outcome, got: Outcome) -> str | None:
    """``None`` when ``got`` is what was expected, else what differs first.

    Tool-call arguments match when the texts are equal or, failing that, parse to equal JSON
    (a client that recovers a call from text may re-serialise its arguments).
    """
    for name in ("text", "reasoning"):
        want, have = getattr(expected, name), getattr(got, name)
        if want != have:
            at = next(
                (i for i, (a, b) in enumerate(zip(want, have, strict=False)) if a != b),
                min(len(want), len(have)),
            )
            return (
                f"{name} differs at {at} (expected {len(want)} chars, got {len(have)}): "
                f"expected {want[at : at + 30]!r}, got {have[at : at + 30]!r}"
            )
    if len(expected.tool_arguments) != len(got.tool_arguments):
        return (
            f"expected {len(expected.tool_arguments)} tool call(s), got {len(got.tool_arguments)}"
        )
    for i, (want, have) in enumerate(zip(expected.tool_arguments, got.tool_arguments, strict=True)):
        if want != have and not _same_json(want, have):
            return f"tool call {i} arguments differ: expected {want[:60]!r}…, got {have[:60]!r}…"
    return None


def _same_json(a: str, b: str) -> bool:
    try:
        return bool(json.loads(a) == json.loads(b))
    except ValueError:
        return False


async def measure_cpu(
    specs: Sequence[ClientSpec],
    scenarios: Sequence[Scenario],
    base: str,
    *,
    runs: int,
    warmup: bool = True,
) -> CpuResult:
    """Time every runnable client on every scenario ``runs`` times, after an untimed pass."""
    runnable = [spec for spec in specs if spec.session is not None]
    streams: dict[str, GeneratedStream] = {s.id: generate(s) for s in scenarios}
    result = CpuResult(runs=runs, events={i: len(s.events) for i, s in streams.items()})
    for spec in runnable:
        result.cpu_seconds[spec.name] = {s.id: [] for s in scenarios}
        result.wall_seconds[spec.name] = {s.id: [] for s in scenarios}
    failed: set[tuple[str, str]] = set()

    def check(spec: ClientSpec, scenario: Scenario, got: Outcome) -> None:
        detail = describe_mismatch(spec.expected(streams[scenario.id]), got)
        if detail is not None and (spec.name, scenario.id) not in failed:
            failed.add((spec.name, scenario.id))
            result.mismatches.append(Mismatch(spec.name, scenario.id, detail))

    async with AsyncExitStack() as stack:
        functions: dict[str, StreamFn] = {}
        for spec in runnable:
            assert spec.session is not None
            functions[spec.name] = await stack.enter_async_context(spec.session(base, 1))
        if warmup:  # code paths, connections; a short stream of each scenario suffices
            for scenario in scenarios:
                small = Scenario(scenario.backend, scenario.kind, min(scenario.n, _WARMUP_N))
                expected = generate(small)
                for spec in runnable:
                    got = await functions[spec.name](small)
                    detail = describe_mismatch(spec.expected(expected), got)
                    if detail is not None:
                        result.mismatches.append(Mismatch(spec.name, small.id, detail))
        # Everything alive now (imported modules of every client, the generated streams) is
        # moved out of the collector's reach: otherwise a client that triggers full collections
        # would pay for traversing the other clients' modules, which a real process lacks.
        gc.collect()
        gc.freeze()
        try:
            for repetition in range(runs):
                for position, scenario in enumerate(scenarios):
                    shift = (repetition + position) % len(runnable)
                    for spec in runnable[shift:] + runnable[:shift]:
                        stream = functions[spec.name]
                        gc.collect()
                        wall = time.perf_counter()
                        cpu = time.process_time()
                        outcome = await stream(scenario)
                        cpu = time.process_time() - cpu
                        wall = time.perf_counter() - wall
                        result.cpu_seconds[spec.name][scenario.id].append(cpu)
                        result.wall_seconds[spec.name][scenario.id].append(wall)
                        check(spec, scenario, outcome)
        finally:
            gc.unfreeze()
    return result

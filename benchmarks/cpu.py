"""Client CPU per chunk, clients interleaved, every outcome checked.

For each repetition and each scenario, every client streams the scenario once, in an order
rotated per (repetition, scenario) so that no client always runs first or last: slow drift of the
machine (frequency, the server's cache, the allocator) spreads over all clients alike. CPU time is
``time.process_time()`` of this process around one ``StreamFn`` call; the server runs in another
process, so it is not counted. ``gc.collect()`` runs before each timed call, so one client's
garbage is not collected on another's clock; the collector stays on during the call, because what
a client makes the collector do is part of its cost.

Correctness is not sampled: every call's outcome is compared with what that client must produce.

A ``--baseline`` client (a spec with a ``revision``) runs in a measuring process of its own, one
per revision (``remote``), which times and checks each call the same way; the rotation above
includes it like any other client, so the baseline rows are interleaved with the current ones.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any

from benchmarks.clients import ClientSpec, Revision, StreamFn
from benchmarks.remote import RemoteClients, Sample
from benchmarks.scenarios import GeneratedStream, Scenario, describe_mismatch, generate

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


async def measure_cpu(
    specs: Sequence[ClientSpec],
    scenarios: Sequence[Scenario],
    base: str,
    *,
    runs: int,
    warmup: bool = True,
    cpu: int | None = None,
) -> CpuResult:
    """Time every runnable client on every scenario ``runs`` times, after an untimed pass.

    ``cpu`` pins the baseline clients' measuring processes (this process is pinned by its
    caller).
    """
    runnable = [spec for spec in specs if spec.session is not None]
    streams: dict[str, GeneratedStream] = {s.id: generate(s) for s in scenarios}
    result = CpuResult(runs=runs, events={i: len(s.events) for i, s in streams.items()})
    for spec in runnable:
        result.cpu_seconds[spec.name] = {s.id: [] for s in scenarios}
        result.wall_seconds[spec.name] = {s.id: [] for s in scenarios}
    failed: set[tuple[str, str]] = set()

    def record(spec: ClientSpec, scenario: Scenario, detail: str | None) -> None:
        if detail is not None and (spec.name, scenario.id) not in failed:
            failed.add((spec.name, scenario.id))
            result.mismatches.append(Mismatch(spec.name, scenario.id, detail))

    async with AsyncExitStack() as stack:
        timed, remotes = await _open(stack, runnable, base, streams, cpu)
        if warmup:  # code paths, connections; a short stream of each scenario suffices
            for scenario in scenarios:
                small = Scenario(scenario.backend, scenario.kind, min(scenario.n, _WARMUP_N))
                for spec in runnable:
                    _, _, detail = await timed[spec.name](small)
                    if detail is not None:
                        result.mismatches.append(Mismatch(spec.name, small.id, detail))
        # Everything alive now (imported modules of every client, the generated streams) is
        # moved out of the collector's reach: otherwise a client that triggers full collections
        # would pay for traversing the other clients' modules, which a real process lacks.
        gc.collect()
        gc.freeze()
        for remote in remotes:
            await remote.freeze(scenarios)
        try:
            for repetition in range(runs):
                for position, scenario in enumerate(scenarios):
                    shift = (repetition + position) % len(runnable)
                    for spec in runnable[shift:] + runnable[:shift]:
                        cpu_seconds, wall, detail = await timed[spec.name](scenario)
                        result.cpu_seconds[spec.name][scenario.id].append(cpu_seconds)
                        result.wall_seconds[spec.name][scenario.id].append(wall)
                        record(spec, scenario, detail)
        finally:
            gc.unfreeze()
    return result


_Timed = Callable[[Scenario], Awaitable[Sample]]
"""One timed, checked stream: ``(cpu seconds, wall seconds, mismatch or None)``."""


async def _open(
    stack: AsyncExitStack,
    runnable: Sequence[ClientSpec],
    base: str,
    streams: dict[str, GeneratedStream],
    cpu: int | None,
) -> tuple[dict[str, _Timed], list[RemoteClients]]:
    """Every client's session, entered on ``stack``: the current ones here, the baseline ones
    in one measuring process per revision."""
    timed: dict[str, _Timed] = {}
    remotes: list[RemoteClients] = []
    by_revision: dict[Revision, list[ClientSpec]] = {}
    for spec in runnable:
        if spec.revision is not None:
            by_revision.setdefault(spec.revision, []).append(spec)
            continue
        assert spec.session is not None
        stream = await stack.enter_async_context(spec.session(base, 1))
        timed[spec.name] = _in_process(spec, stream, streams)
    for revision, group in by_revision.items():
        names = [spec.registry_name for spec in group]
        remote = RemoteClients(revision, names, base, cpu=cpu)
        remotes.append(await stack.enter_async_context(remote))
        for spec in group:
            timed[spec.name] = _in_child(remote, spec.registry_name)
    return timed, remotes


def _in_process(spec: ClientSpec, stream: StreamFn, streams: dict[str, GeneratedStream]) -> _Timed:
    async def timed(scenario: Scenario) -> Sample:
        gc.collect()
        wall = time.perf_counter()
        cpu = time.process_time()
        outcome = await stream(scenario)
        cpu = time.process_time() - cpu
        wall = time.perf_counter() - wall
        expected = streams.get(scenario.id) or generate(scenario)
        return cpu, wall, describe_mismatch(spec.expected(expected), outcome)

    return timed


def _in_child(remote: RemoteClients, name: str) -> _Timed:
    async def timed(scenario: Scenario) -> Sample:
        return await remote.stream(name, scenario)

    return timed

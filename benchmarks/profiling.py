"""cProfile of one client on chosen scenarios: where its per-chunk time goes.

``python benchmarks/run.py --profile`` writes ``results/profile-<backend>-<kind>-<n>.txt`` (top
functions by own time and by cumulative time) for the oaicompat client on text and reasoning.
cProfile inflates per-call overhead, so read shares and call counts, not absolute times.
"""

from __future__ import annotations

import asyncio
import cProfile
import io
import pstats
from collections.abc import Sequence
from pathlib import Path

from benchmarks.clients import ClientSpec
from benchmarks.scenarios import Scenario

__all__ = ["profile_client"]


async def _profile(
    spec: ClientSpec, base: str, scenarios: Sequence[Scenario], repeat: int
) -> dict[str, cProfile.Profile]:
    if spec.session is None:
        raise ValueError(f"{spec.label} cannot run: {spec.unavailable}")
    profiles: dict[str, cProfile.Profile] = {}
    async with spec.session(base, 1) as stream:
        for scenario in scenarios:
            await stream(scenario)  # warm-up
            profiler = cProfile.Profile()
            profiler.enable()
            for _ in range(repeat):
                await stream(scenario)
            profiler.disable()
            profiles[scenario.id] = profiler
    return profiles


def profile_client(
    spec: ClientSpec,
    base: str,
    scenarios: Sequence[Scenario],
    directory: Path,
    *,
    repeat: int = 3,
    top: int = 25,
) -> list[Path]:
    """Profile ``spec`` on each scenario; the report files written."""
    directory.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for scenario_id, profiler in asyncio.run(_profile(spec, base, scenarios, repeat)).items():
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out).strip_dirs()
        out.write(f"{spec.label} on {scenario_id}, {repeat} streams\n\n== by own time ==\n")
        stats.sort_stats(pstats.SortKey.TIME).print_stats(top)
        out.write("\n== by cumulative time ==\n")
        stats.sort_stats(pstats.SortKey.CUMULATIVE).print_stats(top)
        path = directory / f"profile-{scenario_id.replace('/', '-')}.txt"
        path.write_text(out.getvalue())
        written.append(path)
    return written

"""Cold import time of a module, each sample in a fresh interpreter.

The figure is the wall time of the ``import`` statement alone, measured inside the child (so
interpreter start-up is excluded), median of several children. Two settings:

* ``cached``: bytecode already compiled, as after ``pip install`` (pip compiles) or any earlier
  run. The children share a private ``PYTHONPYCACHEPREFIX`` primed by one unmeasured import, so
  the work tree gets no ``__pycache__`` and every module, ours and the dependencies', is treated
  alike. This is the figure held to the target.
* ``environment``: the caller's environment untouched. With ``PYTHONDONTWRITEBYTECODE=1`` (as on
  the development machines) an editable install recompiles our sources on every start, while
  dependencies installed by pip load their bytecode, so this is the import a developer sees.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.sse_server import child_env

__all__ = ["import_heaviest", "measure_import"]

_ROOT = Path(__file__).resolve().parent.parent
_PROBE = (
    "import sys, time\n"
    "t = time.perf_counter()\n"
    "import {module}\n"
    "t = time.perf_counter() - t\n"
    "print(t, len(sys.modules))\n"
)


def _sample(module: str, env: dict[str, str]) -> tuple[float, int]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(module=module)],
        cwd=_ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    seconds, modules = done.stdout.split()
    return float(seconds), int(modules)


def measure_import(modules: list[str], runs: int, *, environment: bool = True) -> dict[str, Any]:
    """``{module: {"cached_ms": …, "environment_ms": …, …}}``, medians of ``runs`` children.

    Samples alternate between modules so that drift affects them alike. ``environment=False``
    skips the second setting (its figure is then ``None``).
    """
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="oaicompat-bench-pycache-") as prefix:
        cached = child_env()
        cached.pop("PYTHONDONTWRITEBYTECODE", None)
        cached["PYTHONPYCACHEPREFIX"] = prefix
        inherited = child_env()
        for module in modules:
            _sample(module, cached)  # compile into the private cache; not measured
        samples: dict[str, dict[str, list[float]]] = {
            m: {"cached": [], "environment": []} for m in modules
        }
        loaded: dict[str, int] = {}
        for _ in range(runs):
            for module in modules:
                seconds, count = _sample(module, cached)
                samples[module]["cached"].append(seconds)
                loaded[module] = count
                if environment:
                    samples[module]["environment"].append(_sample(module, inherited)[0])
    for module in modules:
        results[module] = {
            "cached_ms": statistics.median(samples[module]["cached"]) * 1e3,
            "environment_ms": statistics.median(samples[module]["environment"]) * 1e3
            if environment
            else None,
            "cached_samples_ms": [s * 1e3 for s in samples[module]["cached"]],
            "modules_in_sys_modules": loaded[module],
            "bytecode_writes_disabled": bool(inherited.get("PYTHONDONTWRITEBYTECODE")),
        }
    return results


def import_heaviest(module: str, top: int = 8) -> list[tuple[str, float]]:
    """Where ``import module`` spends its time: self time summed per top-level package, ms.

    From ``-X importtime`` with bytecode cached (the second of two runs).
    """
    env = child_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryDirectory(prefix="oaicompat-bench-pycache-") as prefix:
        env["PYTHONPYCACHEPREFIX"] = prefix
        command = [sys.executable, "-X", "importtime", "-c", f"import {module}"]
        subprocess.run(command, cwd=_ROOT, env=env, capture_output=True, check=True, timeout=120)
        done = subprocess.run(
            command, cwd=_ROOT, env=env, capture_output=True, text=True, check=True, timeout=120
        )
    by_package: dict[str, float] = {}
    for line in done.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) != 3 or not parts[0].strip().isdigit():
            continue  # the header line
        package = parts[2].strip().split(".")[0]
        by_package[package] = by_package.get(package, 0.0) + int(parts[0]) / 1e3
    ranked = sorted(by_package.items(), key=lambda item: item[1], reverse=True)
    return [(name, round(ms, 2)) for name, ms in ranked[:top]]


if __name__ == "__main__":
    print(measure_import(sys.argv[1:] or ["providers"], runs=int(os.environ.get("RUNS", "5"))))

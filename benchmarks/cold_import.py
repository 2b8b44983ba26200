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

__all__ = [
    "FIRST_REQUEST_LIMIT",
    "count_first_request",
    "import_heaviest",
    "measure_first_request",
    "measure_import",
]

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


FIRST_REQUEST_LIMIT = 1.2
"""Issue 21: import + first client + first request within this ratio of the floor's."""

_FIRST_REQUEST = {
    "floor": (
        "import time\n"
        "t = time.perf_counter()\n"
        "import asyncio, httpx, orjson\n"
        "async def main(url):\n"
        "    body = orjson.dumps({{'model': 'bench', 'messages': [{{'role': 'user',"
        " 'content': 'hi'}}], 'stream': True}})\n"
        "    text = []\n"
        "    async with httpx.AsyncClient() as http:\n"
        "        headers = {{'content-type': 'application/json'}}\n"
        "        async with http.stream('POST', url + '/chat/completions', content=body,"
        " headers=headers) as response:\n"
        "            async for line in response.aiter_lines():\n"
        "                if line.startswith('data: ') and line != 'data: [DONE]':\n"
        "                    for choice in orjson.loads(line[6:])['choices']:\n"
        "                        value = choice['delta'].get('content')\n"
        "                        if value:\n"
        "                            text.append(value)\n"
        "    return ''.join(text)\n"
        "out = asyncio.run(main({url!r}))\n"
        "print(time.perf_counter() - t, len(out))\n"
    ),
    "standard pipeline": (
        "import time\n"
        "t = time.perf_counter()\n"
        "import asyncio\n"
        "from providers import ChatResponse, create_chat_client\n"
        "async def main(url):\n"
        "    client = create_chat_client(url, 'bench', backend='vllm')\n"
        "    try:\n"
        "        updates = [u async for u in client.get_streaming_response('hi')]\n"
        "    finally:\n"
        "        await client.aclose()\n"
        "    return ChatResponse.from_updates(updates).text\n"
        "out = asyncio.run(main({url!r}))\n"
        "print(time.perf_counter() - t, len(out))\n"
    ),
}
_FIRST_REQUEST["floor, no CA loading"] = (
    _FIRST_REQUEST["floor"]
    .replace("import asyncio, httpx, orjson\n", "import asyncio, httpx, orjson, ssl\n")
    .replace(
        "httpx.AsyncClient()", "httpx.AsyncClient(verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))"
    )
)
"""The floor with a TLS context that loads no authority: what ``deferred_tls`` does for an
``http://`` endpoint."""


def _at_revision(probe: str, tree: str) -> str:
    """``probe`` importing the library from ``tree`` (an extracted revision), not the work tree."""
    return probe.replace(
        "import asyncio\n", f"import asyncio, sys\nsys.path.insert(0, {tree!r})\n", 1
    )


def measure_first_request(url: str, runs: int, baseline: str | None = None) -> dict[str, Any]:
    """Issue 21's cold start: in a fresh interpreter (bytecode cached), the wall time from the
    first import to the first streamed answer's text, for the httpx + orjson floor and for
    ``create_chat_client`` used as the README shows; median of ``runs``, interleaved.

    A third probe, reported beside the ratio, is the floor skipping what the library skips for
    an ``http://`` endpoint: loading certificate authorities (``providers/transport/
    deferred_tls.py``). Against it the ratio shows the rest of the cold start: imports and the
    first request's own work.
    ``url`` is an OpenAI-style base URL of the benchmark server (``…/v1``)."""
    probes = dict(_FIRST_REQUEST)
    if baseline:  # the same probe on another revision's library, interleaved with the others
        probes["standard pipeline @baseline"] = _at_revision(
            _FIRST_REQUEST["standard pipeline"], baseline
        )
    samples: dict[str, list[float]] = {name: [] for name in probes}
    with tempfile.TemporaryDirectory(prefix="oaicompat-bench-pycache-") as prefix:
        env = child_env()
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = prefix
        for repetition in range(runs + 1):
            for name, probe in probes.items():
                done = subprocess.run(
                    [sys.executable, "-c", probe.format(url=url)],
                    cwd=_ROOT,
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                    timeout=120,
                )
                if repetition:  # the first pass compiles into the private cache
                    samples[name].append(float(done.stdout.split()[0]) * 1e3)
    floor = statistics.median(samples["floor"])
    ours = statistics.median(samples["standard pipeline"])
    plain = statistics.median(samples["floor, no CA loading"])
    extra = {}
    if baseline:
        before = statistics.median(samples["standard pipeline @baseline"])
        extra = {"baseline_ms": before, "after_before": ours / before}
    return {
        **extra,
        "floor_ms": floor,
        "standard_ms": ours,
        "ratio": ours / floor,
        "no_ca_floor_ms": plain,
        "no_ca_ratio": ours / plain,
        "limit": FIRST_REQUEST_LIMIT,
        "samples_ms": samples,
    }


def count_first_request(url: str, trees: list[str]) -> dict[str, int]:
    """The standard-pipeline probe's instructions, counted by valgrind's callgrind, on each of
    ``trees`` (extracted revisions, or the work tree): a fresh interpreter, bytecode cached,
    ``PYTHONHASHSEED=0``. Unlike the wall clock the count does not move with the machine's load
    (it repeats within 0.1M); it includes the interpreter's start-up, about 89M."""
    counts = {}
    with tempfile.TemporaryDirectory(prefix="oaicompat-bench-pycache-") as prefix:
        env = child_env()
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env |= {"PYTHONPYCACHEPREFIX": prefix, "PYTHONHASHSEED": "0"}
        for tree in trees:
            probe = _at_revision(_FIRST_REQUEST["standard pipeline"], tree).format(url=url)
            command = [sys.executable, "-c", probe]
            subprocess.run(command, cwd=tree, env=env, capture_output=True, check=True)
            output = f"--callgrind-out-file={prefix}/callgrind.out"
            done = subprocess.run(
                ["valgrind", "--tool=callgrind", output, *command],
                cwd=tree,
                env=env,
                capture_output=True,
                text=True,
                check=True,
                timeout=600,
            )
            collected = done.stderr.split("Collected : ")[1].split()[0]
            counts[tree] = int(collected)
    return counts


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


def _first_request_only(runs: int) -> None:
    """Issue 21's first-request figure alone, against the benchmark server (as ``run.py``
    measures it, without the minutes of the other benchmarks)."""
    from benchmarks.sse_server import ServerProcess, pin_to_cpu

    pin_to_cpu(0)  # the server is pinned to the other CPU, as in run.py
    with ServerProcess(cpu=1) as base:
        result = measure_first_request(
            f"{base}/vllm/text-20/v1", runs, os.environ.get("BASELINE_TREE")
        )
    verdict = "PASS" if result["ratio"] <= FIRST_REQUEST_LIMIT else "FAIL"
    print(
        f"first request: floor {result['floor_ms']:.1f} ms, standard pipeline "
        f"{result['standard_ms']:.1f} ms, {result['ratio']:.2f}x "
        f"(limit {FIRST_REQUEST_LIMIT}x, median of {runs}): {verdict}; against the floor "
        f"loading no certificate authorities ({result['no_ca_floor_ms']:.1f} ms): "
        f"{result['no_ca_ratio']:.2f}x"
    )
    if "baseline_ms" in result:
        print(
            f"  the same probe on BASELINE_TREE: {result['baseline_ms']:.1f} ms; after/before "
            f"{result['after_before']:.3f}"
        )


def _first_request_instructions() -> None:
    """The first-request probe's instructions on the work tree and on ``BASELINE_TREE``."""
    from benchmarks.sse_server import ServerProcess

    trees = [str(_ROOT), *filter(None, [os.environ.get("BASELINE_TREE")])]
    with ServerProcess() as base:
        counts = count_first_request(f"{base}/vllm/text-20/v1", trees)
    for tree, count in counts.items():
        print(f"first request, instructions: {count:,} ({tree})")


if __name__ == "__main__":
    # ``python -m benchmarks.cold_import [module …]``: cold import times (RUNS children, default
    # 5); ``python -m benchmarks.cold_import --first-request``: issue 21's first-request ratio;
    # ``… --first-request-instructions``: the same probe's instruction count (valgrind).
    if sys.argv[1:2] == ["--first-request"]:
        _first_request_only(int(os.environ.get("RUNS", "15")))
    elif sys.argv[1:2] == ["--first-request-instructions"]:
        _first_request_instructions()
    else:
        print(measure_import(sys.argv[1:] or ["providers"], runs=int(os.environ.get("RUNS", "5"))))

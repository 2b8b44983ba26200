"""The clients of the embeddings benchmark, and one measured run of one of them.

Each client embeds a list of texts ``batch`` at a time and returns what a user of it holds
afterwards: the library's ``GeneratedEmbeddings`` (one ``Embedding`` with a float32
``EmbeddingVector`` per text), or openai-python's ``embedding`` of each item, a list of Python
floats (the response objects are dropped, as a user keeping the vectors would). Both are
used the way their documentation shows: ``generate(texts)`` on the library's generator (which
splits the list into requests of ``max_batch_size``), ``embeddings.create(input=batch, ...)``
in a loop for openai-python, on ``AsyncOpenAI`` since the generator is asynchronous.

``measure`` runs a client in the current process, which should be fresh (``python -m
benchmarks.embeddings_clients``, one process per client and run, JSON on stdout): after the
imports, the client's construction and a warm-up call (connection, lazy imports such as
openai-python's numpy), the peak-RSS counter is reset (``/proc/self/clear_refs``) and the RSS
noted; then the whole list is embedded under ``time.process_time``; the new peak (``VmHWM``)
minus that RSS is the peak growth, and the RSS while the vectors are still held is the
retained growth. Every vector is then compared with the server's, bit for bit as float32.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import io
import json
import pstats
import random
import resource
import sys
import time
import tracemalloc
from array import array
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from benchmarks.embeddings_server import MODEL_ID, vector_bytes, vector_index

__all__ = [
    "CLIENTS",
    "REFERENCES",
    "EmbeddingClient",
    "check_vectors",
    "main",
    "measure",
    "texts_for",
]

EmbedFn = Callable[[list[str]], Awaitable[Any]]
_WORDS = (
    "agent",
    "memory",
    "holds",
    "passages",
    "retrieved",
    "for",
    "a",
    "question",
    "about",
    "the",
    "weather",
    "the",
    "schedule",
    "a",
    "recipe",
    "or",
    "an",
    "invoice",
    "each",
    "passage",
    "is",
    "embedded",
    "once",
    "stored",
    "with",
    "its",
    "vector",
    "and",
    "compared",
    "by",
    "cosine",
    "similarity",
    "when",
    "the",
    "next",
    "question",
    "arrives",
    "from",
    "the",
    "user",
)


def texts_for(count: int, seed: int = 36) -> list[str]:
    """``count`` distinct texts of about 40 tokens (38 words and a full stop)."""
    rng = random.Random(seed)
    return [f"passage {i}: " + " ".join(rng.choices(_WORDS, k=36)) + "." for i in range(count)]


@dataclass(frozen=True)
class EmbeddingClient:
    """One benchmarked client: ``open(base, batch)`` yields its embed function, and
    ``vectors(held)`` the vectors of what that function returned, in the texts' order."""

    name: str
    label: str
    form: str
    """What travels on the wire: ``base64`` or ``float``."""
    open: Callable[[str, int], AbstractAsyncContextManager[EmbedFn]]
    vectors: Callable[[Any], Sequence[Any]]


def _generator_opener(
    form: str | None, pipeline: bool
) -> Callable[[str, int], AbstractAsyncContextManager[EmbedFn]]:
    @asynccontextmanager
    async def opened(base: str, batch: int) -> AsyncIterator[EmbedFn]:
        from providers import OpenAiCompatibleEmbeddingGenerator, create_embedding_generator

        options: dict[str, Any] = {"backend": "vllm", "max_batch_size": batch}
        if form is not None:
            options["encoding_format"] = form
        if pipeline:
            generator = create_embedding_generator(f"{base}/v1", MODEL_ID, **options)
        else:
            generator = OpenAiCompatibleEmbeddingGenerator(f"{base}/v1", MODEL_ID, **options)
        try:
            yield generator.generate
        finally:
            await generator.aclose()

    return opened


def _openai_opener(form: str | None) -> Callable[[str, int], AbstractAsyncContextManager[EmbedFn]]:
    @asynccontextmanager
    async def opened(base: str, batch: int) -> AsyncIterator[EmbedFn]:
        from openai import AsyncOpenAI

        client = AsyncOpenAI(base_url=f"{base}/v1", api_key="benchmark", max_retries=0)
        extra: dict[str, Any] = {} if form is None else {"encoding_format": form}

        async def embed(texts: list[str]) -> list[list[float]]:
            held: list[list[float]] = []
            for start in range(0, len(texts), batch):
                answer = await client.embeddings.create(
                    input=texts[start : start + batch], model=MODEL_ID, **extra
                )
                held.extend(item.embedding for item in answer.data)
            return held

        try:
            yield embed
        finally:
            await client.close()

    return opened


def _ours(held: Any) -> Sequence[Any]:
    return [embedding.vector for embedding in held]


def _theirs(held: Any) -> Sequence[Any]:
    return held  # type: ignore[no-any-return]


CLIENTS: dict[str, EmbeddingClient] = {
    client.name: client
    for client in (
        EmbeddingClient(
            "ours-base64",
            "OpenAiCompatibleEmbeddingGenerator, base64",
            "base64",
            _generator_opener("base64", pipeline=False),
            _ours,
        ),
        EmbeddingClient(
            "ours-float",
            "OpenAiCompatibleEmbeddingGenerator, float",
            "float",
            _generator_opener("float", pipeline=False),
            _ours,
        ),
        EmbeddingClient(
            "pipeline",
            "create_embedding_generator (vllm row: base64)",
            "base64",
            _generator_opener(None, pipeline=True),
            _ours,
        ),
        EmbeddingClient(
            "openai-default",
            "openai-python embeddings.create, default (base64, decoded to floats)",
            "base64",
            _openai_opener(None),
            _theirs,
        ),
        EmbeddingClient(
            "openai-float",
            "openai-python embeddings.create, encoding_format='float'",
            "float",
            _openai_opener("float"),
            _theirs,
        ),
    )
}
REFERENCES = {"base64": "openai-default", "float": "openai-float"}
"""The openai-python row each wire form's rows are compared with."""


def _float32(vector: Any) -> bytes:
    if hasattr(vector, "to_bytes"):
        return vector.to_bytes()  # type: ignore[no-any-return]
    values = array("f", vector)
    if sys.byteorder != "little":
        values.byteswap()
    return values.tobytes()


def check_vectors(texts: Sequence[str], vectors: Sequence[Any], dimensions: int) -> list[str]:
    """What differs from the server's vectors (empty when every one is right), at most 5."""
    problems: list[str] = []
    if len(vectors) != len(texts):
        problems.append(f"{len(vectors)} vectors for {len(texts)} texts")
    expected: dict[int, bytes] = {}
    for position, (text, vector) in enumerate(zip(texts, vectors, strict=False)):
        index = vector_index(text)
        if index not in expected:
            expected[index] = vector_bytes(index, dimensions)
        if _float32(vector) != expected[index]:
            problems.append(f"vector {position} differs from the server's")
        if len(problems) >= 5:
            break
    return problems


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


def _peak_kib(reset: bool) -> tuple[int, str]:
    if reset:
        return _status_kib("VmHWM") or 0, "VmHWM after clear_refs"
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "ru_maxrss (lower bound)"


async def measure(
    client: EmbeddingClient,
    base: str,
    *,
    count: int,
    batch: int,
    dimensions: int,
    profile: str | None = None,
) -> dict[str, Any]:
    """One measured run (see the module docstring); ``profile`` (``cpu``, ``memory``) adds
    a cProfile (on the CPU clock) or tracemalloc report under ``"profile"``."""
    texts = texts_for(count)
    async with client.open(base, batch) as embed:
        warm = await embed(texts[:8])
        problems = check_vectors(texts[:8], client.vectors(warm), dimensions)
        del warm
        gc.collect()
        reset = _reset_peak()
        rss_before = _status_kib("VmRSS") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        peak_before = _peak_kib(reset)[0]
        profiler = _start_profile(profile)
        cpu, wall = time.process_time(), time.perf_counter()
        held = await embed(texts)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        report = _stop_profile(profile, profiler)
        peak, method = _peak_kib(reset)
        retained = (_status_kib("VmRSS") or 0) - rss_before
        problems += check_vectors(texts, client.vectors(held), dimensions)
    base_kib = rss_before if reset else peak_before
    return {
        "client": client.name,
        "count": count,
        "batch": batch,
        "dimensions": dimensions,
        "cpu_s": cpu,
        "wall_s": wall,
        "rss_before_kib": rss_before,
        "peak_growth_kib": max(0, peak - base_kib),
        "retained_kib": retained,
        "rss_method": method,
        "problems": problems,
        "profile": report,
    }


def _start_profile(kind: str | None) -> cProfile.Profile | None:
    if kind == "memory":
        tracemalloc.start(8)
    if kind != "cpu":
        return None
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    return profiler


def _stop_profile(kind: str | None, profiler: cProfile.Profile | None) -> str | None:
    if profiler is not None:
        profiler.disable()
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats("tottime").print_stats(25)
        stats.sort_stats("cumulative").print_stats(25)
        return out.getvalue()
    if kind != "memory":
        return None
    current, peak = tracemalloc.get_traced_memory()
    snapshot = tracemalloc.take_snapshot()
    tracemalloc.stop()
    lines = [f"traced now {current / 1e6:.2f} MB, traced peak {peak / 1e6:.2f} MB", ""]
    lines += [str(stat) for stat in snapshot.statistics("lineno")[:15]]
    lines += ["", "by traceback, largest:"]
    for stat in snapshot.statistics("traceback")[:3]:
        lines += [f"{stat.size / 1e6:.2f} MB in {stat.count} blocks", *stat.traceback.format()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="one measured run of one embeddings client")
    parser.add_argument("--client", choices=sorted(CLIENTS), required=True)
    parser.add_argument("--base", required=True)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--dimensions", type=int, default=1024)
    parser.add_argument("--cpu", type=int, default=None)
    parser.add_argument("--profile", choices=("cpu", "memory"), default=None)
    args = parser.parse_args(argv)
    from benchmarks.clients import silence_library_logs
    from benchmarks.sse_server import pin_to_cpu

    pin_to_cpu(args.cpu)
    silence_library_logs()  # (the pipeline's telemetry layer logs one event per call)
    result = asyncio.run(
        measure(
            CLIENTS[args.client],
            args.base,
            count=args.count,
            batch=args.batch,
            dimensions=args.dimensions,
            profile=args.profile,
        )
    )
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()

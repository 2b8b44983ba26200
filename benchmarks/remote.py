"""A measuring process for the ``--baseline`` clients of one revision.

One process cannot import two versions of ``providers``, so the baseline clients run in a child
whose ``sys.path`` starts with the revision's tree (``baseline.use_tree``). The parent keeps the
schedule: it asks for one timed stream at a time, in the same rotation as its own clients, so the
baseline rows are interleaved with the current ones exactly as the current clients are with each
other. The child times the call the way ``cpu`` does in process (``gc.collect()`` first, then
``time.process_time()`` of the child around the call) and checks the outcome itself; only three
numbers and the mismatch, if any, come back.

Protocol: one JSON object per line on stdin, one reply per line on the channel (the original
stdout; the child's ``sys.stdout`` goes to stderr, so nothing the library prints can corrupt it).
Requests: ``{"op": "stream", "client": …, "scenario": …}`` → ``{"cpu": s, "wall": s, "mismatch":
str | null}``; ``{"op": "freeze", "scenarios": [...]}`` (build those scenarios' expected outcomes,
then ``gc.collect(); gc.freeze()``, as ``cpu`` does after its warm-up) → ``{"ok": true}``;
``{"op": "exit"}``. A request that raises is answered ``{"error": "…"}``.

Reading stdin blocks the event loop between calls on purpose: a reader thread would be one more
thread in the measured process, and nothing needs the loop then.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from benchmarks.baseline import use_tree
from benchmarks.clients import ClientSpec, Revision, StreamFn, default_clients, silence_library_logs
from benchmarks.scenarios import GeneratedStream, Scenario, describe_mismatch, generate
from benchmarks.sse_server import child_env, pin_to_cpu

__all__ = ["RemoteClients", "Sample"]

_ROOT = Path(__file__).resolve().parent.parent
Sample = tuple[float, float, str | None]
"""CPU seconds, wall seconds, and the mismatch (``None`` when the outcome was right)."""


class RemoteClients:
    """``async with RemoteClients(revision, names, base) as remote``: ``names`` (registry names
    of ``default_clients()``) on ``revision``'s library, each session entered once in the child.
    """

    def __init__(
        self, revision: Revision, names: Sequence[str], base: str, *, cpu: int | None = None
    ) -> None:
        self._command = [
            sys.executable,
            "-m",
            "benchmarks.remote",
            "--tree",
            str(revision.tree),
            "--base",
            base,
            "--clients",
            *names,
        ]
        if cpu is not None:
            self._command += ["--cpu", str(cpu)]
        self._revision = revision
        self._process: asyncio.subprocess.Process | None = None
        self._stderr: IO[bytes] | None = None
        self.providers_file = ""
        """Where the child imported ``providers`` from (inside ``revision.tree``)."""

    async def __aenter__(self) -> RemoteClients:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in __aexit__
        self._process = await asyncio.create_subprocess_exec(
            *self._command,
            cwd=_ROOT,
            env=child_env(),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=self._stderr,
        )
        ready = await self._reply()  # the sessions are open
        self.providers_file = str(ready["providers"])
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        process, self._process = self._process, None
        if process is not None and process.returncode is None and process.stdin is not None:
            process.stdin.write(b'{"op": "exit"}\n')
            try:
                await process.stdin.drain()
                await asyncio.wait_for(process.wait(), 30)
            except (ConnectionError, TimeoutError):
                process.kill()  # this process's own child, by its handle
                await process.wait()
        if self._stderr is not None:
            self._stderr.close()

    async def stream(self, name: str, scenario: Scenario) -> Sample:
        """One timed, checked stream of ``scenario`` by the child's client ``name``."""
        reply = await self._call({"op": "stream", "client": name, "scenario": scenario.id})
        mismatch = reply["mismatch"]
        return (
            float(reply["cpu"]),
            float(reply["wall"]),
            None if mismatch is None else str(mismatch),
        )

    async def freeze(self, scenarios: Sequence[Scenario]) -> None:
        await self._call({"op": "freeze", "scenarios": [s.id for s in scenarios]})

    async def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        process = self._process
        assert process is not None and process.stdin is not None
        process.stdin.write(json.dumps(request).encode() + b"\n")
        await process.stdin.drain()
        return await self._reply()

    async def _reply(self) -> dict[str, Any]:
        process = self._process
        assert process is not None and process.stdout is not None
        line = await process.stdout.readline()
        if not line:
            code = await process.wait()
            raise RuntimeError(
                f"the measuring process for @{self._revision.name} exited ({code}): "
                f"{self._stderr_tail()}"
            )
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"@{self._revision.name}: {reply['error']}")
        return reply

    def _stderr_tail(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace").strip()[-1500:]


# ---- the child ----------------------------------------------------------------------------------


async def _serve(
    specs: dict[str, ClientSpec], base: str, requests: IO[str], channel: IO[str]
) -> None:
    expected: dict[str, GeneratedStream] = {}

    def reply(message: dict[str, Any]) -> None:
        channel.write(json.dumps(message) + "\n")
        channel.flush()

    def stream_of(scenario: Scenario) -> GeneratedStream:
        found = expected.get(scenario.id)
        if found is None:
            found = expected[scenario.id] = generate(scenario)
        return found

    async with AsyncExitStack() as stack:
        functions: dict[str, StreamFn] = {}
        for name, spec in specs.items():
            assert spec.session is not None
            functions[name] = await stack.enter_async_context(spec.session(base, 1))
        import providers

        reply({"ready": True, "providers": providers.__file__})
        for line in requests:
            request = json.loads(line)
            try:
                if request["op"] == "exit":
                    break
                if request["op"] == "freeze":
                    for scenario_id in request["scenarios"]:
                        stream_of(Scenario.parse(scenario_id))
                    gc.collect()
                    gc.freeze()
                    reply({"ok": True})
                    continue
                name = request["client"]
                scenario = Scenario.parse(request["scenario"])
                function = functions[name]
                gc.collect()
                wall = time.perf_counter()
                cpu = time.process_time()
                outcome = await function(scenario)
                cpu = time.process_time() - cpu
                wall = time.perf_counter() - wall
                mismatch = describe_mismatch(specs[name].expected(stream_of(scenario)), outcome)
                reply({"cpu": cpu, "wall": wall, "mismatch": mismatch})
            except Exception as exc:  # reported to the parent, which raises it
                reply({"error": f"{type(exc).__name__}: {exc}"})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", required=True, help="the revision's extracted packages")
    parser.add_argument("--base", required=True)
    parser.add_argument("--clients", nargs="+", required=True)
    parser.add_argument("--cpu", type=int, default=None)
    args = parser.parse_args(argv)
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    use_tree(args.tree)
    pin_to_cpu(args.cpu)
    silence_library_logs()
    registry = default_clients()
    specs = {name: registry[name] for name in args.clients}
    asyncio.run(_serve(specs, args.base, sys.stdin, channel))


if __name__ == "__main__":
    main()

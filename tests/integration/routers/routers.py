"""The real cache-aware routers from PyPI, on loopback, in front of fake workers.

``vllm-router`` (PyPI ``vllm-router``, vllm-project/router) and ``smg`` (PyPI ``smg``, SGLang's
model gateway) are Rust binaries shipped in wheels (the ``integration`` extra installs them).
Each runs as a :class:`~tests.integration.rigs.process.LoopbackServer`: its own process group, a
lifeline that ends it with the runner, its log attached to failures.

What makes them route by a session key: vllm-router's ``--policy consistent_hash`` reads
``X-Session-ID`` first; smg's ``--policy consistent_hashing`` reads ``X-SMG-Routing-Key``, and
``--routing-key-headers NAME`` makes it read another header instead. Their own retries and
circuit breakers are off, so a worker's 503 reaches the client and the client's retry is the
one under test. smg registers its workers in the background after ``/health`` answers, so it is
ready only once its ``/v1/models`` lists the workers' model.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from tests.integration.rigs.process import HOST, LoopbackServer, ServerProcessError, free_port
from tests.integration.routers.fake_worker import MODEL

__all__ = ["RouterError", "RouterServer", "router_binary"]


class RouterError(ServerProcessError):
    pass


def router_binary(name: str) -> str | None:
    """The router's executable: beside this interpreter (the venv the extra installed it in),
    else on ``PATH``."""
    return shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)


class RouterServer(LoopbackServer):
    """``kind`` is ``vllm-router`` or ``smg``; ``routing_key_headers`` (smg only) replaces the
    header smg reads its routing key from."""

    error: ClassVar[type[ServerProcessError]] = RouterError
    label: ClassVar[str] = "router"
    workdir_prefix: ClassVar[str] = "router-"
    poll_seconds: ClassVar[float] = 0.1

    def __init__(
        self,
        kind: str,
        binary: str,
        worker_urls: Sequence[str],
        *,
        routing_key_headers: Sequence[str] = (),
    ) -> None:
        super().__init__(port=None, startup_timeout=60, stop_timeout=10)
        self.kind = kind
        self.binary = binary
        self.worker_urls = list(worker_urls)
        self.routing_key_headers = list(routing_key_headers)
        self._metrics_port = free_port()

    def failure(self, what: str) -> ServerProcessError:
        return super().failure(f"({self.kind}) {what}")

    @property
    def argv(self) -> list[str]:
        common = ["--host", HOST, "--port", str(self.port), "--worker-urls", *self.worker_urls]
        common += ["--prometheus-host", HOST, "--prometheus-port", str(self._metrics_port)]
        common += ["--disable-retries", "--disable-circuit-breaker"]
        if self.kind == "vllm-router":
            return [self.binary, *common, "--policy", "consistent_hash"]
        argv = [self.binary, "launch", *common, "--policy", "consistent_hashing"]
        if self.routing_key_headers:
            argv += ["--routing-key-headers", *self.routing_key_headers]
        return argv

    def on_ready(self) -> None:
        """Until the router lists the workers' model, and (smg) every worker: smg adds its
        workers one by one after ``/health`` answers; a request before the first is a 404 "No
        worker available", and one before the last is hashed onto a ring that then changes
        under the test (measured: ``GET /workers`` listed one of two workers when the model
        first appeared, and a conversation's retry once went to the other worker)."""
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"{self.base_url}/v1/models", timeout=2) as reply:
                    listed = json.loads(reply.read())
                if any(entry.get("id") == MODEL for entry in listed.get("data", [])) and (
                    self.kind != "smg" or self._all_workers_ready()
                ):
                    return
            except (urllib.error.URLError, OSError, ValueError, AttributeError):
                pass
            time.sleep(self.poll_seconds)
        raise self.failure("never listed the workers' model and every worker")

    def _all_workers_ready(self) -> bool:
        """smg's ``GET /workers`` lists each worker URL given, each ``ready``."""
        with urllib.request.urlopen(f"{self.base_url}/workers", timeout=2) as reply:
            listed = json.loads(reply.read()).get("workers", [])
        ready = {w.get("url") for w in listed if w.get("status") == "ready"}
        return set(self.worker_urls) <= ready

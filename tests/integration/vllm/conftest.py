"""Fixtures that run the real ``vllm serve`` (0.33.0) on CPU with a scripted engine.

The first run builds the vLLM venv (a few minutes, cached under ``$OAICOMPAT_RIG_CACHE`` or
``~/.cache/oaicompat/rigs``) and the weightless model folders. When that cannot be done here (no
network, no CPU torch wheel) the tests skip with the reason, except on CI (``CI`` set), where a
skip would hide a broken set-up, so they fail instead (as in ``tests/integration/conftest.py``).

One server per flag set of the captured traffic (``shared/transcripts-captured/vllm/README.md``).
Only the sets the collected tests use are started, each once when the tests are grouped by set
(one file per set), and at most ``OAICOMPAT_RIG_MAX_SERVERS`` (default 2) run at once: the next
set starts while the current one answers tests (see ``ServerPool``).

When a test fails, the tail of each vLLM server log it used is attached to the report.
"""

from __future__ import annotations

import os
import sys
import time
from collections import Counter, OrderedDict
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.rigs.hf_models import MODELS, weightless_models
from tests.integration.rigs.venvs import RigUnavailable, rig_cache_dir, rig_venv, venv_python
from tests.integration.rigs.vllm.install import VLLM_RIG_NAME, VLLM_STEPS
from tests.integration.rigs.vllm.server import VllmServer

_HERMES = ("--enable-auto-tool-choice", "--tool-call-parser", "hermes")
_THINKING_ON = '{"enable_thinking": true}'

SERVER_SETS: dict[str, tuple[str, tuple[str, ...]]] = {
    # name: (model key in hf_models.MODELS, vllm serve flags)
    "plain": ("qwen3", ()),
    "qwen3-hermes": ("qwen3", (*_HERMES, "--reasoning-parser", "qwen3")),
    # llama.cpp's R1 template closes the think block in the prompt unless enable_thinking is
    # truthy; the flag makes the prompt end with "<think>\n", as the HF original template does.
    "r1-deepseek": (
        "r1-distill",
        ("--reasoning-parser", "deepseek_r1", "--default-chat-template-kwargs", _THINKING_ON),
    ),
    "qwen3coder": (
        "qwen3-coder",
        ("--enable-auto-tool-choice", "--tool-call-parser", "qwen3_coder"),
    ),
}

# Environment of a set beyond the flags: the response store is an env switch in vLLM 0.33.
SERVER_ENV: dict[str, dict[str, str]] = {
    "qwen3-hermes-store": {"VLLM_ENABLE_RESPONSES_API_STORE": "1"},
}
SERVER_SETS["qwen3-hermes-store"] = SERVER_SETS["qwen3-hermes"]

_USED_SERVERS = pytest.StashKey[list[VllmServer]]()


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (on CI the integration suite must run, not skip)")
    pytest.skip(reason)


@dataclass(frozen=True)
class VllmRig:
    """What every vLLM server needs: the venv's interpreter and the model folders."""

    python: Path
    models: dict[str, Path]


@pytest.fixture(scope="session")
def vllm_rig() -> VllmRig:
    """The built venv and model folders, or a skip/fail with the reason."""
    started = time.monotonic()
    try:
        venv = rig_venv(VLLM_RIG_NAME, VLLM_STEPS)
        models = weightless_models(rig_cache_dir() / "models")
    except RigUnavailable as exc:
        _unavailable(f"vLLM rig unavailable: {exc}")
        raise  # unreachable: _unavailable always raises
    except Exception as exc:  # no sdist, no gguf reader: all mean "no rig here"
        _unavailable(f"vLLM rig unavailable: {exc!r}")
        raise
    print(f"[rig {VLLM_RIG_NAME}] ready in {time.monotonic() - started:.1f} s", file=sys.stderr)
    return VllmRig(venv_python(venv), models)


FIXTURES: dict[str, str] = {
    "vllm_plain": "plain",
    "vllm_qwen3_hermes": "qwen3-hermes",
    "vllm_r1_deepseek": "r1-deepseek",
    "vllm_qwen3coder": "qwen3coder",
    "vllm_qwen3_hermes_store": "qwen3-hermes-store",
}


class ServerPool:
    """Starts the servers the collected tests need, at most ``capacity`` at a time.

    ``plan`` lists the server set of each collected test in run order. A server no remaining
    test needs is stopped before another starts (memory: about 1 GB each), and free places are
    filled at once with the next sets in the plan, so the next server imports vLLM while the
    current one answers tests: start-up, not the tests, is most of this suite's wall time.
    """

    def __init__(self, rig: VllmRig, capacity: int, plan: list[str]) -> None:
        self.rig = rig
        self.capacity = max(1, capacity)
        self.remaining = Counter(plan)
        self.order = list(dict.fromkeys(plan))
        self._servers: OrderedDict[str, VllmServer] = OrderedDict()
        self.startups: list[tuple[str, float]] = []

    def _launch(self, name: str) -> VllmServer:
        model_key, flags = SERVER_SETS[name]
        server = VllmServer(
            self.rig.python,
            self.rig.models[model_key],
            MODELS[model_key].served_name,
            flags,
            env=SERVER_ENV.get(name),
        )
        server.launch()
        self._servers[name] = server
        return server

    def _stop(self, name: str) -> None:
        self._servers.pop(name).stop()

    def get(self, name: str) -> VllmServer:
        """The running server of set ``name``; counts one use of it."""
        for other in [n for n in self._servers if n != name and self.remaining[n] <= 0]:
            self._stop(other)
        server = self._servers.get(name)
        if server is not None and server.startup_seconds is not None and not server.running:
            self._stop(name)  # it died: start afresh
            server = None
        if server is None:
            while len(self._servers) >= self.capacity:  # tests not grouped: evict the oldest
                self._stop(next(iter(self._servers)))
            server = self._launch(name)
        self._servers.move_to_end(name)
        for upcoming in self.order:
            if len(self._servers) >= self.capacity:
                break
            if upcoming not in self._servers and self.remaining[upcoming] > 0:
                self._launch(upcoming)
        if server.startup_seconds is None:
            started = time.monotonic()
            server.wait_ready()
            assert server.startup_seconds is not None
            self.startups.append((name, server.startup_seconds))
            print(
                f"[vllm {name}] ready after {server.startup_seconds:.1f} s "
                f"(waited {time.monotonic() - started:.1f} s)",
                file=sys.stderr,
            )
        self.remaining[name] -= 1
        return server

    def close(self) -> None:
        while self._servers:
            self._stop(next(iter(self._servers)))


_STARTUPS = pytest.StashKey[list[tuple[str, float]]]()


@pytest.fixture(scope="session")
def vllm_pool(vllm_rig: VllmRig, request: pytest.FixtureRequest) -> Iterator[ServerPool]:
    plan = [
        FIXTURES[name]
        for item in request.session.items
        for name in getattr(item, "fixturenames", ())
        if name in FIXTURES
    ]
    capacity = int(os.environ.get("OAICOMPAT_RIG_MAX_SERVERS", "2"))
    pool = ServerPool(vllm_rig, capacity, plan)
    request.config.stash[_STARTUPS] = pool.startups
    try:
        yield pool
    finally:
        pool.close()


def pytest_terminal_summary(
    terminalreporter: pytest.TerminalReporter, config: pytest.Config
) -> None:
    """Server start-up times in the log: they dominate this suite's wall time on CI."""
    startups = config.stash.get(_STARTUPS, [])
    if startups:
        terminalreporter.write_sep("-", "vllm server start-ups (launch to healthy)")
        for name, seconds in startups:
            terminalreporter.write_line(f"{name}: {seconds:.1f} s")


def _server(pool: ServerPool, request: pytest.FixtureRequest, name: str) -> VllmServer:
    server = pool.get(name)
    request.node.stash.setdefault(_USED_SERVERS, []).append(server)
    return server


@pytest.fixture
def vllm_plain(vllm_pool: ServerPool, request: pytest.FixtureRequest) -> VllmServer:
    """Qwen3 tokenizer and template, no parsers."""
    return _server(vllm_pool, request, "plain")


@pytest.fixture
def vllm_qwen3_hermes(vllm_pool: ServerPool, request: pytest.FixtureRequest) -> VllmServer:
    """Qwen3, ``--tool-call-parser hermes --reasoning-parser qwen3``, auto tool choice."""
    return _server(vllm_pool, request, "qwen3-hermes")


@pytest.fixture
def vllm_r1_deepseek(vllm_pool: ServerPool, request: pytest.FixtureRequest) -> VllmServer:
    """R1-Distill template, ``--reasoning-parser deepseek_r1``, thinking on in the prompt."""
    return _server(vllm_pool, request, "r1-deepseek")


@pytest.fixture
def vllm_qwen3coder(vllm_pool: ServerPool, request: pytest.FixtureRequest) -> VllmServer:
    """Qwen3-Coder template, ``--tool-call-parser qwen3_coder``, auto tool choice."""
    return _server(vllm_pool, request, "qwen3coder")


@pytest.fixture
def vllm_qwen3_hermes_store(vllm_pool: ServerPool, request: pytest.FixtureRequest) -> VllmServer:
    """``qwen3-hermes`` with the Responses store on (``VLLM_ENABLE_RESPONSES_API_STORE=1``)."""
    return _server(vllm_pool, request, "qwen3-hermes-store")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    if report.failed:
        for server in item.stash.get(_USED_SERVERS, []):
            report.sections.append(
                (f"vllm server {server.model_id} on :{server.port} (log tail)", server.log_tail())
            )
    return report

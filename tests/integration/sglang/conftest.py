"""Fixtures that run SGLang 0.5.23's real OpenAI server on CPU with a scripted scheduler.

The first run builds the SGLang venv (a few minutes, cached under ``$OAICOMPAT_RIG_CACHE`` or
``~/.cache/oaicompat/rigs``) and the weightless model folders. When that cannot be done here (no
network, no CPU torch wheel) the tests skip with the reason, except on CI (``CI`` set), where a
skip would hide a broken set-up, so they fail instead (as in ``tests/integration/conftest.py``).

One server per flag set of the captured traffic (``shared/transcripts-captured/sglang/README.md``).
Servers start when a test first asks for one and stay up for the session, but at most
``OAICOMPAT_RIG_MAX_SERVERS`` (default 2) run at once: asking for another stops the least
recently used, which a later test restarts if it needs it. Test files are grouped by server set,
so in file order each server starts once, and the next set boots while the current one's tests
run.

When a test fails, the tail of each SGLang server log it used is attached to the report.
"""

from __future__ import annotations

import os
import sys
import time
from collections import OrderedDict
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.integration.rigs.hf_models import MODELS, weightless_models
from tests.integration.rigs.sglang.install import SGLANG_RIG_NAME, SGLANG_STEPS
from tests.integration.rigs.sglang.server import SglangServer, SglangServerError
from tests.integration.rigs.venvs import RigUnavailable, rig_cache_dir, rig_venv, venv_python

SERVER_SETS: dict[str, tuple[str, tuple[str, ...]]] = {
    # name: (model key in hf_models.MODELS, sglang serve flags), as in the captured traffic
    "plain": ("qwen3", ()),
    # qwen25 is SGLang's alias of its hermes-style `qwen` function-call parser
    "qwen3-qwen25": ("qwen3", ("--reasoning-parser", "qwen3", "--tool-call-parser", "qwen25")),
    # No --default-chat-template-kwargs here (the captures sent enable_thinking per request):
    # SGLang's deepseek-r1 parser starts in reasoning mode whatever the prompt did.
    "r1-deepseek": ("r1-distill", ("--reasoning-parser", "deepseek-r1")),
    "qwen3coder": ("qwen3-coder", ("--tool-call-parser", "qwen3_coder")),
    # the Responses API's store (previous_response_id, GET /v1/responses/{id}) is off by default
    "qwen3-qwen25-store": (
        "qwen3",
        ("--reasoning-parser", "qwen3", "--tool-call-parser", "qwen25", "--enable-response-store"),
    ),
}

_USED_SERVERS = pytest.StashKey[list[SglangServer]]()


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (on CI the integration suite must run, not skip)")
    pytest.skip(reason)


@dataclass(frozen=True)
class SglangRig:
    """What every SGLang server needs: the venv's interpreter and the model folders."""

    python: Path
    models: dict[str, Path]


@pytest.fixture(scope="session")
def sglang_rig() -> SglangRig:
    """The built venv and model folders, or a skip/fail with the reason."""
    started = time.monotonic()
    try:
        venv = rig_venv(SGLANG_RIG_NAME, SGLANG_STEPS)
        models = weightless_models(rig_cache_dir() / "models")
    except RigUnavailable as exc:
        _unavailable(f"SGLang rig unavailable: {exc}")
        raise  # unreachable: _unavailable always raises
    except Exception as exc:  # no sdist, no gguf reader: all mean "no rig here"
        _unavailable(f"SGLang rig unavailable: {exc!r}")
        raise
    print(f"[rig {SGLANG_RIG_NAME}] ready in {time.monotonic() - started:.1f} s", file=sys.stderr)
    return SglangRig(venv_python(venv), models)


FIXTURE_SETS = {
    "sglang_plain": "plain",
    "sglang_qwen3_qwen25": "qwen3-qwen25",
    "sglang_r1_deepseek": "r1-deepseek",
    "sglang_qwen3coder": "qwen3coder",
    "sglang_qwen3_qwen25_store": "qwen3-qwen25-store",
}
"""Which server set each server fixture below asks for."""


def sets_in_run_order(items: list[pytest.Item]) -> list[str]:
    """The server sets the selected tests use, in the order they first need them."""
    order: list[str] = []
    for item in items:
        for fixture in getattr(item, "fixturenames", ()):
            name = FIXTURE_SETS.get(fixture)
            if name is not None and name not in order:
                order.append(name)
    return order


class ServerPool:
    """Starts servers on demand and keeps at most ``capacity`` running (least recently used
    goes first): each SGLang server is three processes holding torch and transformers.

    Most of a start-up is those processes importing SGLang, so while tests run against one set,
    the next set in ``order`` (the selected tests' order) boots in the background when there is
    room, i.e. when a running set is not needed again.
    """

    def __init__(self, rig: SglangRig, capacity: int, order: list[str]) -> None:
        self.rig = rig
        self.capacity = max(1, capacity)
        self.order = order
        self._running: OrderedDict[str, SglangServer] = OrderedDict()
        self._failed: dict[str, Exception] = {}
        self.startups: list[tuple[str, float]] = []

    def get(self, name: str) -> SglangServer:
        failed = self._failed.get(name)
        if failed is not None:  # one slow failure per set, not one per test
            raise SglangServerError(f"the {name!r} server failed to start earlier") from failed
        try:
            server = self._launched(name)
            self._prelaunch_after(name)
            booting = server.startup_seconds is None
            server.wait_ready()
        except Exception as exc:
            self._failed[name] = exc
            raise
        if booting:
            assert server.startup_seconds is not None
            self.startups.append((name, server.startup_seconds))
            print(f"[sglang {name}] started in {server.startup_seconds:.1f} s", file=sys.stderr)
        return server

    def _launched(self, name: str) -> SglangServer:
        """The set's server, launched (not necessarily ready), now the most recently used."""
        server = self._running.get(name)
        if server is not None and server.running:
            self._running.move_to_end(name)
            return server
        if server is not None:  # it died: start afresh
            self._running.pop(name).stop()
        while len(self._running) >= self.capacity:
            _, oldest = self._running.popitem(last=False)
            oldest.stop()
        return self._launch(name)

    def _launch(self, name: str) -> SglangServer:
        model_key, flags = SERVER_SETS[name]
        server = SglangServer(
            self.rig.python,
            self.rig.models[model_key],
            served_model_name=MODELS[model_key].served_name,
            extra_args=flags,
        )
        server.launch()
        self._running[name] = server
        return server

    def _prelaunch_after(self, name: str) -> None:
        """Boot the set after ``name`` in ``order``, stopping sets ``order`` is done with."""
        if name not in self.order:
            return
        later = self.order[self.order.index(name) + 1 :]
        if not later or later[0] in self._running:
            return
        for done in [n for n in self._running if n != name and n not in later]:
            if len(self._running) < self.capacity:
                break
            self._running.pop(done).stop()
        if len(self._running) < self.capacity:
            self._launch(later[0])
            self._running.move_to_end(name)

    def close(self) -> None:
        while self._running:
            _, server = self._running.popitem()
            server.stop()


@pytest.fixture(scope="session")
def sglang_pool(sglang_rig: SglangRig, request: pytest.FixtureRequest) -> Iterator[ServerPool]:
    capacity = int(os.environ.get("OAICOMPAT_RIG_MAX_SERVERS", "2"))
    pool = ServerPool(sglang_rig, capacity, sets_in_run_order(request.session.items))
    try:
        yield pool
    finally:
        pool.close()


def _server(pool: ServerPool, request: pytest.FixtureRequest, name: str) -> SglangServer:
    server = pool.get(name)
    request.node.stash.setdefault(_USED_SERVERS, []).append(server)
    return server


@pytest.fixture
def sglang_plain(sglang_pool: ServerPool, request: pytest.FixtureRequest) -> SglangServer:
    """Qwen3 tokenizer and template, no parsers."""
    return _server(sglang_pool, request, "plain")


@pytest.fixture
def sglang_qwen3_qwen25(sglang_pool: ServerPool, request: pytest.FixtureRequest) -> SglangServer:
    """Qwen3, ``--reasoning-parser qwen3 --tool-call-parser qwen25``."""
    return _server(sglang_pool, request, "qwen3-qwen25")


@pytest.fixture
def sglang_r1_deepseek(sglang_pool: ServerPool, request: pytest.FixtureRequest) -> SglangServer:
    """R1-Distill template (llama.cpp's version), ``--reasoning-parser deepseek-r1``."""
    return _server(sglang_pool, request, "r1-deepseek")


@pytest.fixture
def sglang_qwen3coder(sglang_pool: ServerPool, request: pytest.FixtureRequest) -> SglangServer:
    """Qwen3-Coder template, ``--tool-call-parser qwen3_coder``."""
    return _server(sglang_pool, request, "qwen3coder")


@pytest.fixture
def sglang_qwen3_qwen25_store(
    sglang_pool: ServerPool, request: pytest.FixtureRequest
) -> SglangServer:
    """``qwen3-qwen25`` with ``--enable-response-store``."""
    return _server(sglang_pool, request, "qwen3-qwen25-store")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    if report.failed:
        for server in item.stash.get(_USED_SERVERS, []):
            report.sections.append(
                (f"sglang server {server.model_id} on :{server.port} (log tail)", server.log_tail())
            )
    return report

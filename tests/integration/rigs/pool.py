"""One pool of rig servers for the whole session: each server set starts once, few at a time.

A pytest plugin (``tests/integration/conftest.py`` loads it). Each rig's conftest registers its
server sets with :func:`register_rig`: which fixture asks for which set, and how to build the
rig and a server of a set. The plugin then

* orders the collected tests by server set (:func:`order_by_server_set`): every test of a set
  moves up to the set's first test, so each set is needed during one stretch of the run only;
* keeps at most ``OAICOMPAT_RIG_MAX_SERVERS`` (default 2) servers running across every rig
  (each holds torch and transformers: about 1 GB for vLLM, more for SGLang's three
  processes);
* stops a server as soon as no remaining test needs its set, and fills the free place with the
  next set in run order, which then boots (mostly imports) while the current tests run;
* attaches the log tail of every server a failing test used to its report, and lists the
  start-ups in the terminal summary: they are most of these suites' wall time.

A rig that cannot be built makes its tests skip with the reason, or fail on CI (``CI`` set),
where a skipped suite would hide a broken set-up (as in ``tests/integration/conftest.py``).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest

from tests.integration.rigs.process import LoopbackServer, ServerProcessError
from tests.integration.rigs.venvs import RigUnavailable

__all__ = [
    "CAPACITY_ENV",
    "RigSets",
    "ServerFactory",
    "ServerPool",
    "order_by_server_set",
    "pooled_server",
    "register_rig",
    "server_fixture",
    "unavailable",
]

CAPACITY_ENV = "OAICOMPAT_RIG_MAX_SERVERS"
DEFAULT_CAPACITY = 2

ServerFactory = Callable[[str], LoopbackServer]
"""A server (not launched) of the named set."""

ServerT = TypeVar("ServerT", bound=LoopbackServer)


@dataclass(frozen=True)
class RigSets:
    """One rig's server sets, as its conftest registers them.

    ``fixtures`` maps each server fixture to the set it asks for. ``build`` makes the rig ready
    (the venv, the model folders; :class:`~tests.integration.rigs.venvs.RigUnavailable` or any
    other error when it cannot) and returns the factory of its servers; it runs once per
    session, when a test or the pool's look-ahead first needs one of the rig's sets.
    """

    rig: str
    label: str
    fixtures: Mapping[str, str]
    build: Callable[[], ServerFactory]

    def key(self, set_name: str) -> str:
        return f"{self.rig}/{set_name}"


_RIGS: dict[str, RigSets] = {}
_FIXTURE_KEYS: dict[str, str] = {}
"""Server fixture name → ``rig/set``, from every registered rig."""


def register_rig(sets: RigSets) -> None:
    """Called by a rig's conftest when it is imported (before collection ends)."""
    _RIGS[sets.rig] = sets
    for fixture, set_name in sets.fixtures.items():
        _FIXTURE_KEYS[fixture] = sets.key(set_name)


def unavailable(reason: str) -> None:
    """Skip with ``reason``, or fail on CI: a skipped suite there would hide a broken rig."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (on CI the integration suite must run, not skip)")
    pytest.skip(reason)


def keys_of(item: pytest.Item) -> tuple[str, ...]:
    """The pooled server sets ``item`` asks for (``rig/set``), in fixture order."""
    names: Iterable[str] = getattr(item, "fixturenames", ())
    return tuple(dict.fromkeys(_FIXTURE_KEYS[n] for n in names if n in _FIXTURE_KEYS))


def order_by_server_set(items: list[pytest.Item]) -> None:
    """Move every test of a set up to that set's first test, in place; the rest keep their
    order. Files test several sets (the Responses suites test all of them), so in file order
    a set would be started, stopped for others, and started again."""
    first_use: dict[str, int] = {}
    anchors: list[int] = []
    for index, item in enumerate(items):
        keys = keys_of(item)
        if keys:
            anchors.append(first_use.setdefault(keys[0], index))
        else:
            anchors.append(index)
    order = sorted(range(len(items)), key=lambda index: (anchors[index], index))
    items[:] = [items[index] for index in order]


class ServerPool:
    """Starts the servers the collected tests need, at most ``capacity`` at a time.

    ``plan`` is each collected test (node id) with the sets it needs, in run order; a test
    leaves it once finished (:meth:`finished`). A running server whose set no test left in
    the plan needs is stopped at once, and free places go to the next sets of the plan.
    """

    def __init__(self, plan: Iterable[tuple[str, tuple[str, ...]]], capacity: int) -> None:
        self.capacity = max(1, capacity)
        self._pending = {nodeid: keys for nodeid, keys in plan if keys}
        self._running: dict[str, LoopbackServer] = {}
        self._factories: dict[str, ServerFactory | Exception] = {}
        self._failed: dict[str, Exception] = {}
        self.startups: list[tuple[str, float, float]] = []
        """Each start-up that became ready: ``(rig/set, seconds from launch until it was
        seen ready, seconds the test waited for it)``. A server started ahead is seen ready
        only when first needed, so the first number is an upper bound; the second is what
        start-ups cost the run."""

    # --- what the fixtures call ---------------------------------------------------------------

    def server(self, key: str) -> LoopbackServer:
        """The ready server of set ``key`` (``rig/set``), started if needed; raises the start-up
        error (once per set: later tests get a short one) or a skip/fail when the rig is
        unavailable."""
        rig = _RIGS[key.split("/", 1)[0]]
        try:
            factory = self._factory(rig.rig)
        except Exception as exc:
            shown = str(exc) if isinstance(exc, RigUnavailable) else repr(exc)
            unavailable(f"{rig.label} rig unavailable: {shown}")
            raise  # unreachable: unavailable always raises
        failed = self._failed.get(key)
        if failed is not None:  # one slow failure per set, not one per test
            kind = type(failed) if isinstance(failed, ServerProcessError) else ServerProcessError
            raise kind(f"the {key!r} server failed to start earlier") from failed
        server = self._running.get(key)
        if server is not None and server.startup_seconds is not None and not server.running:
            self._stop(key)  # it died after start-up: start afresh
            server = None
        if server is None:
            self._make_room(keep=key)
            server = self._launch(key, factory)
        self._look_ahead()
        booting = server.startup_seconds is None
        started = time.monotonic()
        try:
            server.wait_ready()
        except Exception as exc:
            self._failed[key] = exc
            self._running.pop(key, None)
            raise
        if booting:
            assert server.startup_seconds is not None
            waited = time.monotonic() - started
            self.startups.append((key, server.startup_seconds, waited))
            print(
                f"[{key}] ready {server.startup_seconds:.1f} s after launch "
                f"(waited {waited:.1f} s)",
                file=sys.stderr,
            )
        return server

    def finished(self, nodeid: str) -> None:
        """The test is done: stop what no later test needs, start what the next ones do."""
        self._pending.pop(nodeid, None)
        needed = self._needed()
        for key in [k for k in self._running if k not in needed]:
            self._stop(key)
        self._look_ahead()

    def close(self) -> None:
        for key in list(self._running):
            self._stop(key)

    # --- inside -------------------------------------------------------------------------------

    def _needed(self) -> dict[str, int]:
        """Each set the remaining tests need, with the position of its next use."""
        needed: dict[str, int] = {}
        for position, keys in enumerate(self._pending.values()):
            for key in keys:
                needed.setdefault(key, position)
        return needed

    def _factory(self, rig: str) -> ServerFactory:
        """The rig's server factory, built on first use; a failure is kept and raised again."""
        if rig not in self._factories:
            try:
                self._factories[rig] = _RIGS[rig].build()
            except Exception as exc:
                self._factories[rig] = exc
        factory = self._factories[rig]
        if isinstance(factory, Exception):
            raise factory
        return factory

    def _launch(self, key: str, factory: ServerFactory) -> LoopbackServer:
        server = factory(key.split("/", 1)[1])
        server.launch()
        self._running[key] = server
        return server

    def _stop(self, key: str) -> None:
        self._running.pop(key).stop()

    def _make_room(self, keep: str) -> None:
        """Stop servers until one more fits: first those no test needs, then the one needed
        last (tests not grouped by set, or one test asking for several)."""
        needed = self._needed()
        while len(self._running) >= self.capacity:
            others = [k for k in self._running if k != keep]
            if not others:
                return
            self._stop(max(others, key=lambda k: needed.get(k, sys.maxsize)))

    def _look_ahead(self) -> None:
        """Launch the next needed sets, in run order, while there is room (never waited for
        here: they boot while the current tests run)."""
        needed = self._needed()
        for key in sorted(needed, key=needed.__getitem__):
            if len(self._running) >= self.capacity:
                return
            if key in self._running or key in self._failed:
                continue
            try:
                factory = self._factory(key.split("/", 1)[0])
            except Exception:  # reported by the test that needs it
                continue
            self._launch(key, factory)


# --- the plugin ----------------------------------------------------------------------------------

_POOL = pytest.StashKey[ServerPool]()
_USED = pytest.StashKey[dict[str, LoopbackServer]]()


def pooled_server(request: pytest.FixtureRequest, kind: type[ServerT]) -> ServerT:
    """What a rig's server fixture returns: the ready server of the fixture's set."""
    key = _FIXTURE_KEYS[str(request.fixturename)]
    pool = _pool(request.config)
    server = pool.server(key)
    assert isinstance(server, kind), f"{key} gave a {type(server).__name__}"
    request.node.stash.setdefault(_USED, {})[key] = server
    return server


def _pool(
    config: pytest.Config, plan: list[tuple[str, tuple[str, ...]]] | None = None
) -> ServerPool:
    """The session's pool: made when collection ends, or by the first fixture asking for it
    (a server fixture requested dynamically: then no plan looks ahead for it)."""
    pool = config.stash.get(_POOL, None)
    if pool is None:
        capacity = int(os.environ.get(CAPACITY_ENV, str(DEFAULT_CAPACITY)))
        pool = config.stash[_POOL] = ServerPool(plan or [], capacity)
    return pool


def server_fixture(kind: type[ServerT], doc: str) -> Any:
    """A rig's server fixture, named by the conftest attribute it is assigned to (a key of
    its :attr:`RigSets.fixtures`): ``vllm_plain = server_fixture(VllmServer, "...")``."""

    def fixture(request: pytest.FixtureRequest) -> ServerT:
        return pooled_server(request, kind)

    fixture.__doc__ = doc
    return pytest.fixture(fixture)


@pytest.hookimpl(trylast=True)  # after any plugin that shuffles or deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    order_by_server_set(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    plan = [(item.nodeid, keys_of(item)) for item in session.items]
    if any(keys for _, keys in plan):
        _pool(session.config, plan)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, None, None]:
    try:
        return (yield)
    finally:
        pool = item.config.stash.get(_POOL, None)
        if pool is not None:
            pool.finished(item.nodeid)


def pytest_sessionfinish(session: pytest.Session) -> None:
    pool = session.config.stash.get(_POOL, None)
    if pool is not None:
        pool.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report: pytest.TestReport = yield
    if report.failed:
        for key, server in item.stash.get(_USED, {}).items():
            title = f"{key}: {server.label} on :{server.port} (log tail)"
            report.sections.append((title, server.log_tail()))
    return report


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    pool = terminalreporter.config.stash.get(_POOL, None)
    if pool is None or not pool.startups:
        return
    waited = sum(seconds for _, _, seconds in pool.startups)
    terminalreporter.write_sep(
        "-", f"rig server start-ups: {len(pool.startups)}, tests waited {waited:.0f} s for them"
    )
    for key, ready, waits in pool.startups:
        terminalreporter.write_line(
            f"{key}: seen ready {ready:.1f} s after launch, waited {waits:.1f} s"
        )

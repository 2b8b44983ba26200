"""On CI, a test that did not run is a failed run, unless it is allowed here, with its reason.

A skip can come from anywhere: a ``skipif``, an ``importorskip`` at module level (seen only at
collection), a fixture, an ``xfail`` that hides a failure, a hook that deselects. A suite that
quietly did not run the real servers, a framework or a unit module reports green while proving
nothing. So this plugin (loaded with ``-p tests.ci_guard`` from ``pyproject.toml``) makes the
rule total when ``CI`` is set: every skip, xfail (strict or not, passing or failing),
collection-time skip and deselection fails the run, except what ``ALLOWED`` lists.
``tests/unit/architecture/test_ci_guard.py`` proves each hole closed with probe runs.
"""

from __future__ import annotations

import os
from typing import Final

import pytest

# Node-id prefix -> why it may not run on CI. Keep it short: each entry is a test CI never runs.
ALLOWED: Final[dict[str, str]] = {}
# Marker -> why tests carrying it may be deselected on CI.
ALLOWED_DESELECTED_MARKERS: Final[dict[str, str]] = {
    "rerecord": "re-records committed transcripts; runs only with --rerecord-transcripts",
}

_not_run: list[str] = []


def _on_ci() -> bool:
    return bool(os.environ.get("CI"))


def _allowed(nodeid: str) -> bool:
    return any(nodeid.startswith(prefix) for prefix in ALLOWED)


def _note(kind: str, nodeid: str) -> None:
    if not _allowed(nodeid):
        _not_run.append(f"{kind}: {nodeid}")


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.skipped:
        _note("skipped at collection", report.nodeid)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if hasattr(report, "wasxfail"):  # xfailed (skipped) or xpassed (passed): either hides one
        _note("xfail", report.nodeid)
    elif report.skipped:
        _note("skipped", report.nodeid)


def pytest_deselected(items: list[pytest.Item]) -> None:
    for item in items:
        if not any(item.get_closest_marker(name) for name in ALLOWED_DESELECTED_MARKERS):
            _note("deselected", item.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _on_ci() and _not_run and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _on_ci() and _not_run:
        terminalreporter.section("CI guard: tests that did not run (this fails the run)")
        for line in dict.fromkeys(_not_run):
            terminalreporter.line(line)
        terminalreporter.line("Allow one only in tests/ci_guard.py, with its reason.")

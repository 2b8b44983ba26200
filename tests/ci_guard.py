"""On CI, a skipped integration test is a failed run.

The integration fixtures already fail instead of skipping when ``CI`` is set, but a skip can
come from elsewhere too (a ``skipif``, an ``importorskip``, a fixture someone adds later). A
suite that silently skipped the real servers would report green while proving nothing, so this
plugin (loaded with ``-p tests.ci_guard`` from ``pyproject.toml``) turns any skip under
``tests/integration/`` into a non-zero exit status when ``CI`` is set, and prints which ones.
"""

from __future__ import annotations

import os

import pytest

_skipped: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.skipped and "tests/integration/" in report.nodeid.replace("\\", "/"):
        _skipped.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("CI") and _skipped and exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if os.environ.get("CI") and _skipped:
        terminalreporter.section("CI guard: integration tests skipped (this fails the run)")
        for nodeid in _skipped:
            terminalreporter.line(nodeid)

"""The CI guard (tests/ci_guard.py) fails a ``CI=1`` run for every way a test can not run.

Each case writes a probe suite into a temporary folder and runs pytest on it in a subprocess
with the guard loaded, as ``.ci/run`` does: the exit status is what CI would see.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

PASSING = "def test_ok() -> None:\n    assert 1 + 1 == 2\n"
DESELECTING_CONFTEST = """
import pytest

def pytest_collection_modifyitems(config, items):
    chosen = [i for i in items if i.get_closest_marker("rerecord") or "drop" in i.name]
    if chosen:
        config.hook.pytest_deselected(items=chosen)
        items[:] = [i for i in items if i not in chosen]
"""


def run_probe(
    tmp_path: Path, files: dict[str, str], *, ci: bool = True
) -> subprocess.CompletedProcess[str]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nmarkers =\n    rerecord: probe marker\n", encoding="utf-8"
    )
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = str(ROOT)
    if ci:
        env["CI"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.ci_guard", "-p", "no:cacheprovider", "-q"],
        cwd=tmp_path,
        env=env,
        text=True,
        capture_output=True,
        timeout=120,
        check=False,
    )


def test_a_suite_that_runs_everything_passes(tmp_path: Path) -> None:
    result = run_probe(tmp_path, {"tests/unit/test_probe.py": PASSING})
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize(
    ("path", "body"),
    [
        pytest.param(
            "tests/unit/test_probe.py",
            "import pytest\npytest.importorskip('no_such_module_here')\n" + PASSING,
            id="module-level-importorskip",
        ),
        pytest.param(
            "tests/unit/test_probe.py",
            "import pytest\npytest.skip('later', allow_module_level=True)\n" + PASSING,
            id="module-level-skip",
        ),
        pytest.param(
            "tests/integrations/test_probe.py",
            "import pytest\n\ndef test_s() -> None:\n    pytest.skip('no framework')\n",
            id="skip-under-integrations",
        ),
        pytest.param(
            "tests/unit/test_probe.py",
            "import pytest\n\n@pytest.mark.skipif(True, reason='x')\ndef test_s() -> None:\n"
            "    pass\n",
            id="skipif-under-unit",
        ),
        pytest.param(
            "tests/faults/test_probe.py",
            "import pytest\n\n@pytest.fixture\ndef gone() -> None:\n"
            "    pytest.skip('no server')\n\n"
            "def test_s(gone: None) -> None:\n    pass\n",
            id="skip-from-a-fixture",
        ),
        pytest.param(
            "tests/unit/test_probe.py",
            "import pytest\n\n@pytest.mark.xfail(reason='known')\ndef test_x() -> None:\n"
            "    assert False\n",
            id="xfail",
        ),
        pytest.param(
            "tests/unit/test_probe.py",
            "import pytest\n\n@pytest.mark.xfail(reason='known')\ndef test_x() -> None:\n"
            "    pass\n",
            id="xpass",
        ),
        pytest.param(
            "tests/unit/test_probe.py",
            "import pytest\n\ndef test_x() -> None:\n    pytest.xfail('imperative')\n",
            id="imperative-xfail",
        ),
    ],
)
def test_each_way_of_not_running_fails_a_ci_run(tmp_path: Path, path: str, body: str) -> None:
    files = {path: body, "tests/unit/test_other.py": PASSING}
    result = run_probe(tmp_path, files)
    assert result.returncode == 1, result.stdout
    assert "CI guard" in result.stdout
    assert run_probe(tmp_path, files, ci=False).returncode == 0  # only CI is strict


def test_deselection_fails_unless_its_marker_is_allowed(tmp_path: Path) -> None:
    marked = "import pytest\n\n@pytest.mark.rerecord\ndef test_rerecord() -> None:\n    pass\n"
    files = {"conftest.py": DESELECTING_CONFTEST, "tests/test_probe.py": marked + PASSING}
    assert run_probe(tmp_path, files).returncode == 0
    files["tests/test_more.py"] = "def test_drop() -> None:\n    pass\n" + PASSING
    result = run_probe(tmp_path, files)
    assert result.returncode == 1, result.stdout
    assert "deselected: tests/test_more.py::test_drop" in result.stdout


def test_an_allow_listed_skip_passes(tmp_path: Path) -> None:
    # The allow-list is data in the guard: a probe plugin adds one entry to it, as an edit would.
    plugin = (
        "from tests import ci_guard\n"
        "ci_guard.ALLOWED['tests/unit/test_probe.py::test_s'] = 'probe'\n"
    )
    skipping = "import pytest\n\ndef test_s() -> None:\n    pytest.skip('linux only')\n"
    files = {"conftest.py": plugin, "tests/unit/test_probe.py": skipping + PASSING}
    result = run_probe(tmp_path, files)
    assert result.returncode == 0, result.stdout

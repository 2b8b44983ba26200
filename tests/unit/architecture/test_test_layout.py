"""``tests/unit/`` mirrors the packages, so the tests of a module are found where the module is.

Issue 31 found 33 flat files in ``tests/unit/`` beside four folders: a newcomer could not tell
where a layer's tests were, nor where to put new ones. The rule (``docs/extending.md``): every
unit test file sits in the folder named after its package (``tests/unit/providers/layers/`` for
``providers/layers/``), or in one of the few folders for what belongs to no package.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
UNIT = ROOT / "tests" / "unit"
PACKAGES = ("providers", "capabilities", "telemetry")

NOT_A_PACKAGE = {
    "architecture": "rules about the whole tree (imports, sizes, names, docs)",
    "benchmarks": "the smoke test of benchmarks/",
    "harness": "the test harness's own tests (servers dying with the runner)",
    "tls": "a throwaway certificate, no tests",
}


def _package_dirs() -> set[Path]:
    found = set()
    for package in PACKAGES:
        for init in (ROOT / package).rglob("__init__.py"):
            found.add(init.parent.relative_to(ROOT))
    return found


def misplaced(unit: Path, packages: set[Path]) -> list[str]:
    """Test files of ``unit`` in no folder that mirrors a package or is on the short list."""
    wrong = []
    for test in sorted(unit.rglob("test_*.py")):
        folder = test.parent.relative_to(unit)
        if folder.parts and folder.parts[0] in NOT_A_PACKAGE:
            continue
        if folder not in packages:
            wrong.append(str(test.relative_to(unit)))
    return wrong


def test_every_unit_test_sits_in_the_folder_of_its_package() -> None:
    assert misplaced(UNIT, _package_dirs()) == []


def test_a_flat_test_file_is_caught(tmp_path: Path) -> None:
    (tmp_path / "providers" / "layers").mkdir(parents=True)
    (tmp_path / "providers" / "layers" / "test_retry.py").write_text("")
    (tmp_path / "test_flat.py").write_text("")
    (tmp_path / "providers" / "nowhere").mkdir()
    (tmp_path / "providers" / "nowhere" / "test_lost.py").write_text("")
    packages = {Path("providers"), Path("providers/layers")}
    assert misplaced(tmp_path, packages) == ["providers/nowhere/test_lost.py", "test_flat.py"]


@pytest.mark.parametrize("folder", sorted(NOT_A_PACKAGE))
def test_each_folder_outside_the_packages_exists(folder: str) -> None:
    assert (UNIT / folder).is_dir()

"""The documentation names only what exists: every dotted ``providers.…`` (``capabilities.…``,
``telemetry.…``) name and every repository path in the Markdown files and ``pyproject.toml``.

A newcomer found ``providers.transcripts`` (gone), classes and files in benchmarks/README.md
that no longer existed and a comment naming ``providers/config.py`` (now a package), issue 37
item 11. ``test_cited_paths`` holds the code's docstrings to the same rule for paths.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

from tests.unit.architecture.test_cited_paths import _exists

ROOT = Path(__file__).resolve().parents[3]
DOCUMENTS = sorted(
    {
        ROOT / "README.md",
        ROOT / "pyproject.toml",
        *(ROOT / "docs").glob("*.md"),
        *(ROOT / "transcripts").glob("*.md"),
        *(ROOT / "benchmarks").glob("*.md"),
    }
)
ROOTS = "providers|capabilities|telemetry|tests|docs|transcripts|benchmarks|tools"
PATH = re.compile(rf"(?<![\w/.~$-])((?:{ROOTS})/[\w.*<>{{}},/-]*[\w*>}}/])")
DOTTED = re.compile(r"(?<![\w./-])((?:providers|capabilities|telemetry)(?:\.[A-Za-z_]\w*)+)")

GENERATED: dict[str, str] = {
    "benchmarks/results/run.json": "written by benchmarks/run.py, not committed",
}
"""Files the documents cite that a run writes: present after a benchmark, absent in a clone."""

NOT_IN_THE_TREE: dict[str, str] = {
    "providers.client": "the wire client's module before the layout change (history)",
}
"""Names the documents cite on purpose although the tree does not hold them, and why."""

PENDING: dict[str, str] = {
    # "file: cited" → why it may be missing today; a pending entry that exists fails the test.
}


def _cited(pattern: re.Pattern[str]) -> list[tuple[str, str]]:
    found: dict[tuple[str, str], None] = {}
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        for match in pattern.finditer(text):
            found[str(path.relative_to(ROOT)), match.group(1).rstrip(".")] = None
    return list(found)


PATHS = _cited(PATH)
NAMES = _cited(DOTTED)


def _resolves(dotted: str) -> bool:
    """The longest importable module prefix, then attributes for the rest. A module that
    needs an optional extra not installed here is taken as found (CI installs them all)."""
    try:
        if importlib.util.find_spec(dotted) is not None:  # a module: found without running it
            return True
    except ModuleNotFoundError:
        pass
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError as exc:
            if exc.name and not exc.name.startswith(("providers", "capabilities", "telemetry")):
                return True
            continue
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


def test_the_scanner_finds_citations() -> None:
    assert ("README.md", "docs/options.md") in PATHS
    assert ("README.md", "providers.integrations.langchain") in NAMES


def _check(where: str, cited: str, exists: bool) -> None:
    if cited in GENERATED:
        return
    if cited in NOT_IN_THE_TREE:
        assert not exists, f"{cited} exists now: take it off NOT_IN_THE_TREE"
        return
    key = f"{where}: {cited}"
    if key in PENDING:
        assert not exists, f"{key} exists now: take it off PENDING"
        pytest.xfail(PENDING[key])
    assert exists, f"{where} names {cited}, which does not exist"


@pytest.mark.parametrize(("where", "cited"), PATHS)
def test_every_cited_path_exists(where: str, cited: str) -> None:
    _check(where, cited, _exists(cited.rstrip("/")))


@pytest.mark.parametrize(("where", "cited"), NAMES)
def test_every_dotted_name_exists(where: str, cited: str) -> None:
    _check(where, cited, _resolves(cited))

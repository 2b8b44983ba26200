"""Docstrings and comments point only to files in the repository.

A citation such as ``docs/wire.md §2.4``, ``transcripts/vllm/…`` or ``benchmarks/README.md`` in
``providers``, ``capabilities`` or ``telemetry`` must name a file (or, with ``<placeholder>``,
``*`` or ``{a,b}``, at least one file) that exists, and a ``§`` after a ``docs/`` file must name
one of its headings. A path inside another repository is written with that repository in front
(``ollama/ollama/docs/api.md``) and is not checked. Notes kept outside the repository
(``research/…``, ``STYLE.md``) may not be cited at all: what the code relies on belongs in
``docs/``.

``docs/extending.md`` is held to the same: every file it names, and every test (``path::name``, or
``::name`` after a path), must exist, so a recipe cannot send a newcomer to a file that moved.
"""

from __future__ import annotations

import ast
import glob
import io
import itertools
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("providers", "capabilities", "telemetry")

CITED = re.compile(
    r"(?<![\w/.-])((?:docs|transcripts|benchmarks)/(?:[\w.*<>-]|/|\{[^}\s]*\})+)"
    r"(?:\s*§\s*(\d+(?:\.\d+)*))?"
)
OUTSIDE = re.compile(r"(?<![\w/.-])(?:research/|STYLE(?:\.md)?\b|(?<!docs/)(?:wire|FORMATS)\.md)")


def _sources() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def _prose(path: Path) -> Iterator[tuple[int, str]]:
    """Every comment and every string statement (module, class, function and attribute
    docstrings), with its first line number."""
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            yield node.lineno, node.value.value


def _citations() -> list[tuple[str, str, str | None]]:
    found = []
    for path in _sources():
        for line, text in _prose(path):
            for match in CITED.finditer(text):
                where = f"{path.relative_to(ROOT)}:{line}"
                found.append((where, match.group(1).rstrip(".,:;"), match.group(2)))
    return found


def _alternatives(cited: str) -> list[str]:
    """The glob patterns a cited path stands for: ``<x>`` is ``*``, ``{a,b}`` is each of them."""
    pattern = re.sub(r"<[^>]*>", "*", cited)
    parts = re.split(r"\{([^}]*)\}", pattern)
    choices = [[p] if i % 2 == 0 else p.split(",") for i, p in enumerate(parts)]
    return ["".join(combo) for combo in itertools.product(*choices)]


def _exists(cited: str) -> bool:
    for pattern in _alternatives(cited):
        # A transcript may be cited by its stem: the .json/.raw/.sse beside it is the file.
        if glob.glob(str(ROOT / pattern)) or glob.glob(str(ROOT / pattern) + ".*"):
            return True
    return False


CITATIONS = _citations()


def test_the_scanner_finds_the_citations() -> None:
    cited = {path for _, path, _ in CITATIONS}
    assert {"docs/wire.md", "docs/formats.md", "benchmarks/README.md"} <= cited
    assert _alternatives("transcripts/<b>/x.{sse,raw}") == [
        "transcripts/*/x.sse",
        "transcripts/*/x.raw",
    ]


@pytest.mark.parametrize(("where", "cited", "section"), CITATIONS)
def test_every_cited_path_exists(where: str, cited: str, section: str | None) -> None:
    assert _exists(cited), f"{where} cites {cited}, which is not in the repository"
    if section is not None and cited.startswith("docs/") and cited.endswith(".md"):
        text = (ROOT / cited).read_text(encoding="utf-8")
        heading = re.compile(rf"^#+ {re.escape(section)}[.\s]", re.MULTILINE)
        assert heading.search(text), f"{where} cites {cited} §{section}: no such heading"


def test_nothing_cites_notes_outside_the_repository() -> None:
    outside = [
        f"{path.relative_to(ROOT)}:{line}: {match.group(0)}"
        for path in _sources()
        for line, text in _prose(path)
        for match in OUTSIDE.finditer(text)
    ]
    assert outside == []


EXTENDING = ROOT / "docs" / "extending.md"
NAMED = re.compile(
    r"`((?:providers|capabilities|telemetry|tests|docs|transcripts|benchmarks)/[^`\s:]*)?"
    r"(?:::(\w+))?`"
)


def _named_in_extending() -> list[tuple[str, str | None]]:
    """``(path, test or None)`` for every path in backticks; ``::name`` alone names a test of the
    path named last."""
    found: list[tuple[str, str | None]] = []
    last = None
    for match in NAMED.finditer(EXTENDING.read_text(encoding="utf-8")):
        path, test = match.group(1), match.group(2)
        if path is None and test is None:
            continue
        if path is None:
            assert last is not None, f"::{test} follows no path"
            path = last
        last = path
        found.append((path.rstrip("/"), test))
    return found


NAMED_IN_EXTENDING = _named_in_extending()


def test_extending_names_files_and_tests() -> None:
    assert ("providers/backends.py", None) in NAMED_IN_EXTENDING
    assert (
        "tests/unit/providers/test_backends_table.py",
        "test_every_field_of_every_row_is_set",
    ) in NAMED_IN_EXTENDING


@pytest.mark.parametrize(("path", "test"), NAMED_IN_EXTENDING)
def test_every_path_and_test_extending_names_exists(path: str, test: str | None) -> None:
    assert _exists(path), f"docs/extending.md names {path}, which is not in the repository"
    if test is not None:
        source = (ROOT / path).read_text(encoding="utf-8")
        assert re.search(rf"^(?:async )?def {test}\(", source, re.MULTILINE), (
            f"docs/extending.md names {path}::{test}, which is not defined there"
        )

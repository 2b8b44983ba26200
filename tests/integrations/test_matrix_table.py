"""The scenario matrix in docs/integrations.md is the one the matrix tests run.

Each ``test_matrix_<path>.py`` names, in its module docstring, what a user of that path gets in
each of the ten scenarios (``- scenario: what happens``) and runs one ``test_<scenario>`` for
each. This test holds the three together: every file has all ten tests and all ten lines, and
the table in the docs is rendered from those lines, so the docs cannot promise what no test
runs. After changing a docstring, rewrite the table with
``python -m tests.integrations.test_matrix_table``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "integrations.md"
START = "<!-- scenario-matrix: rendered from tests/integrations/test_matrix_*.py -->"
END = "<!-- /scenario-matrix -->"

SCENARIOS = (
    "text_call_in_content",
    "structured_call",
    "reasoning_field",
    "think_tags",
    "harmony",
    "unoffered_call",
    "structured_output",
    "mid_stream_error",
    "per_request_header",
    "session_id",
)
# file stem -> the column heading a reader knows the path by.
PATHS = {
    "agent_framework": "Agent Framework (`OaicompatChatClient`)",
    "pydantic_ai": "pydantic-ai (`OaicompatModel`)",
    "langchain": "LangChain (`ChatOaicompat`)",
    "openai_agents": "OpenAI Agents SDK (`OaicompatAgentsModel`)",
    "openai_transport": "openai-python (`OaicompatTransport`)",
}
_LINE = re.compile(r"^[-*] (\w+): (.+)$")


def _module(stem: str) -> ast.Module:
    path = Path(__file__).with_name(f"test_matrix_{stem}.py")
    return ast.parse(path.read_text(encoding="utf-8"))


def scenario_lines(stem: str) -> dict[str, str]:
    """The ``- scenario: text`` bullets of a matrix file's docstring, wrapped lines joined."""
    docstring = ast.get_docstring(_module(stem)) or ""
    lines: dict[str, str] = {}
    current = ""
    for raw in docstring.splitlines():
        match = _LINE.match(raw.strip())
        if match and not raw.startswith(" "):
            current = match[1]
            lines[current] = match[2]
        elif current and raw.startswith("  ") and raw.strip():
            lines[current] += " " + raw.strip()
        else:
            current = ""
    return lines


def defined_functions(stem: str) -> set[str]:
    """The names of the module-level tests a matrix file defines."""
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
    return {node.name for node in _module(stem).body if isinstance(node, kinds)}


def render() -> str:
    """The markdown table: one row per scenario and path, in the scenarios' order."""
    described = {stem: scenario_lines(stem) for stem in PATHS}
    rows = ["| Scenario | Path | What the user gets |", "| --- | --- | --- |"]
    for scenario in SCENARIOS:
        for stem, heading in PATHS.items():
            text = described[stem].get(scenario, "**missing**").replace("|", "\\|")
            rows.append(f"| `{scenario}` | {heading} | {text} |")
    return "\n".join(rows)


def _table_in_docs() -> str:
    text = DOCS.read_text(encoding="utf-8")
    assert START in text and END in text, f"{DOCS.name} lost its scenario-matrix markers"
    return text.split(START, 1)[1].split(END, 1)[0].strip()


@pytest.mark.parametrize("stem", sorted(PATHS))
def test_each_path_runs_every_scenario(stem: str) -> None:
    missing = [s for s in SCENARIOS if f"test_{s}" not in defined_functions(stem)]
    assert not missing, f"test_matrix_{stem}.py has no test for {missing}"


@pytest.mark.parametrize("stem", sorted(PATHS))
def test_each_path_says_what_every_scenario_gives(stem: str) -> None:
    lines = scenario_lines(stem)
    assert sorted(lines) == sorted(SCENARIOS), f"test_matrix_{stem}.py docstring lines"


def test_the_docs_table_is_the_rendered_matrix() -> None:
    assert _table_in_docs() == render(), (
        "docs/integrations.md's scenario matrix is stale: "
        "run python -m tests.integrations.test_matrix_table"
    )


def _rewrite_docs() -> None:
    text = DOCS.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    DOCS.write_text(f"{head}{START}\n{render()}\n{END}{tail}", encoding="utf-8")


if __name__ == "__main__":
    _rewrite_docs()

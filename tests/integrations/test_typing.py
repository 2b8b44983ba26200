"""``mypy --strict`` over the library and the framework adapters, with the frameworks installed.

The adapters subclass the frameworks' base classes; where a framework is missing, the mypy
overrides in ``pyproject.toml`` read it as ``Any`` and nothing about the subclassing is checked.
Only an environment with every framework installed (the suite's, ``.[frameworks]``) checks the
adapters against the real signatures, so the suite runs that check itself: a framework release
that changes a base-class signature fails here, not in a user's type checker.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.integrations.exchanges import require

ROOT = Path(__file__).resolve().parents[2]

for module, extra in [
    ("agent_framework", "agent-framework"),
    ("pydantic_ai", "pydantic-ai"),
    ("langchain_core", "langchain"),
    ("openai", "openai"),
    ("mypy", "dev"),
]:
    require(module, extra)


def test_the_library_and_the_adapters_type_check_strictly_against_the_real_frameworks(
    tmp_path: Path,
) -> None:
    targets = ["providers", "capabilities", "telemetry", "tests/integrations"]
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path), *targets],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "Success: no issues found" in result.stdout

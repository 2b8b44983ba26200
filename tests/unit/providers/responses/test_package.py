"""The ``providers.responses`` package: its public names, lazy loading, pure parsers, usage."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from providers import responses
from providers.responses import parse_responses_usage
from tests.unit.exported import exported_names

PACKAGE = Path(responses.__file__).parent
PURE = (
    "normalize",
    "output",
    "output_ledger",
    "items",
    "request",
    "conversation",
    "quirks",
)


def test_all_is_exactly_the_public_names() -> None:
    public = {name for name in dir(responses) if not name.startswith("_")}
    modules = {p.stem for p in PACKAGE.glob("*.py")} | {"annotations"}
    assert sorted(exported_names(responses)) == sorted(public - modules)


def test_root_exports_load_lazily() -> None:
    code = (
        "import providers, sys\n"
        "print('providers.responses' in sys.modules)\n"
        "providers.OpenAiCompatibleResponsesClient\n"
        "print('providers.responses' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "True"]


def test_parsers_do_no_io() -> None:
    for name in PURE:
        tree = ast.parse((PACKAGE / f"{name}.py").read_text(encoding="utf-8"))
        imported = {
            alias.name.split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        } | {
            (node.module or "").split(".")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
        }
        assert not imported & {"httpx", "asyncio"}, name


def test_usage_keeps_unknown_counts_and_skips_lists() -> None:
    usage = parse_responses_usage(
        {
            "input_tokens": 225,
            "input_tokens_details": {"cached_tokens": 0, "input_tokens_per_turn": [225]},
            "output_tokens": 38,
            "output_tokens_details": {"reasoning_tokens": 8, "tool_output_tokens": 0},
        }
    )
    assert usage is not None
    assert (usage.input_token_count, usage.output_token_count, usage.total_token_count) == (
        225,
        38,
        263,
    )
    assert (usage.cached_input_token_count, usage.reasoning_token_count) == (0, 8)
    assert usage.additional_counts == {"output_tokens_details.tool_output_tokens": 0}


def test_usage_without_counts_is_none() -> None:
    assert parse_responses_usage({"input_tokens_details": {"cached_tokens": 3}}) is None

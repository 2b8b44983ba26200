"""Small modules with one job each: no module over 400 lines, no function over 60.

A function may be longer only on the hot streaming path, where a helper call per chunk costs
measurable time; its docstring must say "Hot path" so a reader knows the length is deliberate.
"""

from __future__ import annotations

import ast

from tests.unit.architecture.import_graph import ROOT, module_files

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def test_no_module_is_over_the_limit() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in module_files().values()
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_function_is_over_the_limit_unless_it_is_the_hot_path() -> None:
    long = {}
    for path in module_files().values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            length = (node.end_lineno or node.lineno) - node.lineno + 1
            if length > MAX_FUNCTION_LINES and "Hot path" not in (ast.get_docstring(node) or ""):
                long[f"{path.relative_to(ROOT)}:{node.lineno} {node.name}"] = length
    assert long == {}

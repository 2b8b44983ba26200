"""Each package root says what it exports, and exports only that (as httpx's
``test_exported_members`` does): an accidental public name is an API someone will depend on.

Every root follows ``providers/lazy_exports.py``'s convention: each name re-exported once, with
``from module import Name as Name`` (at module level if eager, under ``if TYPE_CHECKING:`` if
the root's table loads it), and ``__all__``, ``__getattr__`` and ``__dir__`` left to
``lazy_exports``. The checker's view and the run-time table are the one place a lazy name is
written twice, so they are compared here; a lazy root must also resolve every name it lists,
which a typo in its table would otherwise hide until a caller's first use.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import re
import types
from pathlib import Path

import pytest

from tests.unit.exported import exported_names

PACKAGES = [
    "providers",
    "providers.abstractions",
    "providers.transport",
    "providers.chat_completions",
    "providers.responses",
    "providers.embeddings",
    "providers.rerank",
    "providers.layers",
    "providers.replay",
    "providers.config",
    "providers.cli",
    "providers.reasoning",
    "providers.text_tool_calls",
    "providers.integrations.agent_framework",
    "providers.integrations.pydantic_ai",
    "capabilities",
    "telemetry",
]

README = Path(__file__).resolve().parents[3] / "README.md"


@pytest.mark.parametrize("name", PACKAGES)
def test_package_exports_exactly_its_all(name: str) -> None:
    package = importlib.import_module(name)
    exported = exported_names(package)
    assert len(set(exported)) == len(exported), "a name is listed twice"
    for public in exported:
        assert getattr(package, public) is not None
    leaked = {
        attribute
        for attribute in dir(package)
        if not attribute.startswith("_")
        and attribute not in exported
        and not isinstance(getattr(package, attribute), types.ModuleType)
    }
    assert leaked == set()


def _undocumented(value: object) -> bool:
    """A class or function without a docstring of its own (a dataclass's generated
    ``Name(field, …)`` signature is not one)."""
    if inspect.isclass(value):
        doc = vars(value).get("__doc__")
        if isinstance(doc, str) and doc.startswith(f"{value.__name__}("):
            doc = None
    elif inspect.isfunction(value):
        doc = value.__doc__
    else:
        return False  # constants and type aliases are documented where they are defined
    return not (isinstance(doc, str) and doc.strip())


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_class_and_function_has_a_docstring(name: str) -> None:
    """The public API is what a newcomer reads with ``help()``: nine names had nothing to say
    (``ChatClient`` and eight error and enum classes, issue 37 item 12)."""
    package = importlib.import_module(name)
    missing = [
        public for public in exported_names(package) if _undocumented(getattr(package, public))
    ]
    assert missing == []


def test_a_missing_docstring_is_caught() -> None:
    class Bare:
        pass

    class Told:
        """Why it exists."""

    assert _undocumented(Bare) and not _undocumented(Told)
    assert _undocumented(lambda: None)
    assert not _undocumented(test_every_exported_class_and_function_has_a_docstring)


def _root_source(name: str) -> ast.Module:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None
    return ast.parse(Path(spec.origin).read_text(encoding="utf-8"))


def _reexports(tree: ast.Module) -> dict[str, tuple[str, bool]]:
    """``Name`` → (its module, whether the import is the checker's view of a lazy name)."""
    found: dict[str, tuple[str, bool]] = {}
    blocks: list[tuple[list[ast.stmt], bool]] = [(tree.body, False)]
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            blocks.append((node.body, True))
    for body, lazy in blocks:
        for node in body:
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    if alias.asname == alias.name:
                        assert alias.name not in found, f"{alias.name} is re-exported twice"
                        found[alias.name] = (node.module, lazy)
    return found


def _table(name: str, tree: ast.Module) -> dict[str, str]:
    """The root's run-time table, ``Name`` → absolute module, read from its one call."""
    calls = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Call)
        and ast.unparse(node.value.func) == "_lazy_exports"
    ]
    assert len(calls) == 1, "a root ends with one _lazy_exports(__name__, {module: names}) call"
    table: dict[str, tuple[str, ...]] = ast.literal_eval(calls[0].args[1])
    return {
        export: importlib.util.resolve_name(module, name)
        for module, names in table.items()
        for export in names
    }


@pytest.mark.parametrize("name", PACKAGES)
def test_the_checkers_view_is_the_run_time_table(name: str) -> None:
    package = importlib.import_module(name)
    tree = _root_source(name)
    reexports = _reexports(tree)
    assert sorted(reexports) == sorted(exported_names(package))
    lazy = {export: module for export, (module, is_lazy) in reexports.items() if is_lazy}
    assert _table(name, tree) == lazy
    written = {
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    } | {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert not written & {"__all__", "__getattr__", "__dir__"}, "lazy_exports writes these"


def test_a_lazy_root_resolves_on_first_use_and_rejects_an_unknown_name() -> None:
    from providers import layers

    assert "RetryPolicy" in dir(layers)
    assert layers.RetryPolicy is importlib.import_module("providers.layers.retry").RetryPolicy
    with pytest.raises(AttributeError, match="no attribute 'RetryPolicyy'"):
        # The misspelling is the point: mypy rejects it too, since the root has no __getattr__.
        layers.RetryPolicyy  # type: ignore[attr-defined]  # noqa: B018


def _readme_without_dotnet_names() -> str:
    """The README, with the MEAI table's left column (.NET's names, not ours) left out."""
    lines = README.read_text(encoding="utf-8").splitlines()
    kept: list[str] = []
    in_table = False
    for line in lines:
        if line.startswith("### Microsoft.Extensions.AI"):
            in_table = True
        elif in_table and line.startswith("|"):
            kept.append(line.split("|")[2])
            continue
        elif in_table and line.startswith("#"):
            in_table = False
        kept.append(line)
    return "\n".join(kept)


def test_every_name_the_readme_imports_from_providers_is_exported() -> None:
    import providers

    text = _readme_without_dotnet_names()
    shown = set()
    blocks = re.findall(r"^from providers import ([\w, ]+)$", text, re.MULTILINE)
    blocks += re.findall(r"^from providers import \(([^)]*)\)", text, re.MULTILINE)
    for block in blocks:
        shown |= {part.strip() for part in block.replace("\n", ",").split(",") if part.strip()}
    shown |= set(re.findall(r"`(\w+(?:ChatClient|Error|Policy|Timeouts))\b", text))
    assert shown, "the README shows no import from providers"
    missing = sorted(name for name in shown if not hasattr(providers, name))
    assert missing == []
    assert shown <= set(exported_names(providers))

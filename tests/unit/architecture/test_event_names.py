"""One scheme for log event names, defined in one module (``providers.abstractions.event_names``).

Events used to be logged under three prefixes (``llm.*``, ``oaicompat.*``, ``capabilities.*``,
and one ``http.*``), some as literals at the call site. Now every name is a constant of that
module, ``oaicompat.<area>.<event>``, and every log call passes one.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from providers.abstractions import event_names
from tests.unit.architecture.import_graph import PACKAGES, ROOT

SCHEME = re.compile(r"oaicompat\.[a-z_]+\.[a-z_]+")
LOG_METHODS = {"debug", "info", "warning", "error", "_warn"}
"""The event logger's methods, and ``chat_completions.request``'s wrapper around one."""

OTEL_ATTRIBUTES = Path("telemetry/otel.py")
"""Span attributes follow OpenTelemetry's naming (``oaicompat.request.status``): not events."""


def _library_files() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def test_every_name_follows_the_scheme_once() -> None:
    names = {
        name: value
        for name, value in vars(event_names).items()
        if name.isupper() and isinstance(value, str)
    }
    assert sorted(names) == sorted(event_names.__all__)
    assert [value for value in names.values() if not SCHEME.fullmatch(value)] == []
    assert len(set(names.values())) == len(names), "two constants name the same event"


def _literal_events(path: Path) -> list[str]:
    """Log calls in ``path`` whose event is written as a literal, not a constant."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        method = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if method in LOG_METHODS and isinstance(node.args[0], ast.Constant | ast.JoinedStr):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_log_calls_pass_a_constant_never_a_literal() -> None:
    assert [hit for path in _library_files() for hit in _literal_events(path)] == []


ASGI_MESSAGES = frozenset(
    {"http.request", "http.disconnect", "http.response.start", "http.response.body"}
)
"""The ASGI protocol's message types (the gateway's server speaks them): not event names."""


def test_no_event_is_named_outside_the_one_module() -> None:
    retired = re.compile(r"(llm|http)\.[a-z_.]+|capabilities\.[a-z_]+\.?[a-z_.]*")
    modules = {".".join(path.relative_to(ROOT).with_suffix("").parts) for path in _library_files()}
    stray = []
    for path in _library_files():
        if path.name == "event_names.py" or path.relative_to(ROOT) == OTEL_ATTRIBUTES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            text = node.value
            if text in ASGI_MESSAGES:
                continue
            if SCHEME.fullmatch(text) or (retired.fullmatch(text) and text not in modules):
                stray.append(f"{path.relative_to(ROOT)}:{node.lineno}: {text}")
    assert stray == []

"""The package's public surface and its import-time promises."""

from __future__ import annotations

import subprocess
import sys

import telemetry
from tests.unit.exported import exported_names


def test_all_is_exactly_the_public_names() -> None:
    # The package root is lazy: a public name is either already bound or served on first use
    # (``tests/unit/architecture/test_exported_names.py`` compares the root's table with its
    # re-exports).
    public = {
        name
        for name, value in vars(telemetry).items()
        if not name.startswith("_") and not isinstance(value, type(telemetry))
    } | {name for name in dir(telemetry) if not name.startswith("_")} - {
        name for name, value in vars(telemetry).items() if isinstance(value, type(telemetry))
    }
    exported = exported_names(telemetry)
    assert set(exported) == public
    for name in exported:
        assert not isinstance(getattr(telemetry, name), type(telemetry)), name
    assert len(exported) == len(public)  # no duplicates (ruff RUF022 keeps the order)


def test_importing_the_library_does_not_import_opentelemetry() -> None:
    code = (
        "import sys, providers, telemetry, telemetry.otel; "
        "print(sorted(m for m in sys.modules if m.startswith('opentelemetry')))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_the_library_never_configures_structlog() -> None:
    from pathlib import Path

    root = Path(telemetry.__file__).parent
    for path in root.glob("*.py"):
        assert "structlog.configure" not in path.read_text(encoding="utf-8"), path


def test_without_the_extra_the_otel_client_names_it() -> None:
    code = (
        "import sys; sys.modules['opentelemetry'] = None\n"
        "from telemetry import OpenTelemetryChatClient, TelemetryChatClient\n"
        "from providers import OpenAiCompatibleChatClient\n"
        "inner = OpenAiCompatibleChatClient('http://x.test')\n"
        "TelemetryChatClient(inner)  # the structlog layer needs nothing extra\n"
        "try:\n"
        "    OpenTelemetryChatClient(inner)\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert "otel" in result.stdout and "oaicompat[otel]" in result.stdout

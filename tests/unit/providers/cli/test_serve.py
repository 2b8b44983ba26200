"""``oaicompat serve`` refuses a start it cannot make safely, in one line and exit code 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from providers.cli import main

ROOT = Path(__file__).resolve().parents[4]
CONFIG = """\
backends:
  local: {base_url: "http://127.0.0.1:9", model_id: m}
roles: {main: local}
"""


def _config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "backends.yaml"
    path.write_text(CONFIG + extra, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "case",
    [
        ("serve: {api_keys_env: GW_TEST_KEYS}\n", [], "GW_TEST_KEYS"),
        ("serve: {forward_headers: [Authorization]}\n", [], "never forwarded"),
        ("serve: {port: 70000}\n", [], "serve.port"),
        ("", ["--workers", "0"], "--workers"),
    ],
)
def test_an_unsafe_or_impossible_start_is_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    case: tuple[str, list[str], str],
) -> None:
    extra, argv, message = case
    monkeypatch.delenv("GW_TEST_KEYS", raising=False)
    path = _config(tmp_path, extra)
    assert main(["serve", "--config", str(path), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.startswith("oaicompat: ")
    assert "Traceback" not in err


def test_a_missing_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--config", str(tmp_path / "nope.yaml")]) == 2
    assert "not found" in capsys.readouterr().err


def test_the_module_level_app_reads_the_file_the_environment_names(tmp_path: Path) -> None:
    path = _config(tmp_path)
    code = "from providers.gateway.asgi import app; print([e.name for e in app.entries.table])"
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={"OAICOMPAT_CONFIG": str(path), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stdout.strip() == "['main', 'local']"
    assert result.stderr == ""


def test_the_readmes_example_configuration_loads_with_its_models() -> None:
    # deferred: the gateway's table, as `oaicompat serve --config docs/serve.yaml` builds it
    from providers.config import load_config
    from providers.gateway.model_table import ModelTable

    config = load_config(ROOT / "docs" / "serve.yaml")
    assert [entry.name for entry in ModelTable(config)] == [
        "main",
        "local",
        "local-llama",
        "gpu-vllm",
    ]
    assert (config.serve.host, config.serve.port) == ("127.0.0.1", 8000)

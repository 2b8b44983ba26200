"""The package as a user installs it: a wheel in a fresh virtualenv outside the checkout.

``oaicompat demo`` once crashed outside the tree (the wheel had no transcripts) while every test
passed, because the tests import the checkout (issue 37 item 1). Here the wheel is built from a
copy of the sources, installed with no network into a new virtualenv in a temporary folder, and
``oaicompat --help``, ``oaicompat demo`` and the README's first sample run from there, with no
``PYTHONPATH`` and the checkout nowhere on the path.

The virtualenv sees this environment's packages through a ``.pth`` line (its own
``site-packages`` comes first), so nothing is downloaded but the build backend, which pip caches:
about 15 s on two cores, most of it ``pip wheel``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from providers.replay.server import ReplayServer
from tests.unit.architecture.doc_samples import SampleServer, prepared, samples

ROOT = Path(__file__).resolve().parents[2]


def _run(argv: list[str | Path], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return subprocess.run(
        [str(a) for a in argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def _checked(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, f"rc {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The new virtualenv's folder, the wheel installed in it."""
    work = tmp_path_factory.mktemp("installed")
    source = work / "source"
    for package in ("providers", "capabilities", "telemetry"):
        # symlinks=False: the demo's captures are links into transcripts/, copied as files
        shutil.copytree(
            ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    _checked(
        _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", "dist", source], work)
    )
    (wheel,) = (work / "dist").glob("oaicompat-*.whl")
    venv = work / "venv"
    _checked(_run([sys.executable, "-m", "venv", "--without-pip", venv], work))
    (site,) = (venv / "lib").glob("python*/site-packages")
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (site / "outer-environment.pth").write_text("\n".join(sorted(here)) + "\n")
    install = ["-m", "pip", "install", "-q", "--no-deps", "--no-index", "--force-reinstall"]
    _checked(_run([venv / "bin" / "python", *install, wheel], work))
    return venv


def test_the_installed_package_is_the_wheel(venv: Path) -> None:
    code = "import providers, capabilities, telemetry; print(providers.__file__)"
    where = Path(_checked(_run([venv / "bin" / "python", "-c", code], venv)).strip())
    assert venv in where.parents and ROOT not in where.parents


def test_help(venv: Path) -> None:
    out = _checked(_run([venv / "bin" / "oaicompat", "--help"], venv))
    assert "exit codes:" in out and "demo" in out


def test_demo(venv: Path) -> None:
    result = _run([venv / "bin" / "oaicompat", "demo"], venv)
    out = _checked(result)
    assert "Traceback" not in result.stderr
    assert out.count("'It is sunny in Paris.'") == 3  # one answer from each of three servers
    assert "get_weather({'city': 'Paris'" in out


@pytest.fixture
async def server() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(SampleServer()) as running:
        yield running


async def test_the_first_readme_sample(venv: Path, server: ReplayServer) -> None:
    first = next(s for s in samples() if s.path == "README.md" and s.language == "python")
    code = prepared(first.code, server.base_url)
    result = await asyncio.to_thread(_run, [venv / "bin" / "python", "-c", code], venv)
    assert "It is sunny in Paris." in _checked(result)
    assert server.requests

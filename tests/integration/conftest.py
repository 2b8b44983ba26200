"""Fixtures that start a real ``llama-server`` with a tiny generated model.

Without the server (the ``integration`` extra not installed, or no compiler to build it) the
tests skip with the reason — except on CI (``CI`` set), where a skip would hide a broken set-up,
so they fail instead.

The vLLM and SGLang servers come from one pool for the session (``rigs/pool.py``, loaded here),
which also orders the tests by server set.

Tests marked ``rerecord`` rewrite committed transcripts, so they run only with
``--rerecord-transcripts`` (option in ``tests/conftest.py``); without it they are deselected,
not skipped (on CI a skipped integration test fails the run).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

RERECORD_OPTION = "--rerecord-transcripts"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"rerecord: rewrites committed transcripts; runs only with {RERECORD_OPTION}"
    )
    # One pool of vLLM/SGLang servers for the session, tests ordered by server set.
    from tests.integration.rigs import pool

    if not config.pluginmanager.is_registered(pool):
        config.pluginmanager.register(pool, "oaicompat-rig-pool")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption(RERECORD_OPTION, default=False):
        return
    deselected = [item for item in items if item.get_closest_marker("rerecord")]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if not item.get_closest_marker("rerecord")]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (on CI the integration suite must run, not skip)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def rig() -> dict[str, Any]:
    """The server binary, the tiny model and the chat templates, or a skip/fail with the reason."""
    try:
        from tests.integration.llama_server import llama_server_binary
        from tests.integration.tiny_model import llama_cpp_sdist_file, tiny_gguf

        binary = llama_server_binary()
        model = tiny_gguf()
        templates = {
            "qwen3": llama_cpp_sdist_file("llama.cpp/models/templates/Qwen-Qwen3-0.6B.jinja"),
            "qwen25": llama_cpp_sdist_file(
                "llama.cpp/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja"
            ),
        }
    except Exception as exc:  # ImportError, a failed build, no sdist: all mean "no rig here"
        _unavailable(f"llama-server rig unavailable: {exc!r}")
        raise  # unreachable: _unavailable always raises
    return {"binary": binary, "model": model, "templates": templates}


def _server(rig: dict[str, Any], template: str, *extra: str) -> Iterator[Any]:
    from tests.integration.llama_server import LlamaServer

    template_file: Path = rig["templates"][template]
    with LlamaServer(rig["model"], chat_template_file=template_file, extra_args=extra) as server:
        yield server


@pytest.fixture(scope="session")
def reasoning_server(rig: dict[str, Any]) -> Iterator[Any]:
    """Qwen3 template, the server splits ``<think>`` into ``reasoning_content``."""
    yield from _server(rig, "qwen3", "--reasoning-format", "deepseek")


@pytest.fixture(scope="session")
def think_in_content_server(rig: dict[str, Any]) -> Iterator[Any]:
    """Qwen3 template, ``--reasoning-format none``: ``<think>`` stays in ``content``."""
    yield from _server(rig, "qwen3", "--reasoning-format", "none")


@pytest.fixture(scope="session")
def plain_server(rig: dict[str, Any]) -> Iterator[Any]:
    """Qwen2.5 template, no reasoning; context 4096."""
    yield from _server(rig, "qwen25")

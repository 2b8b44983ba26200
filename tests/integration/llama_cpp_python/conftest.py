"""Fixtures that start llama-cpp-python's server (``python -m llama_cpp.server``) on the tiny model.

Without ``llama-cpp-python[server]`` (the ``integration`` extra not installed, or its build
failed) the tests skip with the reason, except on CI (``CI`` set), where they fail: a skipped
witness proves nothing.

Two servers, one per chat handler a user can get:

* ``lcp_server``: no ``--chat_format``, so the GGUF's own template (Qwen2's ChatML) through
  llama-cpp-python's Jinja handler. It passes ``grammar`` and ``logit_bias`` on, renders the
  tools into nothing and parses no calls: tool markup and ``<think>`` come back as content, for
  our text recovery. This is where the shared scenarios run.
* ``lcp_function_calling_server``: ``--chat_format chatml-function-calling``, the handler that
  answers structured ``tool_calls``. It drives the model with grammars of its own and ignores
  the request's, so it cannot be made to write a scenario's text; a tool schema that allows one
  value per argument still fixes what it calls.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.llama_cpp_python.server import LlamaCppPythonServer


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (on CI the integration suite must run, not skip)")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def lcp_model() -> Path:
    """The tiny GGUF, once ``llama_cpp.server`` is known to be importable here."""
    try:
        missing = [
            name
            for name in ("llama_cpp", "fastapi", "sse_starlette", "uvicorn")
            if importlib.util.find_spec(name) is None
        ]
        if missing:
            raise ModuleNotFoundError(f"llama-cpp-python[server] not installed: no {missing}")
        from tests.integration.tiny_model import tiny_gguf

        model = tiny_gguf()
    except Exception as exc:  # ImportError, no sdist for the vocabulary: "no rig here"
        _unavailable(f"llama-cpp-python rig unavailable: {exc!r}")
        raise  # unreachable: _unavailable always raises
    return model


@pytest.fixture(scope="package")
def lcp_server(lcp_model: Path) -> Iterator[LlamaCppPythonServer]:
    """The GGUF's own chat template (no ``--chat_format``)."""
    with LlamaCppPythonServer(lcp_model) as server:
        yield server


@pytest.fixture(scope="package")
def lcp_function_calling_server(lcp_model: Path) -> Iterator[LlamaCppPythonServer]:
    """``--chat_format chatml-function-calling``."""
    with LlamaCppPythonServer(lcp_model, chat_format="chatml-function-calling") as server:
        yield server

"""Test configuration shared by every suite."""

from __future__ import annotations

import ssl
from collections.abc import Callable
from typing import Any

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--rerecord-transcripts",
        action="store_true",
        default=False,
        help="re-record transcripts/llamacpp/captured--* from a live llama-server "
        "(tests/integration/test_llamacpp_rerecord.py); off by default",
    )


@pytest.fixture
def authorities_loaded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every time a TLS context loads authorities (a file, a directory or the system's): the
    deferred-TLS tests and the proxy tests check that an ``http://`` endpoint loads none."""
    loads: list[str] = []

    def recording(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def load(self: ssl.SSLContext, *args: Any, **kwargs: Any) -> Any:
            loads.append(name)
            return original(self, *args, **kwargs)

        return load

    for name in ("load_verify_locations", "load_default_certs", "set_default_verify_paths"):
        monkeypatch.setattr(ssl.SSLContext, name, recording(name, getattr(ssl.SSLContext, name)))
    return loads

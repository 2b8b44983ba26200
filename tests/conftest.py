"""Test configuration shared by every suite."""

from __future__ import annotations

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--rerecord-transcripts",
        action="store_true",
        default=False,
        help="re-record transcripts/llamacpp/captured--* from a live llama-server "
        "(tests/integration/test_llamacpp_rerecord.py); off by default",
    )

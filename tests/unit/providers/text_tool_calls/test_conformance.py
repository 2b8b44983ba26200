"""The vectors from vLLM's and SGLang's own parser tests (``conformance.py``): every one agrees
except the deliberate differences listed here, each with its reason."""

from __future__ import annotations

from typing import Any

import pytest

from providers.reasoning import FORMATS as REASONING
from providers.text_tool_calls import FORMAT_NAMES
from tests.unit.providers.text_tool_calls.conformance import disagreement, group, load, report

DELIBERATE = {
    # vLLM skips a v11 call that has no arguments at all; here a call cut short is surfaced,
    # with an ``error`` so that it is never executed.
    "vllm tests/tool_parsers/test_mistral_tool_parser.py::"
    "test_extract_tool_calls_v11_without_args_skipped",
}

VECTORS = load()


@pytest.mark.parametrize("vector", VECTORS, ids=lambda v: f"{group(v)} {v['id']}")
def test_vector(vector: dict[str, Any]) -> None:
    reason = disagreement(vector)
    if vector["id"] in DELIBERATE:
        assert reason is not None, "a deliberate difference that no longer differs"
    else:
        assert reason is None, reason


def test_every_format_agrees_on_at_least_nine_in_ten() -> None:
    for name, (ok, total) in report().items():
        assert ok / total >= 0.9, (name, ok, total)


def test_the_vectors_cover_every_format() -> None:
    covered = {v["format"] for v in VECTORS}
    assert set(FORMAT_NAMES) <= covered
    assert set(REASONING) - {"auto", "gpt_oss"} - covered == set()

"""The reasoning family table: which ids land on which row (HF ids, Ollama tags, GGUF names),
that rows never swallow a longer name, and that the rows the capability table also has share
its names and patterns."""

from __future__ import annotations

import re

import pytest

from capabilities.family_table import FAMILIES
from capabilities.reasoning_families import (
    _HINTS,
    REASONING_FAMILIES,
    reasoning_family_for,
    reasoning_family_named,
)


@pytest.mark.parametrize(
    ("model_id", "family"),
    [
        ("Qwen/Qwen3-8B", "qwen3"),
        ("qwen3:8b", "qwen3"),
        ("Qwen3-8B-Q4_K_M.gguf", "qwen3"),
        ("unsloth/Qwen3-30B-A3B-GGUF", "qwen3"),
        ("Qwen/Qwen3.5-4B", "qwen3.5"),
        ("qwen3.5:4b", "qwen3.5"),
        ("Qwen/QwQ-32B", "qwq"),
        ("qwq:32b", "qwq"),
        ("qwq-32b-q4_k_m.gguf", "qwq"),
        ("Qwen/Qwen3-30B-A3B-Thinking-2507", "qwen3-thinking-2507"),
        ("qwen3:30b-a3b-thinking-2507-q4_K_M", "qwen3-thinking-2507"),
        ("Qwen3-4B-Thinking-2507-UD-Q4_K_XL.gguf", "qwen3-thinking-2507"),
        ("Qwen/Qwen3-4B-Instruct-2507", "qwen3-instruct-2507"),
        ("qwen3:4b-instruct-2507-fp16", "qwen3-instruct-2507"),
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3-coder"),
        ("qwen3-coder:30b", "qwen3-coder"),
        ("Qwen3-Coder-480B-A35B-Instruct-Q2_K.gguf", "qwen3-coder"),
        ("deepseek-ai/DeepSeek-R1", "deepseek-r1"),
        ("deepseek-r1:8b", "deepseek-r1"),
        ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", "deepseek-r1"),
        ("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", "deepseek-r1"),  # R1 before its base qwen3
        ("DeepSeek-R1-Distill-Llama-8B-Q4_K_M.gguf", "deepseek-r1"),
        ("deepseek-ai/DeepSeek-V3.1", "deepseek-v3.1"),
        ("deepseek-ai/DeepSeek-V3.1-Terminus", "deepseek-v3.1"),
        ("deepseek-v3.1:671b", "deepseek-v3.1"),
        ("deepseek-ai/DeepSeek-V3.2-Exp", "deepseek-v3.2"),
        ("zai-org/GLM-4.5-Air", "glm"),
        ("zai-org/GLM-4.6", "glm"),
        ("GLM-4.7-Flash-Q4_K_M.gguf", "glm"),
        ("glm-4.6:cloud", "glm"),
        ("openai/gpt-oss-20b", "gpt-oss"),
        ("gpt-oss:120b", "gpt-oss"),
        ("gpt-oss-20b-mxfp4.gguf", "gpt-oss"),
        ("ibm-granite/granite-3.3-8b-instruct", "granite"),
        ("ibm-granite/granite-3.2-2b-instruct", "granite"),
        ("granite3.3:8b", "granite"),
        ("granite-3.3-2b-instruct-Q4_K_M.gguf", "granite"),
        ("ibm-granite/granite-4.0-h-small", "granite-4"),
        ("granite4:tiny-h", "granite-4"),
    ],
)
def test_an_id_lands_on_its_family(model_id: str, family: str) -> None:
    row = reasoning_family_for(model_id)
    assert row is not None, model_id
    assert row.family == family


@pytest.mark.parametrize(
    "model_id",
    [
        None,
        "",
        "tiny-model",
        "meta-llama/Llama-3.1-8B-Instruct",
        "Qwen/Qwen2.5-7B-Instruct",
        "Qwen/Qwen3-VL-8B-Instruct",  # an offshoot with its own card
        "qwen30-b",  # glued to a longer name
        "deepseek-ai/DeepSeek-V3",  # V3 has no thinking switch in this table
        "deepseek-v3.10",
        "THUDM/glm-4-9b-chat",  # GLM-4 (2024): no thinking
        "ibm-granite/granite-3.1-8b-instruct",  # before thinking came to Granite
        "gpt-ossify",
    ],
)
def test_an_id_of_no_listed_family_lands_nowhere(model_id: str | None) -> None:
    assert reasoning_family_for(model_id) is None


def test_the_lookup_is_cached_per_id() -> None:
    first = reasoning_family_for("Qwen/Qwen3-14B")
    assert reasoning_family_for("Qwen/Qwen3-14B") is first


def test_every_pattern_needs_a_hint_word() -> None:
    """The lookup skips the regexes for an id holding none of ``_HINTS``: each row's pattern
    must contain one, or its ids would never be tried."""
    for row in REASONING_FAMILIES:
        assert any(hint in row.pattern.replace("\\", "") for hint in _HINTS), row.family


def test_shared_families_have_the_capability_tables_names_and_patterns() -> None:
    capability = {row.family: row.pattern.pattern for row in FAMILIES}
    shared = [row for row in REASONING_FAMILIES if row.family in capability]
    assert {row.family for row in shared} >= {
        "qwen3",
        "qwen3-coder",
        "qwen3-thinking-2507",
        "qwen3-instruct-2507",
        "qwq",
        "deepseek-r1",
        "gpt-oss",
    }
    for row in shared:
        assert row.pattern == capability[row.family], row.family


def test_each_row_is_complete_for_its_mode() -> None:
    names = [row.family for row in REASONING_FAMILIES]
    assert len(names) == len(set(names))
    for row in REASONING_FAMILIES:
        re.compile(row.pattern)
        assert row.evidence
        if row.mode == "switch":
            assert row.switch_kwargs and not row.efforts
        elif row.mode == "levels":
            assert row.efforts and row.default_effort in row.efforts and not row.switch_kwargs
        else:
            assert not row.switch_kwargs and not row.efforts


@pytest.mark.parametrize(
    ("family", "mode", "kwargs", "default_on"),
    [
        ("qwen3", "switch", ("enable_thinking",), True),
        ("glm", "switch", ("enable_thinking",), True),
        ("deepseek-v3.1", "switch", ("thinking",), False),
        ("deepseek-v3.2", "switch", ("thinking", "enable_thinking"), False),
        ("granite", "switch", ("thinking",), False),
        ("qwq", "always", (), False),
        ("deepseek-r1", "always", (), False),
        ("qwen3-thinking-2507", "always", (), False),
        ("qwen3-instruct-2507", "never", (), False),
        ("qwen3-coder", "never", (), False),
        ("granite-4", "never", (), False),
        ("gpt-oss", "levels", (), False),
    ],
)
def test_each_family_switches_as_its_template_does(
    family: str, mode: str, kwargs: tuple[str, ...], default_on: bool
) -> None:
    row = reasoning_family_named(family)
    assert row is not None
    assert (row.mode, row.switch_kwargs, row.thinks_by_default) == (mode, kwargs, default_on)


def test_gpt_oss_takes_three_levels_and_defaults_to_medium() -> None:
    row = reasoning_family_named("gpt-oss")
    assert row is not None
    assert (row.efforts, row.default_effort) == (("low", "medium", "high"), "medium")


def test_a_family_name_is_read_as_written_in_any_case() -> None:
    assert reasoning_family_named(" Qwen3 ") is reasoning_family_named("qwen3") is not None
    assert reasoning_family_named("llama-3.x") is None
    assert reasoning_family_named(None) is None

"""The family table: which ids match which row, and that rows never swallow longer names."""

from __future__ import annotations

import pytest

from capabilities import FAMILIES, family_for


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("Qwen/Qwen3-8B", "qwen3"),
        ("qwen3:8b", "qwen3"),
        ("Qwen3-8B-Q4_K_M.gguf", "qwen3"),
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3-coder"),
        ("Qwen/Qwen3-4B-Instruct-2507", "qwen3-instruct-2507"),
        ("Qwen/Qwen3-30B-A3B-Thinking-2507", "qwen3-thinking-2507"),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5"),
        ("qwq:32b", "qwq"),
        ("deepseek-r1:8b", "deepseek-r1"),
        ("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", "deepseek-r1"),  # a distill is R1 first
        ("openai/gpt-oss-20b", "gpt-oss"),
        ("meta-llama-3.1-8b-instruct", "llama-3.x"),
        ("llama3.2:3b", "llama-3.x"),
        ("meta-llama/Llama-3.2-11B-Vision-Instruct", "llama-3.2-vision"),
        ("meta-llama/Meta-Llama-3-8B-Instruct", "llama-3"),
        ("mistral:7b", "mistral-7b"),
        ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b"),
        ("mistralai/Mistral-Nemo-Instruct-2407", "mistral-nemo"),
        ("mistralai/Mistral-Small-3.1-24B-Instruct-2503", "mistral-small-3.1"),
        ("google/gemma-3-27b-it", "gemma-3"),
        ("gemma3:1b", "gemma-3-1b"),
        ("microsoft/phi-4", "phi-4"),
        ("microsoft/Phi-4-mini-instruct", "phi-4-mini"),
        ("microsoft/Phi-4-reasoning", "phi-4-reasoning"),
    ],
)
def test_known_names(name: str, family: str) -> None:
    row = family_for([name])
    assert row is not None and row.family == family


@pytest.mark.parametrize(
    "name",
    ["qwen3.5-9b", "qwen30", "mistral-large", "magistral-small", "codellama:7b", "gemma3n:e4b",
     "rig/tiny.gguf", ""],
)  # fmt: skip
def test_longer_or_unknown_names_do_not_match(name: str) -> None:
    assert family_for([name]) is None


def test_names_are_tried_in_priority_order() -> None:
    row = family_for([None, "my-finetune", "Qwen3-8B-Q4_K_M.gguf", "llama"])
    assert row is not None and row.family == "qwen3"


def test_every_row_cites_its_evidence_and_has_positive_numbers() -> None:
    for row in FAMILIES:
        assert row.evidence.startswith("huggingface.co/"), row.family
        assert row.context_window is None or row.context_window > 0
        assert row.max_output_tokens is None or row.max_output_tokens > 0
        assert row.input_modalities[0] == "text"

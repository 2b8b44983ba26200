"""The family table: which ids match which row, what each row says, and that rows never swallow
longer names or a family's offshoots whose cards differ."""

from __future__ import annotations

import pytest

from capabilities import FAMILIES, family_for

_TEXT = ("text",)
_IMAGE = ("text", "image")


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("Qwen/Qwen3-8B", "qwen3"),
        ("qwen3:8b", "qwen3"),
        ("Qwen3-8B-Q4_K_M.gguf", "qwen3"),
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen3-coder"),
        ("qwen3-coder:30b", "qwen3-coder"),
        ("Qwen/Qwen3-4B-Instruct-2507", "qwen3-instruct-2507"),
        ("qwen3:4b-instruct-2507-q4_K_M", "qwen3-instruct-2507"),  # Ollama tag, not plain qwen3
        ("Qwen/Qwen3-30B-A3B-Thinking-2507", "qwen3-thinking-2507"),
        ("qwen3:30b-a3b-thinking-2507", "qwen3-thinking-2507"),
        ("Qwen/Qwen2.5-7B-Instruct", "qwen2.5"),
        ("Qwen/Qwen2.5-Coder-7B-Instruct", "qwen2.5-coder"),
        ("qwq:32b", "qwq"),
        ("Qwen/QwQ-32B-Preview", "qwq"),
        ("deepseek-r1:8b", "deepseek-r1"),
        ("deepseek-ai/DeepSeek-R1-0528-Qwen3-8B", "deepseek-r1"),  # a distill is R1 first
        ("openai/gpt-oss-20b", "gpt-oss"),
        ("meta-llama-3.1-8b-instruct", "llama-3.x"),
        ("llama3.2:3b", "llama-3.x"),
        ("meta-llama/Llama-3.2-11B-Vision-Instruct", "llama-3.2-vision"),
        ("llama3.2-vision:11b", "llama-3.2-vision"),
        ("meta-llama/Meta-Llama-3-8B-Instruct", "llama-3"),
        ("mistral:7b", "mistral-7b"),
        ("mistralai/Mistral-7B-Instruct-v0.3", "mistral-7b"),
        ("mistralai/Mistral-7B-Instruct-v0.1", "mistral-7b-v0.1"),
        ("mistral:7b-instruct-v0.1-q4_0", "mistral-7b-v0.1"),
        ("mistralai/Mistral-Nemo-Instruct-2407", "mistral-nemo"),
        ("mistralai/Mistral-Small-3.1-24B-Instruct-2503", "mistral-small-3.1"),
        ("mistralai/Mistral-Small-3.2-24B-Instruct-2506", "mistral-small-3.1"),
        ("mistral-small3.1:24b", "mistral-small-3.1"),
        ("google/gemma-3-27b-it", "gemma-3"),
        ("gemma3:1b", "gemma-3-1b"),
        ("google/gemma-3-270m-it", "gemma-3-1b"),  # the other 32K text-only size
        ("microsoft/phi-4", "phi-4"),
        ("phi4:14b", "phi-4"),
        ("microsoft/Phi-4-mini-instruct", "phi-4-mini"),
        ("microsoft/Phi-4-mini-reasoning", "phi-4-mini-reasoning"),  # not phi-4-mini's tools
        ("microsoft/Phi-4-reasoning", "phi-4-reasoning"),
        ("microsoft/Phi-4-reasoning-plus", "phi-4-reasoning"),
    ],
)
def test_known_names(name: str, family: str) -> None:
    row = family_for([name])
    assert row is not None and row.family == family


@pytest.mark.parametrize(
    "name",
    ["qwen3.5-9b", "qwen30", "mistral-large", "magistral-small", "codellama:7b", "gemma3n:e4b",
     "rig/tiny.gguf", "",
     # Offshoots whose own cards differ from the parent row: left to the probes.
     "Qwen/Qwen3-VL-8B-Instruct", "qwen3-vl:8b", "Qwen/Qwen3-Next-80B-A3B-Instruct",
     "Qwen/Qwen3-Embedding-8B", "Qwen/Qwen2.5-VL-7B-Instruct", "Qwen/Qwen2.5-Math-7B-Instruct",
     "mistralai/Mistral-Small-24B-Instruct-2501", "microsoft/Phi-4-mini-flash-reasoning",
     "microsoft/Phi-4-multimodal-instruct"],
)  # fmt: skip
def test_longer_or_unknown_names_do_not_match(name: str) -> None:
    assert family_for([name]) is None


# family: (context_window, max_output_tokens, input_modalities, supports_tools, supports_reasoning),
# each from the card or config.json cited next to the row in family_table.py.
EXPECTED = {
    "deepseek-r1": (131072, None, _TEXT, None, True),
    "qwen3-coder": (262144, None, _TEXT, True, False),
    "qwen3-thinking-2507": (262144, None, _TEXT, True, True),
    "qwen3-instruct-2507": (262144, None, _TEXT, True, False),
    "qwen3": (32768, None, _TEXT, True, True),  # native, not the 131,072 YaRN length
    "qwq": (32768, None, _TEXT, True, True),  # 131,072 needs YaRN
    "qwen2.5-coder": (32768, None, _TEXT, None, False),
    "qwen2.5": (32768, 8192, _TEXT, True, False),
    "gpt-oss": (131072, None, _TEXT, True, True),
    "llama-3.2-vision": (131072, None, _IMAGE, None, False),
    "llama-3.x": (131072, None, _TEXT, True, False),
    "llama-3": (8192, None, _TEXT, None, False),
    "mistral-small-3.1": (131072, None, _IMAGE, True, False),
    "mistral-nemo": (131072, None, _TEXT, True, False),  # not config.json's 1,024,000
    "mistral-7b-v0.1": (8192, None, _TEXT, None, False),
    "mistral-7b": (32768, None, _TEXT, None, False),
    "gemma-3-1b": (32768, None, _TEXT, None, False),
    "gemma-3": (131072, None, _IMAGE, None, False),
    "phi-4-mini-reasoning": (131072, None, _TEXT, None, True),
    "phi-4-reasoning": (32768, None, _TEXT, None, True),
    "phi-4-mini": (131072, None, _TEXT, True, False),
    "phi-4": (16384, None, _TEXT, None, False),
}


def test_the_table_has_exactly_the_checked_families_once_each() -> None:
    families = [row.family for row in FAMILIES]
    assert len(families) == len(set(families))
    assert sorted(families) == sorted(EXPECTED)


@pytest.mark.parametrize("family", sorted(EXPECTED))
def test_each_row_holds_the_values_its_card_gives(family: str) -> None:
    row = next(row for row in FAMILIES if row.family == family)
    actual = (
        row.context_window,
        row.max_output_tokens,
        row.input_modalities,
        row.supports_tools,
        row.supports_reasoning,
    )
    assert actual == EXPECTED[family]


def test_names_are_tried_in_priority_order() -> None:
    row = family_for([None, "my-finetune", "Qwen3-8B-Q4_K_M.gguf", "llama"])
    assert row is not None and row.family == "qwen3"


def test_every_row_cites_its_evidence_and_has_positive_numbers() -> None:
    for row in FAMILIES:
        assert row.evidence.startswith("huggingface.co/"), row.family
        assert row.context_window is None or row.context_window > 0
        assert row.max_output_tokens is None or row.max_output_tokens > 0
        assert row.input_modalities[0] == "text"

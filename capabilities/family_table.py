"""What no endpoint says: a small table of model families from their public model cards.

vLLM and SGLang report a context window but nothing about tools, reasoning or images; an
OpenAI-style gateway reports nothing at all. This table fills those gaps by family, below every
probe and above the defaults. Values are the model cards' *native* context (without YaRN or
other RoPE scaling, which servers do not enable by default) and flags the chat template
supports; ``None`` where the card is silent or the family is mixed.

Rows are tried in order, so a specific row (``qwen3-coder``) precedes a general one
(``qwen3``). Patterns match anywhere in the lower-cased id — HF ids (``Qwen/Qwen3-8B``),
Ollama tags (``qwen3:8b``), GGUF file names (``Qwen3-8B-Q4_K_M.gguf``) — but never inside a
longer name (``qwen3`` does not match ``qwen3.5`` or ``qwen30``).

Pure data and one lookup; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from capabilities.models import Modality

__all__ = ["FAMILIES", "FamilyRow", "family_for"]

_TEXT = (Modality.TEXT,)
_TEXT_IMAGE = (Modality.TEXT, Modality.IMAGE)


@dataclass(frozen=True, slots=True)
class FamilyRow:
    family: str
    pattern: re.Pattern[str]
    context_window: int | None
    max_output_tokens: int | None = None
    input_modalities: tuple[str, ...] = _TEXT
    supports_tools: bool | None = None
    supports_reasoning: bool | None = None
    evidence: str = ""
    """The model card (or cards) the values come from."""


def _p(body: str) -> re.Pattern[str]:
    """``body`` not glued to a longer name on either side."""
    return re.compile(rf"(?<![a-z0-9]){body}(?![a-z0-9.])")


FAMILIES: tuple[FamilyRow, ...] = (
    # First: distills such as DeepSeek-R1-0528-Qwen3-8B name their base family too.
    FamilyRow(
        "deepseek-r1",
        _p(r"deepseek-r1(?:[-:_][a-z0-9._:-]*)?"),
        131072,
        supports_reasoning=True,
        evidence="huggingface.co/deepseek-ai/DeepSeek-R1: context length 128K (distills too)",
    ),
    FamilyRow(
        "qwen3-coder",
        _p(r"qwen3-coder(?:-[a-z0-9.]+)*"),
        262144,
        supports_tools=True,
        supports_reasoning=False,
        evidence="huggingface.co/Qwen/Qwen3-Coder-30B-A3B-Instruct: 262,144 natively; "
        "non-thinking only",
    ),
    FamilyRow(
        "qwen3-thinking-2507",
        _p(r"qwen3-[a-z0-9.-]*thinking-2507"),
        262144,
        supports_tools=True,
        supports_reasoning=True,
        evidence="huggingface.co/Qwen/Qwen3-30B-A3B-Thinking-2507: 262,144 natively",
    ),
    FamilyRow(
        "qwen3-instruct-2507",
        _p(r"qwen3-[a-z0-9.-]*instruct-2507"),
        262144,
        supports_tools=True,
        supports_reasoning=False,
        evidence="huggingface.co/Qwen/Qwen3-30B-A3B-Instruct-2507: 262,144 natively; "
        "non-thinking mode only",
    ),
    FamilyRow(
        "qwen3",
        _p(r"qwen3(?:[-:_][a-z0-9._:-]*)?"),
        32768,
        supports_tools=True,
        supports_reasoning=True,
        evidence="huggingface.co/Qwen/Qwen3-8B: 32,768 natively (131,072 with YaRN); "
        "thinking and non-thinking modes; tool use",
    ),
    FamilyRow(
        "qwq",
        _p(r"qwq(?:[-:_][a-z0-9._:-]*)?"),
        131072,
        supports_tools=True,
        supports_reasoning=True,
        evidence="huggingface.co/Qwen/QwQ-32B: full 131,072 tokens",
    ),
    FamilyRow(
        "qwen2.5",
        _p(r"qwen2\.5(?:[-:_][a-z0-9._:-]*)?"),
        32768,
        max_output_tokens=8192,
        supports_tools=True,
        supports_reasoning=False,
        evidence="huggingface.co/Qwen/Qwen2.5-7B-Instruct: config 32,768 (131,072 with YaRN), "
        "generation 8192 tokens",
    ),
    FamilyRow(
        "gpt-oss",
        _p(r"gpt-oss(?:[-:_][a-z0-9._:-]*)?"),
        131072,
        supports_tools=True,
        supports_reasoning=True,
        evidence="huggingface.co/openai/gpt-oss-20b: 128k context, reasoning effort, tool use",
    ),
    FamilyRow(
        "llama-3.2-vision",
        _p(r"llama-?3\.2-?(?:\d+b-)?vision(?:[-:_][a-z0-9._:-]*)?"),
        131072,
        input_modalities=_TEXT_IMAGE,
        supports_reasoning=False,
        evidence="huggingface.co/meta-llama/Llama-3.2-11B-Vision-Instruct: 128k, image + text",
    ),
    FamilyRow(
        "llama-3.x",
        _p(r"llama-?3\.[123](?:[-:_][a-z0-9._:-]*)?"),
        131072,
        supports_tools=True,
        supports_reasoning=False,
        evidence="huggingface.co/meta-llama/Llama-3.1-8B-Instruct (and 3.2, 3.3): 128k, "
        "tool calling",
    ),
    FamilyRow(
        "llama-3",
        _p(r"llama-?3(?:[-:_][a-z0-9._:-]*)?"),
        8192,
        supports_reasoning=False,
        evidence="huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct: 8k context",
    ),
    FamilyRow(
        "mistral-small-3.1",
        _p(r"mistral-small-(?:3\.[12]|[a-z0-9.-]*-(?:2503|2506))(?:[-:_][a-z0-9._:-]*)?"),
        131072,
        input_modalities=_TEXT_IMAGE,
        supports_tools=True,
        supports_reasoning=False,
        evidence="huggingface.co/mistralai/Mistral-Small-3.1-24B-Instruct-2503: 128k, vision, "
        "function calling",
    ),
    FamilyRow(
        "mistral-nemo",
        _p(r"mistral-nemo(?:[-:_][a-z0-9._:-]*)?"),
        131072,
        supports_tools=True,
        supports_reasoning=False,
        evidence="huggingface.co/mistralai/Mistral-Nemo-Instruct-2407: 128k context window",
    ),
    FamilyRow(
        "mistral-7b",
        # Only `mistral`, `mistral:<tag>` (Ollama's 7B) and `mistral-7b…`: not mistral-large.
        re.compile(r"(?<![a-z0-9])mistral(?:-7b[a-z0-9._:-]*|:[a-z0-9._-]*)?(?![a-z0-9.-])"),
        32768,
        supports_reasoning=False,
        evidence="huggingface.co/mistralai/Mistral-7B-Instruct-v0.3: 32k; function calling only "
        "from v0.3, so tools unknown for the family",
    ),
    FamilyRow(
        "gemma-3-1b",
        _p(r"gemma-?3[-:]1b(?:[-:_][a-z0-9._:-]*)?"),
        32768,
        supports_reasoning=False,
        evidence="huggingface.co/google/gemma-3-1b-it: 32K input context, text only",
    ),
    FamilyRow(
        "gemma-3",
        _p(r"gemma-?3(?:[-:_][a-z0-9._:-]*)?"),
        131072,
        input_modalities=_TEXT_IMAGE,
        supports_reasoning=False,
        evidence="huggingface.co/google/gemma-3-27b-it: 128K input context, image + text",
    ),
    FamilyRow(
        "phi-4-mini",
        _p(r"phi-?4-mini(?:[-:_][a-z0-9._:-]*)?"),
        131072,
        supports_tools=True,
        supports_reasoning=False,
        evidence="huggingface.co/microsoft/Phi-4-mini-instruct: 128K, function calling",
    ),
    FamilyRow(
        "phi-4-reasoning",
        _p(r"phi-?4-(?:mini-)?reasoning(?:[-:_][a-z0-9._:-]*)?"),
        32768,
        supports_reasoning=True,
        evidence="huggingface.co/microsoft/Phi-4-reasoning: 32k tokens context",
    ),
    FamilyRow(
        "phi-4",
        _p(r"phi-?4(?:[-:_][a-z0-9._:-]*)?"),
        16384,
        supports_reasoning=False,
        evidence="huggingface.co/microsoft/phi-4: 16K tokens",
    ),
)


def family_for(names: Iterable[str | None]) -> FamilyRow | None:
    """The first row matching the first name that matches any row.

    ``names`` is in priority order: the configured id, the matched served id, then hints such
    as a GGUF file name or SGLang's ``model_type``.
    """
    for name in names:
        if not name:
            continue
        key = name.strip().lower().replace("_", "-").replace(" ", "-")
        for row in FAMILIES:
            if row.pattern.search(key):
                return row
    return None

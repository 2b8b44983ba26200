"""What no endpoint says: a small table of model families from their public model cards.

vLLM and SGLang report a context window but nothing about tools, reasoning or images; an
OpenAI-style gateway reports nothing at all. This table fills those gaps by family, below every
probe and above the defaults, so a wrong row is worse than a missing one: every value here was
checked against the family's model card or ``config.json`` (sources in the comments, checked
2025/2026 copies) and ``None`` marks what the card does not settle.

Context windows are what a server has *by default*: the card's native length, without the YaRN or
other RoPE scaling a user must switch on (that extended length is noted, not used). Where the
card's native length and ``config.json``'s ``max_position_embeddings`` differ, the smaller is kept:
the table is only a fallback for budgeting, and under-promising costs a little room while
over-promising costs a rejected request. Where sizes within a family differ, the row holds the
smallest unless a narrower row catches the exception first.

Rows are tried in order, so a specific row (``qwen3-coder``) precedes a general one
(``qwen3``). Patterns match anywhere in the lower-cased id — HF ids (``Qwen/Qwen3-8B``),
Ollama tags (``qwen3:8b``), GGUF file names (``Qwen3-8B-Q4_K_M.gguf``) — but never inside a
longer name (``qwen3`` does not match ``qwen3.5`` or ``qwen30``), and a family's offshoots whose
cards differ (``qwen3-vl``, ``qwen2.5-math``, ``phi-4-multimodal``) are excluded rather than
given their parent's values.

Pure data and one lookup; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from capabilities.models import Modality
from providers.abstractions.records import value_class

__all__ = ["FAMILIES", "FamilyRow", "family_for"]

_TEXT = (Modality.TEXT,)
_TEXT_IMAGE = (Modality.TEXT, Modality.IMAGE)


@value_class(frozen=True)
class FamilyRow:
    """One model family's card facts (context, output limit, modalities, tools, reasoning),
    matched by ``pattern`` against the model id; ``None`` where the card does not settle it."""

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


# Any tail after the family name: size, variant, quantisation, Ollama tag.
_TAIL = r"(?:[-:_][a-z0-9._:-]*)?"

FAMILIES: tuple[FamilyRow, ...] = (
    # First: distills such as DeepSeek-R1-0528-Qwen3-8B name their base family too.
    FamilyRow(
        "deepseek-r1",
        _p(r"deepseek-r1" + _TAIL),
        # R1 card: "Context Length 128K". R1's config.json says 163840 (YaRN x40 over 4096 baked in;
        # ollama.com/library/deepseek-r1:671b GGUF context_length 163840), so 128K is the smaller.
        # Distills: DeepSeek-R1-Distill-Qwen-7B/14B and -Llama-70B config.json 131072;
        # DeepSeek-R1-0528-Qwen3-8B 131072 via YaRN x4 over 32768 in its own config
        # (ollama.com/library/deepseek-r1:8b GGUF qwen3.context_length 131072).
        131072,
        supports_reasoning=True,  # R1 card: reasoning model, <think> output
        evidence="huggingface.co/deepseek-ai/DeepSeek-R1: context length 128K; distills' "
        "config.json max_position_embeddings 131072",
    ),
    FamilyRow(
        "qwen3-coder",
        # Checked: Qwen3-Coder-30B-A3B-Instruct and -480B-A35B-Instruct cards.
        _p(r"qwen3-coder(?:-[a-z0-9.]+)*"),
        262144,  # both cards: "Context Length: 262,144 natively" (1M with YaRN, not default)
        supports_tools=True,  # cards: "Agentic Coding ... specially designed function call format"
        supports_reasoning=False,  # cards: "supports only non-thinking mode"
        evidence="huggingface.co/Qwen/Qwen3-Coder-30B-A3B-Instruct: 262,144 natively "
        "(1M with YaRN); non-thinking only; function calling",
    ),
    FamilyRow(
        "qwen3-thinking-2507",
        # `[-:]` so Ollama tags such as qwen3:4b-thinking-2507 land here and not on plain qwen3.
        _p(r"qwen3[-:][a-z0-9.-]*thinking-2507" + _TAIL),
        262144,  # Qwen3-4B- and Qwen3-30B-A3B-Thinking-2507 cards: "262,144 natively"
        supports_tools=True,  # cards: "better general capabilities, such as ... tool usage"
        supports_reasoning=True,  # cards: "supports only thinking mode"
        evidence="huggingface.co/Qwen/Qwen3-4B-Thinking-2507: 262,144 natively; thinking only",
    ),
    FamilyRow(
        "qwen3-instruct-2507",
        _p(r"qwen3[-:][a-z0-9.-]*instruct-2507" + _TAIL),
        262144,  # Qwen3-30B-A3B-Instruct-2507 card: "Context Length: 262,144 natively"
        supports_tools=True,  # card: "improvements in ... coding and tool usage"
        supports_reasoning=False,  # card: "supports only non-thinking mode"
        evidence="huggingface.co/Qwen/Qwen3-30B-A3B-Instruct-2507: 262,144 natively; "
        "non-thinking mode only",
    ),
    FamilyRow(
        "qwen3",
        # Offshoots with their own cards (VL takes images, Next/Omni are other architectures,
        # Embedding/Reranker are not chat models) are left to the probes.
        _p(r"qwen3(?![-:](?:vl|next|omni|embedding|reranker)(?![a-z]))" + _TAIL),
        # Qwen3-8B card: "32,768 natively and 131,072 tokens with YaRN" (0.6B/1.7B: 32,768, no
        # YaRN). config.json says 40960 (32K + 8K room, github.com/rasbt/reasoning-from-scratch
        # issue 42; vLLM's limit, github.com/QwenLM/Qwen3 issue 1361): the card's 32,768 is kept.
        32768,
        supports_tools=True,  # card: "integration with external tools in both thinking and
        # unthinking modes"
        supports_reasoning=True,  # card: switchable thinking / non-thinking modes
        evidence="huggingface.co/Qwen/Qwen3-8B: 32,768 natively (131,072 with YaRN; "
        "config.json 40960); thinking and non-thinking modes; tool use",
    ),
    FamilyRow(
        "qwq",
        _p(r"qwq" + _TAIL),
        # Was 131072, which the QwQ-32B card reaches only with YaRN ("for prompts exceeding 8,192
        # tokens ... you must enable YaRN"). Its config.json went from 128K to 40960
        # (github.com/QwenLM/QwQ issue 26; 8K prompt + 32K output, github.com/QwenLM/Qwen3 issue
        # 1227), and QwQ-32B-Preview's config.json is 32768: the family's safe default is 32768.
        32768,
        supports_tools=True,  # QwQ-32B tokenizer_config.json chat template takes `tools`
        # (github.com/xorbitsai/inference issue 3121; Qwen-Agent examples/assistant_qwq.py)
        supports_reasoning=True,  # card: "the reasoning model of the Qwen series"
        evidence="huggingface.co/Qwen/QwQ-32B: full 131,072 only with YaRN; config.json 40960; "
        "QwQ-32B-Preview config.json 32768",
    ),
    FamilyRow(
        "qwen2.5-coder",
        _p(r"qwen2\.5-coder" + _TAIL),
        # Qwen2.5-Coder-7B..32B-Instruct cards: 128K only with YaRN over config.json's 32768
        # (github.com/alibaba/Pai-Megatron-Patch issue 621); 0.5B-3B: 32K
        # (huggingface.co/lmstudio-community/Qwen2.5-Coder-3B-Instruct-GGUF README fix).
        32768,
        # Tools left unknown: the card is silent and the model does not follow the hermes
        # <tool_call> format vLLM suggests (github.com/hanXen/vllm-qwen2.5-coder-tool-parser).
        supports_reasoning=False,  # instruct model, no thinking mode
        evidence="huggingface.co/Qwen/Qwen2.5-Coder-32B-Instruct: 128K only with YaRN; "
        "config.json 32768",
    ),
    FamilyRow(
        "qwen2.5",
        # Not VL (images; card 32,768 native, config 128000), Math (config.json 4096,
        # github.com/GAIR-NLP/ToRL issue 23) or Omni: their cards differ.
        _p(r"qwen2\.5(?![-:](?:vl|math|omni|coder)(?![a-z]))" + _TAIL),
        # 7B+ cards: "Full 131,072 tokens" with YaRN beyond config.json's 32768
        # (github.com/vllm-project/vllm issue 16757); 0.5B-3B cards: "Full 32,768 tokens".
        32768,
        max_output_tokens=8192,  # every Qwen2.5-Instruct card: "generation 8192 tokens"
        supports_tools=True,  # Qwen maintainers: hermes tool parser for Qwen2.5
        # (github.com/QwenLM/Qwen3 discussion 1098)
        supports_reasoning=False,  # instruct models, no thinking mode
        evidence="huggingface.co/Qwen/Qwen2.5-7B-Instruct: config 32,768 (131,072 with YaRN), "
        "generation 8192 tokens",
    ),
    FamilyRow(
        "gpt-oss",
        _p(r"gpt-oss" + _TAIL),
        131072,  # 128k context (docs.oracle/OCI gpt-oss page: 128,000); public vLLM configs for
        # openai/gpt-oss-20b serve max_model_len 131072 with no override
        supports_tools=True,  # card: "native capabilities for function calling"
        supports_reasoning=True,  # card: "configurable reasoning effort", full chain-of-thought
        evidence="huggingface.co/openai/gpt-oss-20b: 128k context (config.json 131072), "
        "reasoning effort, function calling",
    ),
    FamilyRow(
        "llama-3.2-vision",
        _p(r"llama-?3\.2-?(?:\d+b-)?vision" + _TAIL),
        131072,  # card: 128k context (Llama 3.1 text backbone); xinference llama-3.2-vision 131072
        input_modalities=_TEXT_IMAGE,  # card: "text + images in / text out"
        # Tools not checked for image prompts: left unknown.
        supports_reasoning=False,
        evidence="huggingface.co/meta-llama/Llama-3.2-11B-Vision-Instruct: 128k, image + text",
    ),
    FamilyRow(
        "llama-3.x",
        _p(r"llama-?3\.[123]" + _TAIL),
        # 3.1 card and huggingface.co/blog/llama31: 128k; 3.2 1B/3B config.json 131072 (llama3
        # RoPE x32 over 8192 is part of the release); 3.3 70B card: 128k.
        131072,
        supports_tools=True,  # 3.1/3.3 cards: tool use; vLLM llama3_json parser "for Llama 3.x"
        supports_reasoning=False,
        evidence="huggingface.co/meta-llama/Llama-3.1-8B-Instruct (and 3.2, 3.3): 128k, "
        "tool calling",
    ),
    FamilyRow(
        "llama-3",
        _p(r"llama-?3" + _TAIL),
        8192,  # Meta-Llama-3 card table: 8B 8k, 70B 8k; GGUF llama.context_length 8192
        supports_reasoning=False,
        evidence="huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct: 8k context",
    ),
    FamilyRow(
        "mistral-small-3.1",
        # 3.1 (2503) and 3.2 (2506), HF ids and Ollama's mistral-small3.1 / mistral-small3.2.
        _p(r"mistral-small-?(?:3\.[12]|[a-z0-9.-]*-(?:2503|2506))" + _TAIL),
        131072,  # 3.1 card: "Context Window: A 128k context window"; 3.2 is "a minor update"
        input_modalities=_TEXT_IMAGE,  # 3.1 card: "Vision: ... analyze images"
        supports_tools=True,  # 3.1 card: "Low-latency function calling"; 3.2 card: "function
        # calling template is more robust"
        supports_reasoning=False,
        evidence="huggingface.co/mistralai/Mistral-Small-3.1-24B-Instruct-2503: 128k, vision, "
        "function calling",
    ),
    FamilyRow(
        "mistral-nemo",
        _p(r"mistral-nemo" + _TAIL),
        # 128k context window (scaleway.com managed-inference mistral-nemo-instruct-2407;
        # openrouter.ai/mistralai/mistral-nemo: 131,072). config.json says 1024000, which a server
        # started without --max-model-len reports but nothing backs: 128K is kept.
        131072,
        supports_tools=True,  # openrouter.ai: "supports function calling"; Ollama's
        # mistral-nemo template has [AVAILABLE_TOOLS]
        supports_reasoning=False,
        evidence="huggingface.co/mistralai/Mistral-Nemo-Instruct-2407: 128k context window "
        "(config.json 1024000)",
    ),
    FamilyRow(
        "mistral-7b-v0.1",
        # Before the general row: v0.1 is the one 7B with a shorter context.
        _p(r"mistral[-:]7b(?:-[a-z0-9]+)*-v0\.1"),
        8192,  # v0.2 card: "32k context window (vs 8k context in v0.1)". v0.1's config.json
        # says 32768 with sliding_window 4096; Mistral's own 8k is kept.
        supports_reasoning=False,
        evidence="huggingface.co/mistralai/Mistral-7B-Instruct-v0.2: 32k context (vs 8k in v0.1)",
    ),
    FamilyRow(
        "mistral-7b",
        # Only `mistral`, `mistral:<tag>` (Ollama's 7B) and `mistral-7b…`: not mistral-large.
        re.compile(r"(?<![a-z0-9])mistral(?:-7b[a-z0-9._:-]*|:[a-z0-9._-]*)?(?![a-z0-9.-])"),
        32768,  # v0.2 and v0.3 cards: 32k context window (rope_theta 1e6, no sliding window)
        # Tools unknown for the family: function calling only from v0.3.
        supports_reasoning=False,
        evidence="huggingface.co/mistralai/Mistral-7B-Instruct-v0.3: 32k; function calling only "
        "from v0.3, so tools unknown for the family",
    ),
    FamilyRow(
        "gemma-3-1b",
        # The two small text-only sizes: 1B and 270M.
        _p(r"gemma-?3[-:](?:1b|270m)" + _TAIL),
        32768,  # Gemma 3 card: "32K tokens for the 1B and 270M sizes"; gemma-3-1b config 32768
        supports_reasoning=False,
        evidence="huggingface.co/google/gemma-3-1b-it: 32K input context, text only (1B and 270M)",
    ),
    FamilyRow(
        "gemma-3",
        _p(r"gemma-?3" + _TAIL),
        131072,  # card: "128K tokens for the 4B, 12B, and 27B sizes" (config 131072)
        input_modalities=_TEXT_IMAGE,  # card: "handling text and image input"
        supports_reasoning=False,
        evidence="huggingface.co/google/gemma-3-27b-it: 128K input context, image + text",
    ),
    FamilyRow(
        "phi-4-mini-reasoning",
        _p(r"phi-?4-mini-reasoning" + _TAIL),
        131072,  # card: "supports 128K token context length"
        supports_reasoning=True,  # card: math reasoning model
        evidence="huggingface.co/microsoft/Phi-4-mini-reasoning: 128K token context length",
    ),
    FamilyRow(
        "phi-4-reasoning",
        _p(r"phi-?4-reasoning" + _TAIL),  # also -plus
        32768,  # card: "32k tokens"; openrouter.ai/microsoft/phi-4-reasoning: 32,768 context
        supports_reasoning=True,
        evidence="huggingface.co/microsoft/Phi-4-reasoning: 32k tokens context",
    ),
    FamilyRow(
        "phi-4-mini",
        # Not Phi-4-mini-flash-reasoning: its card says 64K.
        _p(r"phi-?4-mini(?!-flash)" + _TAIL),
        131072,  # card: "supports 128K token context length"; GGUF phi3.context_length 131072
        supports_tools=True,  # card / Ollama phi4-mini: "function calling feature is supported"
        supports_reasoning=False,
        evidence="huggingface.co/microsoft/Phi-4-mini-instruct: 128K, function calling",
    ),
    FamilyRow(
        "phi-4",
        # Not the other Phi-4 models (mini-flash-reasoning 64K; multimodal takes images/audio).
        _p(r"phi-?4(?!-(?:mini|multimodal)(?![a-z]))" + _TAIL),
        16384,  # card: "Context length: 16K tokens"; openrouter.ai/microsoft/phi-4: 16,384
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

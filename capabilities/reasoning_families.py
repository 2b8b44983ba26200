"""How each model family switches its thinking: one row per family, read from its chat template.

A server passes the switch on (``chat_template_kwargs``, ``reasoning_effort``), but only the
template decides what it means, and families disagree: Qwen3 and GLM read ``enable_thinking``
(default on), DeepSeek-V3.1 and Granite 3.x read ``thinking`` (default *off*), QwQ, R1 and the
Thinking-2507 models always think whatever is sent, Instruct-2507, Qwen3-Coder and Granite 4
never do, and gpt-oss has no off switch at all but three effort levels. So the mapping
(``capabilities.reasoning_mapping``) reads the family's row, and a family the table does not
know gets the portable form (both switch names) instead of a guess.

Every row cites its template or model card (``evidence``; the facts were checked against the
templates llama.cpp keeps in ``models/templates/`` and the cards). Family names are
``capabilities.family_table``'s where that table has the family, and the patterns are the same
non-glued ones (``qwen3`` never matches ``qwen3.5`` or ``qwen30``; a test holds the shared ones
equal): written out rather than imported, since that table's module loads pydantic and this one
is read on every request. Rows are tried in order, narrow before broad (the R1 distills name
their base family too).

Pure data and two lookups; no I/O.
"""

from __future__ import annotations

import re
from typing import Final, Literal

from providers.abstractions.records import value_class

__all__ = [
    "REASONING_FAMILIES",
    "ReasoningFamily",
    "ThinkingMode",
    "reasoning_family_for",
    "reasoning_family_named",
]

ThinkingMode = Literal["always", "never", "switch", "levels"]
"""``always``: the template opens the thinking block itself, nothing turns it off; ``never``:
the template has no thinking; ``switch``: a template kwarg turns it on and off (no levels);
``levels``: effort words (gpt-oss's ``Reasoning: low|medium|high``), no off."""


@value_class(frozen=True)
class ReasoningFamily:
    """One family's row: see the module docstring."""

    family: str
    pattern: str
    """Matches the family's ids (lower case, ``_`` read as ``-``), never glued to a longer
    name; compiled on first use (``re``'s cache), so importing the table compiles nothing."""
    mode: ThinkingMode
    switch_kwargs: tuple[str, ...] = ()
    """``switch``: the template kwargs that turn thinking on (``True``) and off (``False``)."""
    thinks_by_default: bool = False
    """``switch``: what the template does when no kwarg is sent."""
    efforts: tuple[str, ...] = ()
    """``levels``: the effort words the template takes, lowest first."""
    default_effort: str | None = None
    """``levels``: the word the template uses when none is sent."""
    evidence: str = ""
    """The template lines or model card the row comes from."""


def _p(body: str) -> str:
    """``body`` not glued to a longer name on either side (``family_table``'s rule)."""
    return rf"(?<![a-z0-9]){body}(?![a-z0-9.])"


# Any tail after the family name: size, variant, quantisation, Ollama tag.
_TAIL = r"(?:[-:_][a-z0-9._:-]*)?"

REASONING_FAMILIES: Final[tuple[ReasoningFamily, ...]] = (
    ReasoningFamily(
        "deepseek-r1",
        _p(r"deepseek-r1" + _TAIL),  # first: distills (R1-0528-Qwen3-8B) name their base too
        "always",
        evidence="deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja:46: the generation prompt is "
        "'<|Assistant|><think>\\n' (full-width bars); the updated R1 template forces '<think>\\n'",
    ),
    ReasoningFamily(
        "qwen3-coder",
        _p(r"qwen3-coder(?:-[a-z0-9.]+)*"),
        "never",
        evidence="Qwen3-Coder.jinja has no 'think' at all; card: 'supports only non-thinking mode'",
    ),
    ReasoningFamily(
        "qwen3-thinking-2507",
        _p(r"qwen3[-:][a-z0-9.-]*thinking-2507" + _TAIL),
        "always",
        evidence="Qwen3-235B-A22B-Thinking-2507 card: 'supports only thinking mode ... the "
        "default chat template automatically includes <think>'",
    ),
    ReasoningFamily(
        "qwen3-instruct-2507",
        _p(r"qwen3[-:][a-z0-9.-]*instruct-2507" + _TAIL),
        "never",
        evidence="Qwen3-30B-A3B-Instruct-2507 card: 'supports only non-thinking mode'",
    ),
    ReasoningFamily(
        "qwen3",
        _p(r"qwen3(?![-:](?:vl|next|omni|embedding|reranker)(?![a-z]))" + _TAIL),
        "switch",
        switch_kwargs=("enable_thinking",),
        thinks_by_default=True,
        evidence="Qwen-Qwen3-0.6B.jinja:82-83: 'enable_thinking is defined and enable_thinking "
        "is false' pre-fills '<think>\\n\\n</think>\\n\\n', else the model thinks",
    ),
    ReasoningFamily(
        "qwen3.5",
        _p(r"qwen3\.5" + _TAIL),
        "switch",
        switch_kwargs=("enable_thinking",),
        thinks_by_default=True,
        evidence="Qwen3.5-4B.jinja:149-152: the same enable_thinking switch as Qwen3",
    ),
    ReasoningFamily(
        "qwq",
        _p(r"qwq" + _TAIL),
        "always",
        evidence="QwQ-32B card: the prompt ends '<|im_start|>assistant\\n<think>\\n', 'already "
        "handled when apply_chat_template is used with add_generation_prompt=True'",
    ),
    ReasoningFamily(
        "gpt-oss",
        _p(r"gpt-oss" + _TAIL),
        "levels",
        efforts=("low", "medium", "high"),
        default_effort="medium",
        evidence="openai-gpt-oss-120b.jinja:6,203-206: reasoning_effort defaults to 'medium', "
        "printed as 'Reasoning: <effort>', no off switch; vLLM and SGLang answer 400 to 'none', "
        "llama.cpp falls back to medium",
    ),
    ReasoningFamily(
        "deepseek-v3.1",
        _p(r"deepseek-v3\.1" + _TAIL),
        "switch",
        switch_kwargs=("thinking",),
        evidence="deepseek-ai-DeepSeek-V3.1.jinja:4-8,46-49: kwarg 'thinking', default false; "
        "'<think>' when thinking, else '<think></think>'",
    ),
    ReasoningFamily(
        "deepseek-v3.2",
        _p(r"deepseek-v3\.2" + _TAIL),
        "switch",
        switch_kwargs=("thinking", "enable_thinking"),
        evidence="vLLM tokenizers/deepseek_v32.py:28-33 reads 'thinking' or 'enable_thinking', "
        "default false; llama.cpp's DeepSeek-V3.2.jinja:4-8 the same; SGLang reads 'thinking'",
    ),
    ReasoningFamily(
        "glm",
        _p(r"glm-?4\.[567]" + _TAIL),
        "switch",
        switch_kwargs=("enable_thinking",),
        thinks_by_default=True,
        evidence="glm_4_5.jinja, GLM-4.6.jinja:47,105: enable_thinking defined and false emits "
        "'<think></think>'; GLM-4.7-Flash.jinja:85 the same switch",
    ),
    ReasoningFamily(
        "granite",
        _p(r"granite-?3\.[23]" + _TAIL),
        "switch",
        switch_kwargs=("thinking",),
        evidence="ibm-granite-granite-3.3-2B-Instruct.jinja:16-18: '{%- elif thinking %}' "
        "switches to the think/response system prompt, default off; 3.2 takes the same kwarg "
        "(IBM's docs, vLLM's granite reasoning parser)",
    ),
    ReasoningFamily(
        "granite-4",
        _p(r"granite-?4(?:\.[0-9]+)?" + _TAIL),
        "never",
        evidence="ibm-granite-granite-4.0.jinja and -4.1.jinja: no 'think' anywhere",
    ),
)
"""The rows, tried in order."""

_BY_NAME = {row.family: row for row in REASONING_FAMILIES}
_HINTS = ("deepseek", "qwen3", "qwq", "gpt-oss", "glm", "granite")
"""A word every row's pattern needs (a test holds each row to one)."""
_FOR_ID: dict[str, ReasoningFamily | None] = {}


def _key(name: str) -> str:
    return name.strip().lower().replace("_", "-").replace(" ", "-")


def reasoning_family_for(model_id: str | None) -> ReasoningFamily | None:
    """The row whose pattern matches ``model_id`` (an HF id, an Ollama tag, a GGUF file name),
    or ``None``. Cached per id: a client asks once per request."""
    if not model_id:
        return None
    try:
        return _FOR_ID[model_id]
    except KeyError:
        pass
    key = _key(model_id)
    found = None
    if any(hint in key for hint in _HINTS):  # (most ids name no family here: no regex at all)
        found = next((row for row in REASONING_FAMILIES if re.search(row.pattern, key)), None)
    if len(_FOR_ID) < 1024:  # (ids come from configuration: a handful; never unbounded)
        _FOR_ID[model_id] = found
    return found


def reasoning_family_named(family: str | None) -> ReasoningFamily | None:
    """The row of a family name (``model_family="qwen3"``), or ``None`` for a family the table
    does not have."""
    if not family:
        return None
    return _BY_NAME.get(_key(family))

"""Reading discovery responses: one parser per probe, each returning ``Findings``.

This module reads the OpenAI-compatible servers' own endpoints — llama.cpp ``/props``, every
server's ``/v1/models``, SGLang ``/model_info``, the version routes — and holds the dispatch
table; Ollama's and LM Studio's native APIs are ``native_payloads.py``. Validation is lenient
(``findings.py``): odd values are absent, never errors.

Pure: no I/O. Which probe runs when is ``resolver.py``'s job; how findings are layered is
``merge.py``'s. Evidence for every field is docs/wire.md §1 and the captured
``transcripts/<backend>/discovery/`` files.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import Field

from capabilities.findings import (
    Findings,
    Lenient,
    ModelsListing,
    Objects,
    OptBool,
    OptMapping,
    OptText,
    OptTexts,
    PositiveInt,
    flagged_modalities,
    sub,
    validate,
)
from capabilities.model_id import match_model_id
from capabilities.models import Modality, Source
from capabilities.native_payloads import parse_api_ps, parse_api_show, parse_api_v0_models

__all__ = [
    "PARSERS",
    "Findings",
    "ModelsListing",
    "Parser",
    "first_version",
    "parse_api_ps",
    "parse_api_show",
    "parse_api_v0_models",
    "parse_model_info",
    "parse_models",
    "parse_props",
    "parse_version",
]


# --- llama.cpp /props ----------------------------------------------------------------------


class _Params(Lenient):
    n_ctx: PositiveInt = None
    n_predict: PositiveInt = None


class _GenerationSettings(Lenient):
    n_ctx: PositiveInt = None
    params: OptMapping = None


class _PropsModalities(Lenient):
    vision: OptBool = None
    audio: OptBool = None
    video: OptBool = None


class _TemplateCaps(Lenient):
    supports_tool_calls: OptBool = None
    supports_tools: OptBool = None
    supports_reasoning_effort: OptBool = None
    supports_preserve_reasoning: OptBool = None


class _Props(Lenient):
    role: OptText = None
    default_generation_settings: OptMapping = None
    total_slots: PositiveInt = None
    modalities: OptMapping = None
    chat_template: OptText = None
    chat_template_caps: OptMapping = None
    build_info: OptText = None
    model_path: OptText = None
    model_alias: OptText = None


# Markup that only templates of reasoning models render: Qwen3 / DeepSeek-R1 `<think>`,
# gpt-oss harmony channels, Magistral `[THINK]`, and replayed `reasoning_content`.
_REASONING_TEMPLATE = re.compile(r"<think>|<\|channel\|>|\[THINK\]|reasoning_content")


def parse_props(payload: Any) -> Findings:
    """llama.cpp ``GET /props``.

    The context is ``default_generation_settings.n_ctx`` — the *per-slot* context — and
    ``…params.n_ctx`` only as a fallback (older builds; current ``params`` has none). A router's
    ``/props`` (``role: "router"``) describes no model and is ignored entirely, including its
    ``vision: false`` (netclaw's resolver got this right; we keep it). A positive
    ``params.n_predict`` is the server's ``-n``, which caps every request. Reasoning is inferred
    only positively, from template markup: a plain template proves nothing about the model.
    """
    props = validate(_Props, payload)
    if props is None:
        return Findings(Source.PROPS)
    if props.role is not None and props.role.lower() == "router":
        return Findings(Source.PROPS, router=True)
    settings = sub(_GenerationSettings, props.default_generation_settings)
    params = sub(_Params, settings.params) if settings is not None else None
    n_ctx = (settings.n_ctx if settings else None) or (params.n_ctx if params else None)
    modalities = sub(_PropsModalities, props.modalities)
    caps = sub(_TemplateCaps, props.chat_template_caps)
    tools = None
    reasoning = None
    if caps is not None:
        tools = (
            caps.supports_tool_calls
            if caps.supports_tool_calls is not None
            else caps.supports_tools
        )
        if caps.supports_reasoning_effort or caps.supports_preserve_reasoning:
            reasoning = True
    if props.chat_template and _REASONING_TEMPLATE.search(props.chat_template):
        reasoning = True
    inputs = (
        flagged_modalities(modalities.vision, modalities.audio, modalities.video)
        if modalities is not None
        else None
    )
    hints = tuple(
        h.replace("\\", "/").rsplit("/", 1)[-1]
        for h in (props.model_alias, props.model_path)
        if h is not None
    )
    return Findings(
        Source.PROPS,
        context_window=n_ctx,
        max_output_tokens=params.n_predict if params else None,
        input_modalities=inputs,
        output_modalities=(Modality.TEXT,) if inputs is not None else None,
        supports_tools=tools,
        supports_reasoning=reasoning,
        parallel_slots=props.total_slots,
        version=props.build_info,
        family_hints=hints,
    )


# --- /v1/models ----------------------------------------------------------------------------


class _Meta(Lenient):
    n_ctx: PositiveInt = None
    n_ctx_train: PositiveInt = None


class _Architecture(Lenient):
    input_modalities: OptTexts = None
    output_modalities: OptTexts = None


class _ModelCard(Lenient):
    id: OptText = None
    owned_by: OptText = None
    max_model_len: PositiveInt = None
    meta: OptMapping = None
    architecture: OptMapping = None


class _ModelList(Lenient):
    data: Objects = Field(default_factory=list)


def parse_models(payload: Any, model_id: str | None) -> ModelsListing:
    """``GET /v1/models`` (OpenAI ``data`` array; llama.cpp's extra Ollama-style ``models``
    array is ignored).

    ``max_model_len`` (vLLM, SGLang) and ``meta.n_ctx`` (llama.cpp, per slot) are runtime
    contexts; ``meta.n_ctx_train`` is the training maximum. Newer llama.cpp also lists
    ``architecture.input_modalities``.
    """
    listing = validate(_ModelList, payload)
    cards = [
        card
        for raw in (listing.data if listing else [])
        if (card := validate(_ModelCard, raw)) is not None and card.id is not None
    ]
    served = tuple(dict.fromkeys(card.id for card in cards if card.id is not None))
    owners = tuple(card.owned_by for card in cards if card.owned_by is not None)
    matched = match_model_id(model_id, served)
    card = next((c for c in cards if c.id == matched), None) if matched else None
    if card is None:
        return ModelsListing(served, owners, matched, Findings(Source.MODELS))
    meta = sub(_Meta, card.meta)
    arch = sub(_Architecture, card.architecture)
    inputs = Modality.normalise(arch.input_modalities) if arch else None
    outputs = Modality.normalise(arch.output_modalities) if arch else None
    findings = Findings(
        Source.MODELS,
        context_window=card.max_model_len or (meta.n_ctx if meta else None),
        training_context_window=meta.n_ctx_train if meta else None,
        input_modalities=inputs,
        output_modalities=outputs,
    )
    return ModelsListing(served, owners, matched, findings)


# --- SGLang /model_info, /server_info; vLLM /version; Ollama /api/version ---------------------


class _ModelInfo(Lenient):
    has_image_understanding: OptBool = None
    has_audio_understanding: OptBool = None
    reasoning_parser: OptText = None
    tool_call_parser: OptText = None
    model_type: OptText = None


def parse_model_info(payload: Any) -> Findings:
    """SGLang ``GET /model_info``. A configured reasoning or tool-call parser means the server
    separates reasoning / returns structured tool calls; ``null`` says nothing about the model
    (the family table or the text recovery in ``providers`` then decides)."""
    info = validate(_ModelInfo, payload)
    if info is None:
        return Findings(Source.MODEL_INFO)
    inputs = flagged_modalities(
        image=info.has_image_understanding, audio=info.has_audio_understanding
    )
    return Findings(
        Source.MODEL_INFO,
        input_modalities=inputs,
        output_modalities=(Modality.TEXT,) if inputs is not None else None,
        supports_tools=True if info.tool_call_parser else None,
        supports_reasoning=True if info.reasoning_parser else None,
        family_hints=(info.model_type,) if info.model_type else (),
    )


class _Version(Lenient):
    version: OptText = None
    error: Any = None


def parse_version(payload: Any, source: str) -> Findings:
    """``{"version": "0.33.0"}`` (vLLM ``/version``, Ollama ``/api/version``, SGLang
    ``/server_info``). LM Studio answers unknown paths with 200 and an ``error`` field, so a
    body with ``error`` is not a version."""
    found = validate(_Version, payload)
    if found is None or found.error is not None:
        return Findings(source)
    return Findings(source, version=found.version)


# --- dispatch: a new probe is one parser, one row here and one ``resolver.PROBES`` row -------

Parser = Callable[[Any, str | None], Findings]
"""``(payload, model_id) -> Findings``: the shape every probe parser is adapted to."""

PARSERS: dict[str, Parser] = {
    Source.PROPS: lambda payload, _model: parse_props(payload),
    Source.MODEL_INFO: lambda payload, _model: parse_model_info(payload),
    Source.VERSION: lambda payload, _model: parse_version(payload, Source.VERSION),
    Source.API_VERSION: lambda payload, _model: parse_version(payload, Source.API_VERSION),
    Source.SERVER_INFO: lambda payload, _model: parse_version(payload, Source.SERVER_INFO),
    Source.API_SHOW: lambda payload, _model: parse_api_show(payload),
    Source.API_PS: parse_api_ps,
    Source.API_V0_MODELS: parse_api_v0_models,
}


def first_version(findings: Sequence[Findings]) -> tuple[str | None, str | None]:
    """The first version any probe reported, with that probe's name."""
    for found in findings:
        if found.version:
            return found.version, found.source
    return None, None

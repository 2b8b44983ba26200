"""The native APIs of the desktop servers: Ollama ``/api/show`` and ``/api/ps``, LM Studio
``/api/v0/models``. They say more than their OpenAI-compatible ``/v1/models`` (which lists only
ids), notably the context a *loaded* model runs with and what the model supports.

Pure: no I/O. Shapes from ``ollama/ollama/docs/api.md``, ``ollama/ollama/docs/openapi.yaml`` and
lmstudio-ai/docs (REST API v0), summarised in docs/wire.md §1.5; the reconstructed bodies are in
``transcripts/ollama/discovery`` and ``transcripts/lmstudio/discovery``.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field

from capabilities.findings import (
    Findings,
    Lenient,
    Objects,
    OptMapping,
    OptText,
    OptTexts,
    PositiveInt,
    flagged_modalities,
    positive,
    sub,
    validate,
)
from capabilities.model_id import match_model_id
from capabilities.models import Modality, Source

__all__ = ["parse_api_ps", "parse_api_show", "parse_api_v0_models"]


# --- Ollama /api/show, /api/ps ---------------------------------------------------------------


class _ShowDetails(Lenient):
    family: OptText = None
    families: OptTexts = None


class _Show(Lenient):
    capabilities: OptTexts = None
    parameters: OptText = None
    model_info: OptMapping = None
    details: OptMapping = None


_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


def parse_api_show(payload: Any) -> Findings:
    """Ollama ``POST /api/show``.

    ``capabilities`` is authoritative when present (Ollama refuses tools for a model without
    ``tools``): absent names are ``False``. ``num_ctx`` in ``parameters`` is the runtime context
    the Modelfile sets; ``<arch>.context_length`` in ``model_info`` is the training maximum — the
    runtime default (``OLLAMA_CONTEXT_LENGTH``) is not reported here, only by ``/api/ps``.
    """
    show = validate(_Show, payload)
    if show is None:
        return Findings(Source.API_SHOW)
    caps = {c.lower() for c in show.capabilities} if show.capabilities is not None else None
    num_ctx = _NUM_CTX.search(show.parameters or "")
    training = None
    for key, value in (show.model_info or {}).items():
        if key.endswith(".context_length"):
            training = positive(value)
            break
    details = sub(_ShowDetails, show.details)
    hints = tuple(
        dict.fromkeys(
            [
                *([details.family] if details and details.family else []),
                *(details.families or [] if details else []),
            ]
        )
    )
    inputs = None
    if caps is not None:
        inputs = flagged_modalities(image="vision" in caps, audio="audio" in caps)
    return Findings(
        Source.API_SHOW,
        context_window=positive(int(num_ctx.group(1))) if num_ctx else None,
        training_context_window=training,
        input_modalities=inputs,
        output_modalities=(Modality.TEXT,) if inputs is not None else None,
        supports_tools=("tools" in caps) if caps is not None else None,
        supports_reasoning=("thinking" in caps) if caps is not None else None,
        family_hints=hints,
    )


class _Running(Lenient):
    name: OptText = None
    model: OptText = None
    context_length: PositiveInt = None


class _RunningList(Lenient):
    models: Objects = Field(default_factory=list)


def parse_api_ps(payload: Any, model_id: str | None) -> Findings:
    """Ollama ``GET /api/ps``: the context a *loaded* model actually runs with."""
    running = validate(_RunningList, payload)
    entries = [e for raw in (running.models if running else []) if (e := validate(_Running, raw))]
    ids = [e.model or e.name or "" for e in entries]
    matched = match_model_id(model_id, ids)
    entry = next((e for e, i in zip(entries, ids, strict=True) if i and i == matched), None)
    return Findings(Source.API_PS, context_window=entry.context_length if entry else None)


# --- LM Studio /api/v0/models ----------------------------------------------------------------


class _LmStudioModel(Lenient):
    id: OptText = None
    type: OptText = None
    arch: OptText = None
    max_context_length: PositiveInt = None
    loaded_context_length: PositiveInt = None
    capabilities: OptTexts = None


class _LmStudioList(Lenient):
    data: Objects = Field(default_factory=list)


def parse_api_v0_models(payload: Any, model_id: str | None) -> Findings:
    """LM Studio ``GET /api/v0/models``: ``loaded_context_length`` (newer builds, for a loaded
    model) is the runtime context, ``max_context_length`` the model's maximum; ``type: "vlm"``
    means image input; ``capabilities: ["tool_use"]`` (newer builds) means tools."""
    listing = validate(_LmStudioList, payload)
    entries = [
        e for raw in (listing.data if listing else []) if (e := validate(_LmStudioModel, raw))
    ]
    ids = [e.id or "" for e in entries]
    matched = match_model_id(model_id, ids)
    entry = next((e for e in entries if e.id and e.id == matched), None)
    if entry is None:
        return Findings(Source.API_V0_MODELS)
    kind = (entry.type or "").lower()
    inputs: tuple[str, ...] | None = {
        "vlm": (Modality.TEXT, Modality.IMAGE),
        "llm": (Modality.TEXT,),
    }.get(kind)
    caps = {c.lower() for c in entry.capabilities} if entry.capabilities is not None else None
    return Findings(
        Source.API_V0_MODELS,
        context_window=entry.loaded_context_length,
        training_context_window=entry.max_context_length,
        input_modalities=inputs,
        output_modalities=(Modality.TEXT,) if inputs is not None else None,
        supports_tools=("tool_use" in caps) if caps is not None else None,
        family_hints=(entry.arch,) if entry.arch else (),
    )

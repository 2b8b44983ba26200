"""Layering: override > probed > family table > default, recording the winner's source.

Among probes the order is fixed by ``PROBE_ORDER``: the most specific answer first (llama.cpp
``/props`` describes the live slot; Ollama ``/api/ps`` the loaded model) and ``/v1/models``
last. For the context window, a *runtime* value from any probe beats a *training maximum*
(``n_ctx_train``, ``max_context_length``) from any probe: the maximum overstates what a request
can use, so it is used only when no probe reports the runtime value — and still before the family
table, because it describes this exact model file.

Pure: values in, values out. An override larger than what the server reports is returned as a
``Conflict`` for the caller to log; it still wins (the operator may know better).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from capabilities.family_table import FamilyRow
from capabilities.models import (
    CapabilityOverrides,
    Modality,
    ModelCapabilities,
    Resolved,
    Source,
)
from capabilities.payloads import Findings

__all__ = ["PROBE_ORDER", "Conflict", "merge_capabilities"]

T = TypeVar("T")

PROBE_ORDER: tuple[str, ...] = (
    Source.PROPS,
    Source.API_PS,
    Source.API_SHOW,
    Source.API_V0_MODELS,
    Source.MODEL_INFO,
    Source.MODELS,
)
"""Probe precedence, most specific first. Probes not listed come after, in the order asked."""


@dataclass(frozen=True, slots=True)
class Conflict:
    """An override above what the server reports."""

    field: str
    override: int
    server: int
    server_source: str


def _ordered(findings: Sequence[Findings]) -> list[Findings]:
    rank = {name: i for i, name in enumerate(PROBE_ORDER)}
    return sorted(findings, key=lambda f: rank.get(f.source, len(rank)))


def _probed(
    findings: Sequence[Findings], get: Callable[[Findings], T | None]
) -> Resolved[T] | None:
    for found in findings:
        value = get(found)
        if value is not None:
            return Resolved(value, found.source)
    return None


def _layer(
    override: T | None,
    probed: Resolved[T] | None,
    family: T | None,
    default: T,
) -> Resolved[T]:
    if override is not None:
        return Resolved(override, Source.OVERRIDE)
    if probed is not None:
        return probed
    if family is not None:
        return Resolved(family, Source.FAMILY_TABLE)
    return Resolved(default, Source.DEFAULT)


def _layer_optional(
    override: T | None, probed: Resolved[T] | None, family: T | None
) -> Resolved[T | None]:
    if override is not None:
        return Resolved(override, Source.OVERRIDE)
    if probed is not None:
        return Resolved(probed.value, probed.source)
    if family is not None:
        return Resolved(family, Source.FAMILY_TABLE)
    return Resolved(None, Source.DEFAULT)


def merge_capabilities(
    *,
    backend: Resolved[str],
    backend_version: Resolved[str | None],
    model_id: str | None,
    matched_model_id: str | None,
    served_model_ids: Resolved[tuple[str, ...]],
    findings: Sequence[Findings],
    family: FamilyRow | None,
    overrides: CapabilityOverrides,
    model_field_ignored: bool,
    answered_probes: tuple[str, ...],
) -> tuple[ModelCapabilities, list[Conflict]]:
    """The merged capabilities and every override that exceeds a probed value."""
    ordered = _ordered(findings)
    runtime = _probed(ordered, lambda f: f.context_window)
    training = _probed(ordered, lambda f: f.training_context_window)
    max_output = _probed(ordered, lambda f: f.max_output_tokens)
    slots = _probed(ordered, lambda f: f.parallel_slots)

    conflicts = [
        Conflict(name, wanted, probed.value, probed.source)
        for name, wanted, probed in (
            ("context_window", overrides.context_window, runtime or training),
            ("max_output_tokens", overrides.max_output_tokens, max_output),
            ("parallel_slots", overrides.parallel_slots, slots),
        )
        if wanted is not None and probed is not None and wanted > probed.value
    ]

    capabilities = ModelCapabilities(
        backend=backend,
        backend_version=backend_version,
        model_id=model_id,
        matched_model_id=matched_model_id,
        served_model_ids=served_model_ids,
        context_window=_layer_optional(
            overrides.context_window,
            runtime or training,
            family.context_window if family else None,
        ),
        training_context_window=_layer_optional(None, training, None),
        max_output_tokens=_layer_optional(
            overrides.max_output_tokens,
            max_output,
            family.max_output_tokens if family else None,
        ),
        input_modalities=_layer(
            overrides.input_modalities,
            _probed(ordered, lambda f: f.input_modalities),
            family.input_modalities if family else None,
            (Modality.TEXT,),
        ),
        output_modalities=_layer(
            overrides.output_modalities,
            _probed(ordered, lambda f: f.output_modalities),
            None,
            (Modality.TEXT,),
        ),
        supports_tools=_layer_optional(
            overrides.supports_tools,
            _probed(ordered, lambda f: f.supports_tools),
            family.supports_tools if family else None,
        ),
        supports_reasoning=_layer_optional(
            overrides.supports_reasoning,
            _probed(ordered, lambda f: f.supports_reasoning),
            family.supports_reasoning if family else None,
        ),
        parallel_slots=_layer_optional(overrides.parallel_slots, slots, None),
        family=family.family if family else None,
        model_field_ignored=model_field_ignored,
        answered_probes=answered_probes,
    )
    return capabilities, conflicts

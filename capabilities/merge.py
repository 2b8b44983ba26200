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
from providers.abstractions.records import value_class

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


@value_class(frozen=True)
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


@value_class(frozen=True)
class _Sizes:
    """The probed numbers, read both by their fields and by the override check."""

    runtime: Resolved[int] | None
    training: Resolved[int] | None
    max_output: Resolved[int] | None
    slots: Resolved[int] | None

    @classmethod
    def probe(cls, ordered: Sequence[Findings]) -> _Sizes:
        return cls(
            runtime=_probed(ordered, lambda f: f.context_window),
            training=_probed(ordered, lambda f: f.training_context_window),
            max_output=_probed(ordered, lambda f: f.max_output_tokens),
            slots=_probed(ordered, lambda f: f.parallel_slots),
        )

    @property
    def window(self) -> Resolved[int] | None:
        """A runtime context from any probe beats a training maximum from any probe."""
        return self.runtime or self.training


def _conflicts(overrides: CapabilityOverrides, sizes: _Sizes) -> list[Conflict]:
    return [
        Conflict(name, wanted, probed.value, probed.source)
        for name, wanted, probed in (
            ("context_window", overrides.context_window, sizes.window),
            ("max_output_tokens", overrides.max_output_tokens, sizes.max_output),
            ("parallel_slots", overrides.parallel_slots, sizes.slots),
        )
        if wanted is not None and probed is not None and wanted > probed.value
    ]


def _modalities(
    ordered: Sequence[Findings], overrides: CapabilityOverrides, family: FamilyRow | None
) -> tuple[Resolved[tuple[str, ...]], Resolved[tuple[str, ...]]]:
    """Input and output modalities; text when nothing says otherwise."""
    inputs = _layer(
        overrides.input_modalities,
        _probed(ordered, lambda f: f.input_modalities),
        family.input_modalities if family else None,
        (Modality.TEXT,),
    )
    outputs = _layer(
        overrides.output_modalities,
        _probed(ordered, lambda f: f.output_modalities),
        None,
        (Modality.TEXT,),
    )
    return inputs, outputs


def _support(
    ordered: Sequence[Findings], overrides: CapabilityOverrides, family: FamilyRow | None
) -> tuple[Resolved[bool | None], Resolved[bool | None]]:
    """Tool and reasoning support; unknown (``None``) when nothing says either way."""
    tools = _layer_optional(
        overrides.supports_tools,
        _probed(ordered, lambda f: f.supports_tools),
        family.supports_tools if family else None,
    )
    reasoning = _layer_optional(
        overrides.supports_reasoning,
        _probed(ordered, lambda f: f.supports_reasoning),
        family.supports_reasoning if family else None,
    )
    return tools, reasoning


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
    sizes = _Sizes.probe(ordered)
    input_modalities, output_modalities = _modalities(ordered, overrides, family)
    supports_tools, supports_reasoning = _support(ordered, overrides, family)
    capabilities = ModelCapabilities(
        backend=backend,
        backend_version=backend_version,
        model_id=model_id,
        matched_model_id=matched_model_id,
        served_model_ids=served_model_ids,
        context_window=_layer_optional(
            overrides.context_window, sizes.window, family.context_window if family else None
        ),
        training_context_window=_layer_optional(None, sizes.training, None),
        max_output_tokens=_layer_optional(
            overrides.max_output_tokens,
            sizes.max_output,
            family.max_output_tokens if family else None,
        ),
        input_modalities=input_modalities,
        output_modalities=output_modalities,
        supports_tools=supports_tools,
        supports_reasoning=supports_reasoning,
        parallel_slots=_layer_optional(overrides.parallel_slots, sizes.slots, None),
        family=family.family if family else None,
        model_field_ignored=model_field_ignored,
        answered_probes=answered_probes,
    )
    return capabilities, _conflicts(overrides, sizes)

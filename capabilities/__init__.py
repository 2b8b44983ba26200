"""Capability resolution and backend detection: know the context window, modalities and model
id before the first request.

``OpenAiCompatibleCapabilityResolver(base_url).resolve(model_id)`` returns ``ModelCapabilities``
whose every field is a ``Resolved(value, source)``; ``detect_backend`` identifies the server;
``validate_model_id`` / ``model_not_found_error`` explain a wrong model id; ``wait_until_ready``
waits out a model that is still loading; ``clamp_max_output_tokens`` fits ``max_tokens`` into
the window on request.

Modules, one job each — I/O: ``probes`` (requests that fail softly), ``detect`` (fingerprints),
``readiness``, ``resolver`` (orchestration and cache); pure: ``findings`` (lenient validation),
``payloads`` and ``native_payloads`` (one parser per probe), ``merge`` (layering with
provenance), ``family_table``, ``backend`` (the discovery view of ``providers.backends``),
``model_id``, ``budget``, ``models`` (the result types); ``events`` names the structlog events.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from providers.lazy_exports import lazy_exports as _lazy_exports

if _TYPE_CHECKING:
    from capabilities.backend import TRAITS, Backend, BackendTraits, traits_for
    from capabilities.budget import clamp_max_output_tokens, estimate_prompt_tokens
    from capabilities.detect import DetectedBackend, detect_backend
    from capabilities.family_table import FAMILIES, FamilyRow, family_for
    from capabilities.model_id import (
        closest_model_id,
        match_model_id,
        model_not_found_error,
        validate_model_id,
    )
    from capabilities.models import (
        CapabilityOverrides,
        Modality,
        ModelCapabilities,
        Resolved,
        Source,
    )
    from capabilities.probes import DEFAULT_PROBE_TIMEOUT
    from capabilities.readiness import Readiness, wait_until_ready
    from capabilities.resolver import OpenAiCompatibleCapabilityResolver

# Each name loads its own module on first use: the pure helpers the wire clients need (the
# budget, a wrong model id's diagnosis) cost neither pydantic nor the probing machinery.
_LAZY: dict[str, str] = {
    "TRAITS": "capabilities.backend",
    "Backend": "capabilities.backend",
    "BackendTraits": "capabilities.backend",
    "traits_for": "capabilities.backend",
    "clamp_max_output_tokens": "capabilities.budget",
    "estimate_prompt_tokens": "capabilities.budget",
    "DetectedBackend": "capabilities.detect",
    "detect_backend": "capabilities.detect",
    "FAMILIES": "capabilities.family_table",
    "FamilyRow": "capabilities.family_table",
    "family_for": "capabilities.family_table",
    "closest_model_id": "capabilities.model_id",
    "match_model_id": "capabilities.model_id",
    "model_not_found_error": "capabilities.model_id",
    "validate_model_id": "capabilities.model_id",
    "CapabilityOverrides": "capabilities.models",
    "Modality": "capabilities.models",
    "ModelCapabilities": "capabilities.models",
    "Resolved": "capabilities.models",
    "Source": "capabilities.models",
    "DEFAULT_PROBE_TIMEOUT": "capabilities.probes",
    "Readiness": "capabilities.readiness",
    "wait_until_ready": "capabilities.readiness",
    "OpenAiCompatibleCapabilityResolver": "capabilities.resolver",
}


__all__ = [
    "DEFAULT_PROBE_TIMEOUT",
    "FAMILIES",
    "TRAITS",
    "Backend",
    "BackendTraits",
    "CapabilityOverrides",
    "DetectedBackend",
    "FamilyRow",
    "Modality",
    "ModelCapabilities",
    "OpenAiCompatibleCapabilityResolver",
    "Readiness",
    "Resolved",
    "Source",
    "clamp_max_output_tokens",
    "closest_model_id",
    "detect_backend",
    "estimate_prompt_tokens",
    "family_for",
    "match_model_id",
    "model_not_found_error",
    "traits_for",
    "validate_model_id",
    "wait_until_ready",
]

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)

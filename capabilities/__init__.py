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
    from capabilities.backend import TRAITS as TRAITS
    from capabilities.backend import Backend as Backend
    from capabilities.backend import BackendTraits as BackendTraits
    from capabilities.backend import traits_for as traits_for
    from capabilities.budget import clamp_max_output_tokens as clamp_max_output_tokens
    from capabilities.budget import estimate_prompt_tokens as estimate_prompt_tokens
    from capabilities.detect import DetectedBackend as DetectedBackend
    from capabilities.detect import detect_backend as detect_backend
    from capabilities.family_table import FAMILIES as FAMILIES
    from capabilities.family_table import FamilyRow as FamilyRow
    from capabilities.family_table import family_for as family_for
    from capabilities.model_id import closest_model_id as closest_model_id
    from capabilities.model_id import match_model_id as match_model_id
    from capabilities.model_id import model_not_found_error as model_not_found_error
    from capabilities.model_id import validate_model_id as validate_model_id
    from capabilities.models import CapabilityOverrides as CapabilityOverrides
    from capabilities.models import Modality as Modality
    from capabilities.models import ModelCapabilities as ModelCapabilities
    from capabilities.models import Resolved as Resolved
    from capabilities.models import Source as Source
    from capabilities.probes import DEFAULT_PROBE_TIMEOUT as DEFAULT_PROBE_TIMEOUT
    from capabilities.readiness import Readiness as Readiness
    from capabilities.readiness import wait_until_ready as wait_until_ready
    from capabilities.resolver import (
        OpenAiCompatibleCapabilityResolver as OpenAiCompatibleCapabilityResolver,
    )

# Each name loads its own module on first use: the pure helpers the wire clients need (the
# budget, a wrong model id's diagnosis) cost neither pydantic nor the probing machinery.
_lazy_exports(
    __name__,
    {
        ".backend": ("TRAITS", "Backend", "BackendTraits", "traits_for"),
        ".budget": ("clamp_max_output_tokens", "estimate_prompt_tokens"),
        ".detect": ("DetectedBackend", "detect_backend"),
        ".family_table": ("FAMILIES", "FamilyRow", "family_for"),
        ".model_id": (
            "closest_model_id",
            "match_model_id",
            "model_not_found_error",
            "validate_model_id",
        ),
        ".models": ("CapabilityOverrides", "Modality", "ModelCapabilities", "Resolved", "Source"),
        ".probes": ("DEFAULT_PROBE_TIMEOUT",),
        ".readiness": ("Readiness", "wait_until_ready"),
        ".resolver": ("OpenAiCompatibleCapabilityResolver",),
    },
)

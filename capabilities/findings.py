"""What a probe found (``Findings``) and the lenient pydantic types every parser reads with.

Probe responses are outside input, so each is validated once with pydantic — leniently: a field
of the wrong type, a zero or a negative number becomes "absent" (``None``), never an exception.
Only positive integers count (llama.cpp reports ``n_ctx: 0`` for "unknown"; LoRA cards on vLLM
carry ``max_model_len: null``). A payload that is not a JSON object at all gives no findings.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from capabilities.models import Modality
from providers.abstractions.records import value_class

__all__ = [
    "Findings",
    "Lenient",
    "ModelsListing",
    "Objects",
    "OptBool",
    "OptMapping",
    "OptText",
    "OptTexts",
    "PositiveInt",
    "flagged_modalities",
    "positive",
    "sub",
    "validate",
]


@value_class(frozen=True)
class Findings:
    """What one probe said about the model; ``None`` everywhere it said nothing."""

    source: str
    context_window: int | None = None
    """The context one request can use *now* (runtime: ``n_ctx`` per slot, ``max_model_len``,
    a loaded model's context)."""
    training_context_window: int | None = None
    """The model's maximum (``n_ctx_train``, ``max_context_length``); used for the context window
    only when no probe reports a runtime value."""
    max_output_tokens: int | None = None
    input_modalities: tuple[str, ...] | None = None
    output_modalities: tuple[str, ...] | None = None
    supports_tools: bool | None = None
    supports_reasoning: bool | None = None
    parallel_slots: int | None = None
    version: str | None = None
    family_hints: tuple[str, ...] = ()
    """Names worth looking up in the family table (a GGUF path, SGLang's ``model_type``)."""
    router: bool = False
    """llama.cpp router (multi-model) ``/props``: describes the router, not a model."""


@value_class(frozen=True)
class ModelsListing:
    """``/v1/models``: the served ids, who owns them, and the matched entry's findings."""

    served_ids: tuple[str, ...]
    owned_by: tuple[str, ...]
    matched_id: str | None
    findings: Findings


# --- lenient field types -------------------------------------------------------------------


def positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def as_bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def as_text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def as_texts(value: Any) -> list[str] | None:
    if not isinstance(value, list):
        return None
    return [v for v in value if isinstance(v, str)]


def as_mapping(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def as_objects(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


PositiveInt = Annotated[int | None, BeforeValidator(positive)]
OptBool = Annotated[bool | None, BeforeValidator(as_bool)]
OptText = Annotated[str | None, BeforeValidator(as_text)]
OptTexts = Annotated[list[str] | None, BeforeValidator(as_texts)]
OptMapping = Annotated[dict[str, Any] | None, BeforeValidator(as_mapping)]
Objects = Annotated[list[dict[str, Any]], BeforeValidator(as_objects)]


class Lenient(BaseModel):
    """Base of every probe-response model: unknown keys are ignored (servers add keys every
    release) and every field is one of the lenient types above."""

    model_config = ConfigDict(extra="ignore", frozen=True, protected_namespaces=())


M = TypeVar("M", bound=Lenient)


def validate(model: type[M], payload: Any) -> M | None:
    """The validated payload, or ``None`` when it is not a JSON object."""
    if not isinstance(payload, dict):
        return None
    try:
        return model.model_validate(payload)
    except ValidationError:  # pragma: no cover - every field is lenient; kept as a backstop
        return None


def sub(model: type[M], value: dict[str, Any] | None) -> M | None:
    return validate(model, value) if value is not None else None


def flagged_modalities(
    image: bool | None = None, audio: bool | None = None, video: bool | None = None
) -> tuple[str, ...] | None:
    """Text plus whatever is flagged; ``None`` when no flag is a boolean (nothing was said)."""
    if image is None and audio is None and video is None:
        return None
    flags = {Modality.IMAGE: image, Modality.AUDIO: audio, Modality.VIDEO: video}
    return (Modality.TEXT, *(name for name, on in flags.items() if on))

"""The resolved answer — ``ModelCapabilities`` — and the vocabulary it is written in.

Every field is a ``Resolved(value, source)``: a number without its origin cannot be trusted or
debugged ("why does it think the context is 32 768?" is answered by ``source == "family_table"``).
Sources and modalities are open string constants, like the backend names: a new probe or a new
modality is a new string, never a breaking change.

This module owns the data shapes only. What fills them is ``merge.py`` (pure) and
``resolver.py`` (I/O); overrides from configuration are validated here because they are
outside input.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any, Final, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, PositiveInt, field_validator, model_validator

from providers.abstractions.records import value_class

__all__ = ["CapabilityOverrides", "Modality", "ModelCapabilities", "Resolved", "Source"]

T = TypeVar("T")


class Source:
    """Where a value came from. Open: probes added later bring their own names.

    Precedence (highest first) is ``OVERRIDE`` > any probe > ``FAMILY_TABLE`` > ``DEFAULT``;
    among probes the order is fixed in ``merge.py`` (``/props`` before ``/v1/models``).
    """

    OVERRIDE: Final = "override"
    """Explicit configuration (constructor ``overrides``, YAML, CLI flag)."""
    PROPS: Final = "props"
    """llama.cpp ``GET /props`` (``default_generation_settings``, ``modalities``, …)."""
    MODELS: Final = "models"
    """``GET /v1/models`` (``max_model_len``, ``meta.n_ctx``, ``owned_by``)."""
    MODEL_INFO: Final = "model_info"
    """SGLang ``GET /model_info`` (multimodal flags, reasoning and tool parsers)."""
    API_SHOW: Final = "api_show"
    """Ollama ``POST /api/show`` (``capabilities``, ``parameters``, ``model_info``)."""
    API_PS: Final = "api_ps"
    """Ollama ``GET /api/ps`` (``context_length`` of a loaded model)."""
    API_V0_MODELS: Final = "api_v0_models"
    """LM Studio ``GET /api/v0/models`` (``loaded_context_length``, ``max_context_length``)."""
    SERVER_INFO: Final = "server_info"
    """SGLang ``GET /server_info`` (its only version source)."""
    VERSION: Final = "version"
    """vLLM ``GET /version`` (``{"version": "0.33.0"}``)."""
    API_VERSION: Final = "api_version"
    """Ollama ``GET /api/version``."""
    HEADER: Final = "header"
    """The ``Server: llama.cpp`` response header (backend only)."""
    ROOT: Final = "root"
    """``GET /`` text: "SGLang is running", "Ollama is running" (backend only)."""
    HOST: Final = "host"
    """The configured host name, e.g. ``api.openai.com`` (backend only)."""
    FAMILY_TABLE: Final = "family_table"
    """The built-in model-family table (``family_table.py``): public model cards."""
    DEFAULT: Final = "default"
    """Nothing said anything; the library default (often ``None``: unknown)."""


class Modality:
    """Input/output kinds. llama.cpp calls images ``vision``; it is normalised to ``image``."""

    TEXT: Final = "text"
    IMAGE: Final = "image"
    AUDIO: Final = "audio"
    VIDEO: Final = "video"
    ORDER: Final = (TEXT, IMAGE, AUDIO, VIDEO)
    """Canonical order used in every tuple of modalities, so snapshots and JSON are stable."""

    @staticmethod
    def normalise(names: Any) -> tuple[str, ...] | None:
        """A stable, de-duplicated tuple, or ``None`` when ``names`` is not a list of strings.

        Unknown names are kept (lower-cased) after the known ones: a server announcing a
        modality we have never heard of should show it, not lose it.
        """
        if not isinstance(names, list | tuple | set | frozenset):
            return None
        seen: set[str] = set()
        for name in names:
            if not isinstance(name, str) or not name.strip():
                continue
            key = name.strip().lower()
            seen.add(Modality.IMAGE if key == "vision" else key)
        if not seen:
            return None
        known = [m for m in Modality.ORDER if m in seen]
        return (*known, *sorted(seen.difference(Modality.ORDER)))


@value_class(frozen=True)
class Resolved(Generic[T]):
    """One resolved value and the layer that supplied it."""

    value: T
    source: str

    def to_dict(self) -> dict[str, Any]:
        value: Any = list(self.value) if isinstance(self.value, tuple) else self.value
        return {"value": value, "source": self.source}


@value_class(frozen=True)
class ModelCapabilities:
    """What one model on one server can do, each field with its provenance.

    ``None`` values mean "unknown", never "no": ``supports_tools.value is None`` means no layer
    said either way. ``context_window`` is what *one request* can use: for llama.cpp that is the
    per-slot context (``-c`` divided by ``-np`` unless the KV cache is unified), not ``-c``.
    """

    backend: Resolved[str]
    backend_version: Resolved[str | None]
    model_id: str | None
    """The id the caller configured (``None``: not configured)."""
    matched_model_id: str | None
    """The served id the configured one was matched to (exact, then case-insensitive, then the
    only served model); ``None`` when nothing matched."""
    served_model_ids: Resolved[tuple[str, ...]]
    context_window: Resolved[int | None]
    training_context_window: Resolved[int | None]
    """The model's maximum (``n_ctx_train``, Ollama ``*.context_length``, LM Studio
    ``max_context_length``); the runtime ``context_window`` may be smaller."""
    max_output_tokens: Resolved[int | None]
    input_modalities: Resolved[tuple[str, ...]]
    output_modalities: Resolved[tuple[str, ...]]
    supports_tools: Resolved[bool | None]
    supports_reasoning: Resolved[bool | None]
    parallel_slots: Resolved[int | None]
    family: str | None
    """The family-table row that matched, if any (``qwen3``, ``llama-3.1``, …)."""
    model_field_ignored: bool
    """The server answers whatever ``model`` says (llama.cpp single-model mode), so a model-id
    mismatch is harmless there and validation passes."""
    answered_probes: tuple[str, ...]
    """Probe names (``Source`` values) that answered 2xx, in the order they were asked."""

    def provenance(self) -> dict[str, str]:
        """``{field: source}`` for every resolved field."""
        return {
            f.name: value.source
            for f in fields(self)
            if isinstance(value := getattr(self, f.name), Resolved)
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form for ``oaicompat probe --json``: resolved fields as
        ``{"value": …, "source": …}``, plain fields as they are."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Resolved):
                out[f.name] = value.to_dict()
            elif isinstance(value, tuple):
                out[f.name] = list(value)
            else:
                out[f.name] = value
        return out


class CapabilityOverrides(BaseModel):
    """Explicit values from configuration; each set field wins over every probe.

    Validated because it is outside input (YAML, CLI flags): integers must be positive, an
    unknown key is an error (a typo such as ``context_windw`` must not be silently ignored).
    ``backend`` skips detection entirely.
    """

    model_config = ConfigDict(
        frozen=True, extra="forbid", use_attribute_docstrings=True, protected_namespaces=()
    )

    backend: str | None = None
    """The server software (``llamacpp``, ``vllm``, ``sglang``…); skips detection."""
    context_window: PositiveInt | None = None
    """Tokens of prompt plus output the model accepts."""
    max_output_tokens: PositiveInt | None = None
    """Largest ``max_tokens`` the server allows, when it is below the context window."""
    input_modalities: tuple[str, ...] | None = None
    """What the model reads: ``[text]``, ``[text, image]``…"""
    output_modalities: tuple[str, ...] | None = None
    """What the model writes: normally ``[text]``."""
    supports_tools: bool | None = None
    """Whether the server turns tool calls into structured ``tool_calls``."""
    supports_reasoning: bool | None = None
    """Whether the model produces reasoning."""
    parallel_slots: PositiveInt | None = None
    """Requests the server decodes at once (llama.cpp ``--parallel``)."""
    vision: bool | None = None
    """Shorthand the configuration examples use: ``true`` means image input next to text,
    ``false`` text only. Ignored when ``input_modalities`` is given explicitly."""

    @model_validator(mode="before")
    @classmethod
    def _vision_shorthand(cls, data: Any) -> Any:
        if (
            isinstance(data, Mapping)
            and data.get("vision") is not None
            and data.get("input_modalities") is None
        ):
            modalities = ["text", "image"] if data["vision"] else ["text"]
            data = {**data, "input_modalities": modalities}
        return data

    @field_validator("backend")
    @classmethod
    def _lower_backend(cls, value: str | None) -> str | None:
        return value.strip().lower() or None if value is not None else None

    @field_validator("input_modalities", "output_modalities")
    @classmethod
    def _modalities(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if value is None:
            return None
        normalised = Modality.normalise(list(value))
        if normalised is None:
            raise ValueError("modalities must be a non-empty list of names")
        return normalised

    @classmethod
    def coerce(cls, value: CapabilityOverrides | Mapping[str, Any] | None) -> CapabilityOverrides:
        """Accept an instance, a plain mapping (YAML) or ``None``."""
        if value is None:
            return cls()
        if isinstance(value, CapabilityOverrides):
            return value
        return cls.model_validate(dict(value))

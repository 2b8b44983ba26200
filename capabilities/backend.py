"""Backend names and what discovery should do for each: one row per backend.

Like ``providers.backends`` (request-side quirks), this is a table, so code elsewhere reads a
row's fields and never compares a backend's name. A new backend is a new constant, a new row,
and its fingerprint in ``detect.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from capabilities.models import Source

__all__ = ["TRAITS", "Backend", "BackendTraits", "traits_for"]


class Backend:
    """Well-known backend names. Open: any other lower-case string is a valid backend name
    (it gets the ``generic`` row), so a server we have never seen never raises.

    The values equal ``providers.backends`` keys, so ``profile_for(caps.backend.value)`` works.
    """

    LLAMACPP: Final = "llamacpp"
    VLLM: Final = "vllm"
    SGLANG: Final = "sglang"
    OLLAMA: Final = "ollama"
    LMSTUDIO: Final = "lmstudio"
    OPENAI: Final = "openai"
    GENERIC: Final = "generic"


@dataclass(frozen=True, slots=True)
class BackendTraits:
    name: str

    probes: tuple[str, ...] = ()
    """Discovery probes (``Source`` names, see ``resolver.PROBES``) run after detection, besides
    ``/v1/models`` which every backend gets. Default: none — an unknown server is asked nothing
    it might not understand."""

    model_field_ignored: bool = False
    """The server ignores the request's ``model`` (llama.cpp single-model mode answers with the
    loaded model whatever is sent, wire.md §5), so a configured id that is not served is not an
    error there. Default ``False``: vLLM answers 404, SGLang misreads ``a:b`` as a LoRA adapter,
    Ollama and LM Studio load whatever the name says."""


TRAITS: dict[str, BackendTraits] = {
    Backend.LLAMACPP: BackendTraits(
        Backend.LLAMACPP, probes=(Source.PROPS,), model_field_ignored=True
    ),
    Backend.VLLM: BackendTraits(Backend.VLLM, probes=(Source.VERSION,)),
    # /server_info is SGLang's only version source (wire.md §1.3).
    Backend.SGLANG: BackendTraits(Backend.SGLANG, probes=(Source.MODEL_INFO, Source.SERVER_INFO)),
    Backend.OLLAMA: BackendTraits(
        Backend.OLLAMA, probes=(Source.API_VERSION, Source.API_SHOW, Source.API_PS)
    ),
    Backend.LMSTUDIO: BackendTraits(Backend.LMSTUDIO, probes=(Source.API_V0_MODELS,)),
    Backend.OPENAI: BackendTraits(Backend.OPENAI),
    Backend.GENERIC: BackendTraits(Backend.GENERIC),
}


def traits_for(backend: str) -> BackendTraits:
    """The row for a backend name; unknown names get the cautious generic row."""
    return TRAITS.get(backend.lower(), BackendTraits(backend.lower()))

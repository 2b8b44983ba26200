"""Which server is behind a base URL: cheapest signals first, stop once decided.

The order follows docs/wire.md §1.4:

1. the configured host (``api.openai.com``) — no request at all;
2. ``GET /v1/models`` — needed anyway for the served ids: a ``Server: llama.cpp`` header (sent
   on every llama.cpp answer, 401 and 503 included), else ``data[].owned_by``
   (``llamacpp`` / ``vllm`` / ``sglang``; llama-cpp-python's ``"me"``, which is too plain to
   decide alone, only on a card that also has its ``permissions`` list, docs/wire.md §7);
3. key-free probes for when ``/v1/models`` needs a key we lack or says nothing:
   ``GET /props`` (llama.cpp only), ``GET /version`` (vLLM), ``GET /`` ("SGLang is running",
   "Ollama is running"), ``GET /api/version`` (Ollama), ``GET /api/v0/models`` (LM Studio).

Every probe URL derives from the configured prefix (``Endpoint.server_path``), never the host
root; the ``Server`` header is checked on every answer, whatever its status. Anything undecided is
``generic``: the tolerant profile, and no backend-specific probes.

The fingerprints — the only place outside tables and tests where backend names are spelled — are
the ``_OWNED_BY``, ``_CARD_KEY`` and ``_ROOT_TEXT`` tables below. Every row of
``providers.backends.PROFILES`` has one except ``generic``, which is what detection answers when
nothing matched; ``openai`` is recognised by its host alone
(``tests/unit/providers/test_backends_table.py`` checks both).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import httpx

from capabilities import events
from capabilities.backend import Backend, traits_for
from capabilities.models import Source
from capabilities.payloads import PARSERS, first_version, parse_models, parse_version
from capabilities.probes import (
    DEFAULT_PROBE_TIMEOUT,
    PROBES,
    Prober,
    ProbeResponse,
    run_probe,
)
from providers.abstractions.logs import get_logger
from providers.abstractions.records import value_class
from providers.transport.endpoint import Endpoint

__all__ = ["DetectedBackend", "backend_version", "detect_backend", "detect_with"]

_log = get_logger(__name__)

_SERVER_HEADER = "llama.cpp"
_OWNED_BY = {
    "llamacpp": Backend.LLAMACPP,
    "vllm": Backend.VLLM,
    "sglang": Backend.SGLANG,
    "me": Backend.LLAMA_CPP_PYTHON,
}
_CARD_KEY = {"me": "permissions"}
"""Owners too plain to decide alone, and the key their model card must also carry:
llama-cpp-python lists ``{"id", "object": "model", "owned_by": "me", "permissions": []}``."""
_ROOT_TEXT = (("sglang is running", Backend.SGLANG), ("ollama is running", Backend.OLLAMA))
_OPENAI_HOSTS = ("api.openai.com",)
_VERSION_PROBES = (Source.PROPS, Source.VERSION, Source.SERVER_INFO, Source.API_VERSION)


@value_class(frozen=True)
class DetectedBackend:
    """Which server software answered and why it was decided so: the evidence is kept because
    a wrong guess must be traceable to the one answer that made it."""

    backend: str
    """A ``Backend`` constant (or ``generic``)."""
    version: str | None
    """llama.cpp ``build_info`` (``b6490-2b0c...``), vLLM/Ollama ``version``, SGLang
    ``/server_info.version``; ``None`` when the backend does not say (LM Studio, OpenAI)."""
    evidence: str
    """Human-readable: which answer decided, e.g. ``owned_by "vllm" in GET …/v1/models``."""
    source: str
    """The deciding signal as a ``Source`` name (``header``, ``models``, ``props``, …)."""


Decision = tuple[str, str] | None
"""``(backend, evidence)`` or undecided."""


def _from_models(response: ProbeResponse) -> Decision:
    if not response.ok:
        return None
    for owner in parse_models(response.payload, None).owned_by:
        backend = _OWNED_BY.get(owner.lower())
        if backend is None:
            continue
        key = _CARD_KEY.get(owner.lower())
        if key is None:
            return backend, f'owned_by "{owner}" in GET {response.url}'
        if _card_has(response.payload, owner, key):
            return backend, f'owned_by "{owner}" with "{key}" in GET {response.url}'
    return None


def _card_has(payload: Any, owner: str, key: str) -> bool:
    """Whether a model card owned by ``owner`` carries ``key`` (a list)."""
    data = payload.get("data") if isinstance(payload, dict) else None
    return isinstance(data, list) and any(
        isinstance(card, dict) and card.get("owned_by") == owner and isinstance(card.get(key), list)
        for card in data
    )


def _from_props(response: ProbeResponse) -> Decision:
    payload: Any = response.payload
    if (
        response.ok
        and isinstance(payload, dict)
        and (
            "default_generation_settings" in payload or str(payload.get("role")).lower() == "router"
        )
    ):
        return Backend.LLAMACPP, f"llama.cpp /props shape at GET {response.url}"
    return None


def _from_version(response: ProbeResponse) -> Decision:
    if response.ok and parse_version(response.payload, Source.VERSION).version:
        return Backend.VLLM, f'{{"version": …}} at GET {response.url}'
    return None


def _from_root(response: ProbeResponse) -> Decision:
    if not response.ok:
        return None
    text = response.text.lower()
    for marker, backend in _ROOT_TEXT:
        if marker in text:
            return backend, f'"{marker}" at GET {response.url}'
    return None


def _from_api_version(response: ProbeResponse) -> Decision:
    if response.ok and parse_version(response.payload, Source.API_VERSION).version:
        return Backend.OLLAMA, f'{{"version": …}} at GET {response.url}'
    return None


def _from_api_v0_models(response: ProbeResponse) -> Decision:
    payload: Any = response.payload
    data = payload.get("data") if response.ok and isinstance(payload, dict) else None
    if isinstance(data, list) and any(
        isinstance(e, dict) and ("compatibility_type" in e or "max_context_length" in e)
        for e in data
    ):
        return Backend.LMSTUDIO, f"LM Studio model listing at GET {response.url}"
    return None


def _steps(endpoint: Endpoint) -> list[tuple[str, str, Callable[[ProbeResponse], Decision]]]:
    return [
        (Source.MODELS, endpoint.models, _from_models),
        (Source.PROPS, endpoint.server_path("/props"), _from_props),
        (Source.VERSION, endpoint.server_path("/version"), _from_version),
        (Source.ROOT, endpoint.server_path("/"), _from_root),
        (Source.API_VERSION, endpoint.server_path("/api/version"), _from_api_version),
        (Source.API_V0_MODELS, endpoint.server_path("/api/v0/models"), _from_api_v0_models),
    ]


async def _decide(prober: Prober, endpoint: Endpoint) -> tuple[str, str, str]:
    """``(backend, evidence, source)``."""
    host = httpx.URL(endpoint.api_base).host.lower()
    if host in _OPENAI_HOSTS:
        return Backend.OPENAI, f"host {host}", Source.HOST
    for source, url, decide in _steps(endpoint):
        response = await prober.get(url)
        if response is None:
            if prober.unreachable:
                break
            continue
        if (response.server or "").lower().startswith(_SERVER_HEADER):
            evidence = f"Server: {response.server} header on GET {url} (HTTP {response.status})"
            return Backend.LLAMACPP, evidence, Source.HEADER
        decision = decide(response)
        if decision is not None:
            return decision[0], decision[1], source
    return Backend.GENERIC, "no probe identified the server", Source.DEFAULT


async def backend_version(prober: Prober, endpoint: Endpoint, backend: str) -> str | None:
    """The version from the backend's own version probe (memoised, so free if already asked)."""
    found = []
    for name in traits_for(backend).probes:
        if name not in _VERSION_PROBES:
            continue
        response = await run_probe(prober, endpoint, PROBES[name], None)
        if response is not None:
            found.append(PARSERS[name](response.payload, None))
    return first_version(found)[0]


async def detect_with(prober: Prober, endpoint: Endpoint) -> DetectedBackend:
    """``detect_backend`` on a caller's ``Prober`` (the resolver shares its memo)."""
    backend, evidence, source = await _decide(prober, endpoint)
    version = await backend_version(prober, endpoint, backend)
    _log.info(
        events.BACKEND_DETECTED,
        backend=backend,
        version=version,
        evidence=evidence,
        base_url=endpoint.api_base,
    )
    return DetectedBackend(backend, version, evidence, source)


async def detect_backend(
    http: httpx.AsyncClient,
    endpoint: Endpoint,
    *,
    probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
    headers: Mapping[str, str] | None = None,
) -> DetectedBackend:
    """Identify the server behind ``endpoint``; never raises for an unreachable or odd server
    (the answer is then ``generic`` with the evidence saying why). ``headers`` carries the API
    key, which ``/v1/models`` needs on vLLM, SGLang and current llama.cpp; without one there,
    the base URL's user info is sent (``Endpoint.authorized``)."""
    prober = Prober(http, headers=endpoint.authorized(headers), timeout=probe_timeout)
    return await detect_with(prober, endpoint)

"""``OpenAiCompatibleCapabilityResolver``: detect, probe, merge, cache.

One resolution is: detect the backend (``detect.py``), read ``/v1/models``, run the backend's
own probes (``backend.TRAITS``: ``/props`` for llama.cpp, ``/model_info`` for SGLang,
``/api/show`` for Ollama, …) concurrently, parse each answer (``payloads.py``), look the model up
in the family table, and merge (``merge.py``). Every probe shares one ``Prober``, so no URL is
fetched twice, and every failed or slow probe is simply absent — ``resolve`` does not raise for
a server that is down, odd or slow.

Unlike netclaw's resolver, this one keeps the configured path prefix for ``/props``, survives a
failing ``/v1/models``, has its own per-probe timeout, matches served ids case-insensitively and
falls back to the only served model, knows SGLang, reads llama.cpp's context as per slot (with
``total_slots`` beside it), and caches.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any

import httpx

from capabilities import events
from capabilities.backend import traits_for
from capabilities.detect import backend_version, detect_with
from capabilities.family_table import FamilyRow, family_for
from capabilities.merge import Conflict, merge_capabilities
from capabilities.model_id import validate_model_id
from capabilities.models import CapabilityOverrides, ModelCapabilities, Resolved, Source
from capabilities.payloads import PARSERS, Findings, ModelsListing, first_version, parse_models
from capabilities.probes import DEFAULT_PROBE_TIMEOUT, PROBES, Prober, run_probe
from providers.abstractions.logs import get_logger
from providers.transport.endpoint import Endpoint
from providers.transport.stale_connections import new_http_client

__all__ = ["OpenAiCompatibleCapabilityResolver"]

_log = get_logger(__name__)


class OpenAiCompatibleCapabilityResolver:
    """What the model behind ``base_url`` can do, each value with its source.

    ``overrides`` (a ``CapabilityOverrides`` or a plain mapping from configuration) win over
    every probe; an override above what the server reports is logged as
    ``oaicompat.capabilities.override_exceeds_server`` and still used. Results are cached per base
    URL and model id until ``invalidate``; a resolution in which no probe answered is not cached, so
    a server that was still starting is asked again next time.

    Pass ``http_client`` to share a connection pool (it is then not closed by ``aclose``).
    """

    def __init__(
        self,
        base_url: str | Endpoint,
        http_client: httpx.AsyncClient | Callable[[], httpx.AsyncClient] | None = None,
        api_key: str | None = None,
        overrides: CapabilityOverrides | Mapping[str, Any] | None = None,
        probe_timeout: float = DEFAULT_PROBE_TIMEOUT,
        *,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.endpoint = (
            base_url if isinstance(base_url, Endpoint) else Endpoint.from_base_url(base_url)
        )
        self.overrides = CapabilityOverrides.coerce(overrides)
        self.probe_timeout = probe_timeout
        self._headers = self.endpoint.authorized(
            {"Accept": "application/json", **(headers or {})}, api_key
        )
        self._owns_http = http_client is None
        # A wire client passes how to find its running loop's pool (it keeps one per loop).
        self._http_of = http_client if callable(http_client) else None
        self._http = None if callable(http_client) else http_client or new_http_client()
        self._cache: dict[tuple[str, str | None], ModelCapabilities] = {}
        # An asyncio.Lock belongs to the loop that first waited on it: one set per loop.
        self._locks: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, dict[tuple[str, str | None], asyncio.Lock]
        ] = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        # Never the headers: they hold the API key.
        return f"{type(self).__name__}(base_url={self.endpoint.api_base!r})"

    async def __aenter__(self) -> OpenAiCompatibleCapabilityResolver:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._owns_http and self._http is not None:
            await self._http.aclose()

    def invalidate(self, *model_ids: str | None) -> None:
        """Forget cached results: for the given model ids, or all of them when none is given
        (after a server restart with other flags, or a model swap)."""
        if not model_ids:
            self._cache.clear()
            return
        for model_id in model_ids:
            self._cache.pop((self.endpoint.api_base, model_id), None)

    def cached(self, model_id: str | None = None) -> ModelCapabilities | None:
        """The cached result without any I/O, or ``None`` — for error paths (explaining a 404
        with the served ids) that must not start probing."""
        return self._cache.get((self.endpoint.api_base, model_id))

    async def resolve(self, model_id: str | None = None) -> ModelCapabilities:
        """The capabilities of ``model_id`` (``None``: whatever the server serves)."""
        key = (self.endpoint.api_base, model_id)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        locks = self._locks.setdefault(asyncio.get_running_loop(), {})
        lock = locks.setdefault(key, asyncio.Lock())
        async with lock:
            cached = self._cache.get(key)
            if cached is not None:
                return cached
            capabilities = await self._resolve(model_id)
            if capabilities.answered_probes:
                self._cache[key] = capabilities
            return capabilities

    async def validate_model(self, model_id: str | None) -> str:
        """The model id requests should carry, or ``ModelNotFoundError`` explaining the mismatch.

        Passes without checking when the server ignores the field (llama.cpp single-model mode
        answers with its one model whatever is sent) or did not list its models (no
        ``/v1/models`` answer: nothing to check against); both are logged as
        ``oaicompat.capabilities.model_check_skipped``.
        """
        caps = await self.resolve(model_id)
        served = caps.served_model_ids.value
        backend = caps.backend.value
        if caps.model_field_ignored or caps.served_model_ids.source == Source.DEFAULT:
            reason = (
                "the server ignores the request's model field"
                if caps.model_field_ignored
                else "the server did not list its models"
            )
            _log.info(events.MODEL_CHECK_SKIPPED, model_id=model_id, backend=backend, reason=reason)
            chosen = model_id or caps.matched_model_id
            if chosen is not None:
                return chosen
        return validate_model_id(model_id, served, backend=backend, base_url=self.endpoint.api_base)

    async def _resolve(self, model_id: str | None) -> ModelCapabilities:
        http = self._http_of() if self._http_of is not None else self._http
        assert http is not None
        prober = Prober(http, headers=self._headers, timeout=self.probe_timeout)
        backend = await self._backend(prober)
        traits = traits_for(backend.value)
        listing, findings, answered = await _probe(prober, self.endpoint, traits.probes, model_id)
        router = any(f.router for f in findings)
        model_field_ignored = traits.model_field_ignored and not router
        version, version_source = first_version(findings)
        capabilities, conflicts = merge_capabilities(
            backend=backend,
            backend_version=Resolved(version, version_source or Source.DEFAULT),
            model_id=model_id,
            matched_model_id=listing.matched_id if listing else None,
            served_model_ids=(
                Resolved(listing.served_ids, Source.MODELS)
                if listing is not None
                else Resolved((), Source.DEFAULT)
            ),
            findings=findings,
            family=_family(model_id, listing, findings, model_field_ignored),
            overrides=self.overrides,
            model_field_ignored=model_field_ignored,
            answered_probes=answered,
        )
        self._log_outcome(model_id, capabilities, conflicts)
        return capabilities

    async def _backend(self, prober: Prober) -> Resolved[str]:
        """The configured backend, else the detected one."""
        if self.overrides.backend is not None:
            await backend_version(prober, self.endpoint, self.overrides.backend)  # warms the memo
            return Resolved(self.overrides.backend, Source.OVERRIDE)
        detected = await detect_with(prober, self.endpoint)
        return Resolved(detected.backend, detected.source)

    def _log_outcome(
        self, model_id: str | None, capabilities: ModelCapabilities, conflicts: list[Conflict]
    ) -> None:
        base_url = self.endpoint.api_base
        for conflict in conflicts:
            _log.warning(
                events.OVERRIDE_EXCEEDS_SERVER,
                field=conflict.field,
                override=conflict.override,
                server=conflict.server,
                server_source=conflict.server_source,
                base_url=base_url,
                model_id=model_id,
            )
        _log.info(
            events.RESOLVED,
            base_url=base_url,
            model_id=model_id,
            backend=capabilities.backend.value,
            context_window=capabilities.context_window.value,
            provenance=capabilities.provenance(),
        )


async def _probe(
    prober: Prober, endpoint: Endpoint, names: tuple[str, ...], model_id: str | None
) -> tuple[ModelsListing | None, list[Findings], tuple[str, ...]]:
    """``/v1/models`` first (its match names the model the other probes ask about), then the
    backend's own probes concurrently. Returns the listing, every answer's findings, and the
    names of the probes that answered."""
    answered: list[str] = []
    models = await prober.get(endpoint.models)
    listing: ModelsListing | None = None
    if models is not None and models.ok:
        listing = parse_models(models.payload, model_id)
        answered.append(Source.MODELS)
    target = model_id or (listing.matched_id if listing else None)
    responses = await asyncio.gather(
        *(run_probe(prober, endpoint, PROBES[name], target) for name in names)
    )
    findings: list[Findings] = []
    for name, response in zip(names, responses, strict=True):
        if response is not None:
            answered.append(name)
            findings.append(PARSERS[name](response.payload, target))
    if listing is not None:
        findings.append(listing.findings)
    return listing, findings, tuple(answered)


def _family(
    model_id: str | None,
    listing: ModelsListing | None,
    findings: list[Findings],
    model_field_ignored: bool,
) -> FamilyRow | None:
    served_names = [listing.matched_id if listing else None]
    served_names += [hint for found in findings for hint in found.family_hints]
    # Where the server ignores the model field, what it serves is what answers: its names
    # come first and the configured id (often a free-form label there) last.
    return family_for(
        [*served_names, model_id] if model_field_ignored else [model_id, *served_names]
    )

"""Discovery requests that can fail without consequence.

A probe asks one URL one question and, whatever goes wrong — refused, reset, slow, not JSON,
404 — answers "absent" (``None``) instead of raising. Each probe has its own time limit, so one
slow path (a proxy that hangs on ``/props``) costs at most ``timeout`` and never the whole
resolution. Once a connection cannot even be opened, later probes are skipped: a dead host
should cost one timeout, not seven.

Responses are memoised per ``Prober`` (one per resolution), so detection and the resolver can
both ask for ``/v1/models`` and the server sees one request. This module owns the I/O and
nothing else: what an answer means is ``payloads.py``'s and ``detect.py``'s business.

A probe carries the client's credentials (``Authorization`` and any extra header such as
``X-Api-Key``), so it stays on the configured origin: a redirect within it (``/props`` →
``/props/``) is followed, one to another scheme, host or port is not, and the probe is absent.
httpx's own redirect handling drops only ``Authorization`` on the way out, and keeps even that
for an upgrade to https on the same host.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import httpx

from capabilities import events
from capabilities.models import Source
from providers.abstractions.errors import ProviderError
from providers.abstractions.limits import DEFAULT_LIMITS
from providers.abstractions.logs import get_logger
from providers.abstractions.records import value_class
from providers.transport.bodies import read_prefix
from providers.transport.endpoint import Endpoint
from providers.transport.json_guard import loads_within

__all__ = ["DEFAULT_PROBE_TIMEOUT", "PROBES", "ProbeResponse", "ProbeSpec", "Prober", "run_probe"]

DEFAULT_PROBE_TIMEOUT = 5.0
"""Seconds per probe. Discovery answers come from memory on every backend, so a probe slower
than this is a proxy or a server in trouble, and start-up should not wait for it."""

_MAX_BODY = 1_000_000
"""Bodies larger than this are not parsed (a /props chat template is a few KB; a listing of
hundreds of LM Studio models is well under this). They are not even read past it: a body is
read in bounded pieces (``providers.transport.bodies``), so neither a huge page nor a gzip bomb
costs more than this much memory."""

_MAX_REDIRECTS = 5

_log = get_logger(__name__)


class CrossOriginRedirect(httpx.HTTPError):
    """A probe was redirected off the configured origin (logged by this class name)."""


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port


@value_class(frozen=True)
class ProbeResponse:
    """An HTTP answer, whatever its status: a 404 with ``Server: llama.cpp`` still identifies
    the backend."""

    url: str
    status: int
    server: str | None
    """The ``Server`` header."""
    text: str
    payload: Any
    """The body parsed as JSON, or ``None`` when it is not JSON."""

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class Prober:
    """Runs probes for one resolution; never raises for a failed probe."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_PROBE_TIMEOUT,
        max_body: int = _MAX_BODY,
    ) -> None:
        self._http = http
        self._max_body = max_body
        self._headers = dict(headers or {})
        self._timeout = timeout
        self._memo: dict[tuple[str, str, str], ProbeResponse | None] = {}
        self._unreachable = False

    @property
    def unreachable(self) -> bool:
        """A connection could not be opened; every later probe is skipped."""
        return self._unreachable

    async def get(self, url: str) -> ProbeResponse | None:
        return await self.request("GET", url)

    async def post(self, url: str, body: Mapping[str, Any]) -> ProbeResponse | None:
        return await self.request("POST", url, body)

    async def request(
        self, method: str, url: str, body: Mapping[str, Any] | None = None
    ) -> ProbeResponse | None:
        """The answer, or ``None`` (transport failure, timeout, host unreachable)."""
        key = (method, url, json.dumps(body, sort_keys=True) if body is not None else "")
        if key in self._memo:
            return self._memo[key]
        result = None if self._unreachable else await self._fetch(method, url, body)
        self._memo[key] = result
        return result

    async def _fetch(
        self, method: str, url: str, body: Mapping[str, Any] | None
    ) -> ProbeResponse | None:
        try:
            async with asyncio.timeout(self._timeout):
                response = await self._follow(method, url, body)
                try:
                    content = await read_prefix(response, self._max_body + 1)
                finally:
                    await response.aclose()
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            self._unreachable = True
            _log.debug(events.PROBE_FAILED, url=url, error=type(exc).__name__, unreachable=True)
            return None
        except (httpx.HTTPError, TimeoutError, OSError, ProviderError) as exc:  # (bad gzip)
            _log.debug(events.PROBE_FAILED, url=url, error=type(exc).__name__)
            return None
        text = _text(response, content) if len(content) <= self._max_body else ""
        try:
            payload = loads_within(text, DEFAULT_LIMITS.max_json_depth) if text else None
        except (ValueError, ProviderError):  # not JSON, or nested past the limit
            payload = None
        _log.debug(events.PROBE_ANSWERED, url=url, status=response.status_code)
        return ProbeResponse(
            url=url,
            status=response.status_code,
            server=response.headers.get("server"),
            text=text,
            payload=payload,
        )

    async def _follow(
        self, method: str, url: str, body: Mapping[str, Any] | None
    ) -> httpx.Response:
        """The answer, its body not read yet, after redirects within the origin (never to
        another one: the request carries credentials). The caller closes it."""
        request = self._http.build_request(
            method, url, headers=self._headers, json=body, timeout=self._timeout
        )
        origin = _origin(request.url)
        for _ in range(_MAX_REDIRECTS + 1):
            response = await self._http.send(request, stream=True, follow_redirects=False)
            target = response.next_request
            if target is None:
                return response
            await response.aclose()
            if _origin(target.url) != origin:
                raise CrossOriginRedirect(f"redirected off {origin}")
            request = target
        raise httpx.TooManyRedirects("too many redirects", request=request)


def _text(response: httpx.Response, content: bytes) -> str:
    """The body as text, in the charset the answer names (UTF-8 if none), as httpx would."""
    try:
        return content.decode(response.charset_encoding or "utf-8", "replace")
    except LookupError:  # an unknown charset
        return content.decode("utf-8", "replace")


@value_class(frozen=True)
class ProbeSpec:
    """Where a named probe lives under the server root, and how to ask it."""

    name: str
    paths: tuple[str, ...]
    """Tried in order until one answers 2xx (SGLang renamed ``/get_model_info`` to
    ``/model_info``; both are asked so old and new servers work)."""
    method: str = "GET"
    needs_model: bool = False
    """The probe is about one model (Ollama ``/api/show``): skipped without a model id."""


PROBES: dict[str, ProbeSpec] = {
    spec.name: spec
    for spec in (
        ProbeSpec(Source.PROPS, ("/props",)),
        ProbeSpec(Source.VERSION, ("/version",)),
        ProbeSpec(Source.MODEL_INFO, ("/model_info", "/get_model_info")),
        ProbeSpec(Source.SERVER_INFO, ("/server_info", "/get_server_info")),
        ProbeSpec(Source.API_VERSION, ("/api/version",)),
        ProbeSpec(Source.API_SHOW, ("/api/show",), method="POST", needs_model=True),
        ProbeSpec(Source.API_PS, ("/api/ps",)),
        ProbeSpec(Source.API_V0_MODELS, ("/api/v0/models",)),
    )
}


async def run_probe(
    prober: Prober, endpoint: Endpoint, spec: ProbeSpec, model_id: str | None
) -> ProbeResponse | None:
    """The first 2xx answer among ``spec.paths`` under the server root, else ``None``.

    Paths derive from ``endpoint.server_path`` — the configured prefix — never the host root:
    behind ``http://host/llm/v1`` llama.cpp's ``/props`` is ``http://host/llm/props``.
    """
    if spec.needs_model and not model_id:
        return None
    for path in spec.paths:
        url = endpoint.server_path(path)
        if spec.method == "POST":
            response = await prober.post(url, {"model": model_id})
        else:
            response = await prober.get(url)
        if response is not None and response.ok:
            return response
    return None

"""Waiting for a backend that is still loading its model, within a budget.

llama.cpp binds its port before the model loads and answers every path with
``503 {"error": {"message": "Loading model", …}}`` until it is ready; SGLang's ``/health`` is 503
while starting; vLLM does not even listen until ready (connection refused). All three are
"not yet", and a client started together with its server (docker compose, a test fixture) should
wait them out rather than fail its first request. Whatever else answers — 200, 401, 404 (a server
without ``/health``), a redirect (never followed: it would take the credentials wherever it
points) — means the server is up; whether it is the *right* server is the resolver's question,
not this one's.

When the budget runs out the error says how long it waited and what the server last said.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping

import httpx

from capabilities import events
from providers.abstractions.errors import BackendUnavailableError, ProviderError
from providers.abstractions.logs import get_logger
from providers.abstractions.records import value_class
from providers.transport.bodies import read_prefix
from providers.transport.endpoint import Endpoint
from providers.transport.error_bodies import parse_error_body

__all__ = ["Readiness", "wait_until_ready"]

_log = get_logger(__name__)

_NOT_READY = frozenset({502, 503, 504})
"""503: loading (llama.cpp), starting (SGLang), engine dead (vLLM); 502/504: a proxy in front
of a backend that is not listening yet."""


@value_class(frozen=True)
class Readiness:
    """How the wait for a loading server ended: how long, how many tries, and the status that
    counted as ready (a 401 or 404 also means the server is up)."""

    waited_seconds: float
    attempts: int
    status: int
    """The status of the answer that counted as ready."""


async def wait_until_ready(
    http: httpx.AsyncClient,
    endpoint: Endpoint,
    budget_seconds: float = 120.0,
    poll_interval: float = 0.5,
    *,
    headers: Mapping[str, str] | None = None,
    probe_timeout: float = 5.0,
) -> Readiness:
    """Poll ``GET <prefix>/health`` until the server is up or ``budget_seconds`` have passed.

    Raises ``BackendUnavailableError`` (status 503, or ``None`` when nothing ever answered) with a
    message naming the URL, the time waited and the last answer.
    """
    url = endpoint.server_path("/health")
    headers = endpoint.authorized(headers)
    started = time.monotonic()
    deadline = started + budget_seconds
    attempts = 0
    announced = False
    while True:
        attempts += 1
        timeout = max(0.05, min(probe_timeout, deadline - time.monotonic()))
        status, detail = await _ask(http, url, headers, timeout)
        waited = time.monotonic() - started
        if status is not None and status not in _NOT_READY:
            if announced:
                _log.info(
                    events.BACKEND_READY,
                    url=url,
                    status=status,
                    waited_seconds=round(waited, 3),
                    attempts=attempts,
                )
            return Readiness(waited, attempts, status)
        if not announced:
            _log.info(
                events.BACKEND_NOT_READY, url=url, status=status, waited_seconds=round(waited, 3)
            )
            announced = True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _not_ready(
                endpoint,
                url,
                waited=waited,
                budget_seconds=budget_seconds,
                attempts=attempts,
                status=status,
                detail=detail,
            )
        await asyncio.sleep(min(poll_interval, remaining))


_MAX_DETAIL_BYTES = 64 * 1024
"""Of a not-ready answer's body, read for the message it carries."""


async def _ask(
    http: httpx.AsyncClient, url: str, headers: Mapping[str, str], timeout: float
) -> tuple[int | None, str]:
    """One ``GET /health``: its status (``None``: nothing answered) and, when not ready, what
    it said. A redirect is not followed, whatever the http client's setting: it would take the
    credentials wherever it points, and an answer of any kind means the server is up."""
    try:
        async with (
            asyncio.timeout(timeout),
            http.stream(
                "GET", url, headers=headers, timeout=timeout, follow_redirects=False
            ) as response,
        ):
            status = response.status_code
            if status not in _NOT_READY:
                return status, ""
            # Only what the message needs: a hostile or broken /health must not make the
            # client read (or inflate) an endless body.
            content = await read_prefix(response, _MAX_DETAIL_BYTES)
    except (httpx.HTTPError, TimeoutError, OSError, ProviderError) as exc:
        return None, type(exc).__name__
    message = parse_error_body(content).message
    return status, f"HTTP {status}" + (f" {message!r}" if message else "")


def _not_ready(
    endpoint: Endpoint,
    url: str,
    *,
    waited: float,
    budget_seconds: float,
    attempts: int,
    status: int | None,
    detail: str,
) -> BackendUnavailableError:
    return BackendUnavailableError(
        f"{endpoint.server_root} not ready after waiting {waited:.1f} s "
        f"(budget {budget_seconds:g} s, {attempts} attempts); last answer from {url}: {detail}",
        status=status,
        user_message=f"The model server did not become ready within {budget_seconds:g} seconds.",
    )

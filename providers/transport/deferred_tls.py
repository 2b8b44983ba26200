"""A connection pool that loads certificate authorities only when a request needs TLS.

``httpx.AsyncHTTPTransport()`` builds its verifying ``ssl.SSLContext`` when it is made: it parses
certifi's bundle of about 150 authorities, 45 to 50 ms on the benchmark machine, which is a
quarter of a cold start from ``import`` to a first streamed answer. Most endpoints this library
talks to are ``http://`` on a local network (llama-server, vLLM and SGLang serve plain HTTP), and
for them that work is never used.

So the pool is chosen by the request's scheme when the first request of that scheme is sent:

* ``http``: a pool whose TLS context trusts no authority and checks host names. It is never
  asked for TLS (httpcore starts TLS only for ``https``/``wss`` origins); if it ever were, the
  handshake would fail, never pass unverified.
* anything else: ``httpx.AsyncHTTPTransport``'s own verifying pool, made exactly as httpx makes
  it (certifi, or ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` from the environment), on the first such
  request, so an ``https://`` endpoint verifies as before and pays the same cost one request
  later.

Both pools are sized by the same ``httpx.Limits``; an endpoint uses one scheme, so one pool.
Each does its bookkeeping in time linear in its connections (``linear_pool``).

Behind a proxy (``providers.transport.proxies``) each pool is httpx's proxy pool and the rule is
the same: an ``https`` request is tunnelled (``CONNECT``) and the origin's certificate verified
through the tunnel with the authorities loaded on that first ``https`` request; an ``http``
request is forwarded and never asks for TLS of the origin. (A proxy reached over ``https://``
itself is verified by httpcore with its default authorities when the first connection opens.)
"""

from __future__ import annotations

import functools
import ssl

import httpx

from providers.transport.linear_pool import use_linear_pool

__all__ = ["DeferredTlsTransport", "untrusting_tls_context"]


@functools.cache
def untrusting_tls_context() -> ssl.SSLContext:
    """The plain-HTTP pool's TLS context: verifying, with no authority to verify against.

    One per process (a context is thread-safe once configured, and this one never changes).
    """
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # CERT_REQUIRED and check_hostname


class DeferredTlsTransport(httpx.AsyncBaseTransport):
    """Sends ``http`` requests on a pool that loads no authorities, and everything else on
    httpx's verifying pool, each made on its first request."""

    def __init__(
        self, limits: httpx.Limits, *, proxy: str | None = None, trust_env: bool = True
    ) -> None:
        self._limits = limits
        self._proxy = proxy
        self._trust_env = trust_env
        self._plain: httpx.AsyncHTTPTransport | None = None
        self._verifying: httpx.AsyncHTTPTransport | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.pool_for(request.url.scheme).handle_async_request(request)

    def pool_for(self, scheme: str) -> httpx.AsyncHTTPTransport:
        """The pool that carries ``scheme``'s requests, made now if this is the first."""
        if scheme == "http":
            if self._plain is None:
                self._plain = httpx.AsyncHTTPTransport(
                    verify=untrusting_tls_context(), limits=self._limits, proxy=self._proxy
                )
                use_linear_pool(self._plain)
            return self._plain
        if self._verifying is None:
            self._verifying = httpx.AsyncHTTPTransport(
                limits=self._limits, proxy=self._proxy, trust_env=self._trust_env
            )
            use_linear_pool(self._verifying)
        return self._verifying

    @property
    def made(self) -> tuple[httpx.AsyncHTTPTransport, ...]:
        """The pools made so far (what closing must reach)."""
        return tuple(pool for pool in (self._plain, self._verifying) if pool is not None)

    async def aclose(self) -> None:
        for pool in self.made:
            await pool.aclose()

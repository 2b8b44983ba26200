"""The library's own HTTP client loads certificate authorities only for a request that needs TLS,
and an ``https://`` request is verified exactly as httpx verifies it (``deferred_tls``).

Real sockets on loopback: a plain HTTP server, and a TLS one serving a throwaway self-signed
certificate (``tests/unit/tls``)."""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from providers.transport.deferred_tls import DeferredTlsTransport, untrusting_tls_context
from providers.transport.stale_connections import new_http_client

_TLS = Path(__file__).resolve().parents[2] / "tls"
_CERT = _TLS / "localhost-cert.pem"
_ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(_ANSWER)
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
        pass  # a client that refused the certificate hangs up mid-handshake
    finally:
        writer.close()


@pytest.fixture
async def plain_url() -> AsyncIterator[str]:
    server = await asyncio.start_server(_answer, "127.0.0.1", 0)
    async with server:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/"


@pytest.fixture
async def tls_url() -> AsyncIterator[str]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(_CERT, _TLS / "localhost-key.pem")
    server = await asyncio.start_server(_answer, "127.0.0.1", 0, ssl=context)
    async with server:
        yield f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}/"


async def test_an_http_endpoint_loads_no_certificate_authority(
    plain_url: str, authorities_loaded: list[str]
) -> None:
    async with new_http_client() as client:
        response = await client.get(plain_url)
    assert response.content == b"ok"
    assert authorities_loaded == []


async def test_an_https_endpoint_loads_them_on_its_first_request(
    tls_url: str, authorities_loaded: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(_CERT))  # as httpx reads it: trust_env
    async with new_http_client() as client:
        assert authorities_loaded == []
        response = await client.get(tls_url)
    assert response.content == b"ok"
    assert authorities_loaded == ["load_verify_locations"]


async def test_an_https_endpoint_is_verified(tls_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    async with new_http_client() as client:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await client.get(tls_url)


async def test_the_plain_pools_context_refuses_any_certificate(
    tls_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Were an https request ever sent on the plain pool, it would fail, not pass unverified:
    even with the environment naming the server's certificate as trusted."""
    monkeypatch.setenv("SSL_CERT_FILE", str(_CERT))
    context = untrusting_tls_context()
    assert (context.verify_mode, context.check_hostname) == (ssl.CERT_REQUIRED, True)
    async with httpx.AsyncClient(verify=context) as client:
        with pytest.raises(httpx.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await client.get(tls_url)


async def test_each_scheme_has_its_own_pool_and_closing_closes_both(plain_url: str) -> None:
    transport = DeferredTlsTransport(httpx.Limits(max_connections=3))
    plain, verifying = transport.pool_for("http"), transport.pool_for("https")
    assert plain is not verifying
    assert transport.pool_for("http") is plain and transport.pool_for("wss") is verifying
    closed: list[object] = []
    for pool in (plain, verifying):
        pool.aclose = functools.partial(_note_closed, closed, pool)  # type: ignore[method-assign]
    async with httpx.AsyncClient(transport=transport) as client:
        assert (await client.get(plain_url)).content == b"ok"
    assert closed == [plain, verifying]


async def _note_closed(closed: list[object], pool: object) -> None:
    closed.append(pool)

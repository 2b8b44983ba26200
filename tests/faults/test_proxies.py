"""The library's own HTTP client goes through the proxy a user configured (issue 32, item 4).

httpx reads ``HTTP_PROXY``/``HTTPS_PROXY``/``ALL_PROXY``/``NO_PROXY`` only for a transport it
makes itself, and the library brings its own (deferred TLS, stale-connection resend): without
``providers.transport.proxies`` every request here went around the proxy. Real sockets: a
counting proxy (``tests/faults/proxy_server.py``), a ``FaultServer`` behind it, and for ``https``
a TLS server with the throwaway loopback certificate of ``tests/unit/tls``, reached through a
``CONNECT`` tunnel and verified with the authorities loaded on that first ``https`` request.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import ssl
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from providers import OpenAiCompatibleChatClient, ProviderConnectionError
from providers.abstractions.errors import ConfigurationError
from providers.config import client_for, load_config
from tests.faults.helpers import COMPLETION, FAST, whole
from tests.faults.proxy_server import LoopbackProxy
from tests.faults.server import FaultServer

PASSWORD = "proxy-pw-93c1f0"
_TLS = Path(__file__).resolve().parents[1] / "unit" / "tls"
_PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No proxy variable of the machine running the tests leaks into them."""
    for name in _PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def chat(base_url: str, **kwargs: Any) -> OpenAiCompatibleChatClient:
    return OpenAiCompatibleChatClient(f"{base_url}/v1", "m", "sk-key-1234", timeouts=FAST, **kwargs)


async def test_the_environments_proxy_carries_the_request(monkeypatch: pytest.MonkeyPatch) -> None:
    async with LoopbackProxy() as proxy, FaultServer([whole()]) as server:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        async with chat(server.base_url) as client:
            response = await client.get_response("hi")
    assert response.text == "Hello"
    assert [(r.method, r.target) for r in proxy.requests] == [
        ("POST", f"{server.base_url}/v1/chat/completions")
    ]
    assert server.attempts == 1


@pytest.mark.parametrize("variable", ["ALL_PROXY", "all_proxy", "http_proxy"])
async def test_each_spelling_httpx_reads_is_read(
    monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    async with LoopbackProxy() as proxy, FaultServer([whole()]) as server:
        monkeypatch.setenv(variable, f"127.0.0.1:{proxy.port}")  # (no scheme: http://)
        async with chat(server.base_url) as client:
            await client.get_response("hi")
    assert len(proxy.requests) == 1


@pytest.mark.parametrize("exempt", ["127.0.0.1", "*", "localhost,127.0.0.1"])
async def test_no_proxy_is_honoured(monkeypatch: pytest.MonkeyPatch, exempt: str) -> None:
    async with LoopbackProxy() as proxy, FaultServer([whole()]) as server:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("NO_PROXY", exempt)
        async with chat(server.base_url) as client:
            await client.get_response("hi")
    assert proxy.requests == []
    assert server.attempts == 1


async def test_trust_env_off_ignores_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    async with LoopbackProxy() as proxy, FaultServer([whole()]) as server:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        async with chat(server.base_url, trust_env=False) as client:
            await client.get_response("hi")
    assert proxy.requests == []
    assert server.attempts == 1


def _config(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "oaicompat.yaml"
    path.write_text(body, encoding="utf-8")
    return path


async def test_a_backends_yaml_proxy_carries_its_requests_and_its_password_stays_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async with LoopbackProxy() as proxy, FaultServer([whole()]) as server:
        monkeypatch.setenv("NO_PROXY", "*")  # the backend's own proxy wins over the environment
        proxy_url = f"http://alice:{PASSWORD}@127.0.0.1:{proxy.port}"
        path = _config(
            tmp_path,
            f"backends:\n  local:\n    base_url: {server.base_url}\n    model_id: m\n"
            f"    proxy: {proxy_url}\n    retry: {{max_attempts: 1}}\n",
        )
        config = load_config(path)
        caplog.set_level(logging.DEBUG)
        with capture_logs() as events:
            client = client_for(config, "local")
            try:
                response = await client.get_response("hi")
            finally:
                await client.aclose()
    assert response.text == "Hello"
    assert len(proxy.requests) == 1
    expected = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    assert proxy.requests[0].proxy_authorization == f"Basic {expected}"
    for text in (repr(config), str(config), config.model_dump_json(), repr(client)):
        assert PASSWORD not in text
    assert PASSWORD not in repr(events)
    assert PASSWORD not in caplog.text


async def test_an_unreachable_proxys_password_is_in_no_error_nor_event(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with FaultServer([whole()]) as server:
        closed = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", 0)
        port = closed.sockets[0].getsockname()[1]
        closed.close()
        await closed.wait_closed()
        caplog.set_level(logging.DEBUG)
        with capture_logs() as events:
            async with chat(server.base_url, proxy=f"http://bob:{PASSWORD}@127.0.0.1:{port}") as c:
                assert PASSWORD not in repr(c)
                with pytest.raises(ProviderConnectionError) as caught:
                    await c.get_response("hi")
    error = caught.value
    texts = [str(error), repr(error), error.user_message, *getattr(error, "__notes__", [])]
    assert not [text for text in texts if PASSWORD in text]
    assert PASSWORD not in repr(events)
    assert PASSWORD not in caplog.text
    assert server.attempts == 0  # never around the proxy


@pytest.mark.parametrize(
    "url", [f"ftp://u:{PASSWORD}@proxy:21", f"http://u:{PASSWORD}@", f"u:{PASSWORD}@[::1"]
)
def test_a_proxy_url_that_cannot_be_used_is_refused_unquoted(url: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        chat("http://127.0.0.1:9", proxy=url)
    assert PASSWORD not in str(caught.value)


def test_a_yaml_proxy_that_cannot_be_used_is_refused_unquoted(tmp_path: Path) -> None:
    path = _config(
        tmp_path, f"backends:\n  b:\n    base_url: http://h:1\n    proxy: ftp://u:{PASSWORD}@p\n"
    )
    with pytest.raises(ConfigurationError) as caught:
        load_config(path)
    assert "proxy" in str(caught.value)
    assert PASSWORD not in str(caught.value)


# --- https through a CONNECT tunnel: the origin's certificate is still verified --------------


async def _tls_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":", 1)[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            ),
            0,
        )
        await reader.readexactly(length)
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
            + f"Content-Length: {len(COMPLETION)}\r\n\r\n".encode()
            + COMPLETION
        )
        await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
        pass  # a client that refused the certificate hangs up mid-handshake
    finally:
        writer.close()


@pytest.fixture
async def tls_base_url() -> AsyncIterator[str]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(_TLS / "localhost-cert.pem", _TLS / "localhost-key.pem")
    server = await asyncio.start_server(_tls_answer, "127.0.0.1", 0, ssl=context)
    async with server:
        yield f"https://127.0.0.1:{server.sockets[0].getsockname()[1]}"


async def test_https_through_a_connect_proxy_verifies_the_origin_with_lazy_authorities(
    tls_base_url: str, monkeypatch: pytest.MonkeyPatch, authorities_loaded: list[str]
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(_TLS / "localhost-cert.pem"))
    async with LoopbackProxy() as proxy:
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        async with chat(tls_base_url) as client:
            assert authorities_loaded == []  # nothing loaded before an https request
            response = await client.get_response("hi")
    assert response.text == "Hello"
    assert [(r.method, r.target) for r in proxy.requests] == [
        ("CONNECT", tls_base_url.removeprefix("https://"))
    ]
    assert authorities_loaded  # loaded on that first request, from SSL_CERT_FILE


async def test_https_through_a_connect_proxy_refuses_an_unknown_certificate(
    tls_base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    async with LoopbackProxy() as proxy, chat(tls_base_url, proxy=proxy.url) as client:
        with pytest.raises(ProviderConnectionError):
            await client.get_response("hi")
    assert [r.method for r in proxy.requests] == ["CONNECT"]  # it went the proxy's way, and failed


async def test_plain_http_through_a_proxy_loads_no_authorities(
    monkeypatch: pytest.MonkeyPatch, authorities_loaded: list[str]
) -> None:
    async with (
        LoopbackProxy() as proxy,
        FaultServer([whole()]) as server,
        chat(server.base_url, proxy=proxy.url) as client,
    ):
        await client.get_response("hi")
    assert len(proxy.requests) == 1
    assert authorities_loaded == []


async def test_the_cli_probes_go_through_the_yaml_proxy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # deferred: the CLI is imported lazily by the library too
    from providers.cli import main

    async with LoopbackProxy() as proxy, FaultServer([whole(b"{}")]) as server:
        path = _config(
            tmp_path,
            f"backends:\n  local:\n    base_url: {server.base_url}\n    model_id: m\n"
            f"    proxy: http://carol:{PASSWORD}@127.0.0.1:{proxy.port}\n",
        )
        await asyncio.to_thread(main, ["probe", "--config", str(path), "--json"])
    assert proxy.requests
    assert len(proxy.requests) == server.attempts
    assert PASSWORD not in "".join(capsys.readouterr())

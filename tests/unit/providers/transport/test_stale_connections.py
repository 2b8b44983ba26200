"""The transport resends only what died on a reused connection before any response byte."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from providers.transport.stale_connections import StaleConnectionResend, new_http_client

URL = "http://127.0.0.1:9/v1/chat/completions"
STALE = httpx.RemoteProtocolError("Server disconnected without sending a response.")


class _ScriptedTransport(httpx.AsyncBaseTransport):
    """Plays one outcome per attempt: ``"reused"``/``"opened"`` failures, or ``"ok"``.

    A fresh connection announces itself through the request's ``trace`` callback, as httpcore's
    pool does; a reused one does not.
    """

    def __init__(self, *outcomes: str, error: Exception = STALE) -> None:
        self.outcomes = list(outcomes)
        self.error = error
        self.bodies: list[bytes] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        outcome = self.outcomes.pop(0)
        trace = request.extensions.get("trace")
        if trace is not None and outcome == "opened":
            await trace("connection.connect_tcp.started", {})
        if trace is not None:
            await trace("http11.send_request_headers.started", {})
        self.bodies.append(await request.aread())
        if outcome == "ok":
            return httpx.Response(200, content=b"done")
        raise self.error


async def _post(transport: httpx.AsyncBaseTransport, **kw: Any) -> httpx.Response:
    async with httpx.AsyncClient(transport=transport) as client:
        return await client.post(URL, **kw)


async def test_a_request_lost_on_a_reused_connection_is_sent_again() -> None:
    inner = _ScriptedTransport("reused", "ok")
    response = await _post(StaleConnectionResend(inner), content=b'{"a":1}')
    assert response.status_code == 200
    assert inner.bodies == [b'{"a":1}', b'{"a":1}']


@pytest.mark.parametrize(
    "error",
    [STALE, httpx.ReadError("Connection reset by peer"), httpx.WriteError("Broken pipe")],
)
async def test_every_stale_socket_symptom_is_resent(error: Exception) -> None:
    inner = _ScriptedTransport("reused", "ok", error=error)
    assert (await _post(StaleConnectionResend(inner), content=b"x")).status_code == 200
    assert len(inner.bodies) == 2


async def test_a_failure_on_a_fresh_connection_is_a_real_failure() -> None:
    inner = _ScriptedTransport("opened", "ok")
    with pytest.raises(httpx.RemoteProtocolError):
        await _post(StaleConnectionResend(inner), content=b"x")
    assert len(inner.bodies) == 1


async def test_other_errors_are_not_resent() -> None:
    inner = _ScriptedTransport("reused", "ok", error=httpx.ReadTimeout("slow"))
    with pytest.raises(httpx.ReadTimeout):
        await _post(StaleConnectionResend(inner), content=b"x")
    assert len(inner.bodies) == 1


async def test_resends_are_bounded() -> None:
    inner = _ScriptedTransport("reused", "reused", "reused", "ok")
    with pytest.raises(httpx.RemoteProtocolError):
        await _post(StaleConnectionResend(inner), content=b"x")
    assert len(inner.bodies) == 3
    assert inner.outcomes == ["ok"]


async def test_a_streamed_request_body_is_never_sent_twice() -> None:
    async def body() -> AsyncIterator[bytes]:
        yield b"once"

    inner = _ScriptedTransport("reused", "ok")
    with pytest.raises(httpx.RemoteProtocolError):
        await _post(StaleConnectionResend(inner), content=body())
    assert inner.bodies == [b"once"]


async def test_the_callers_trace_sees_every_attempt_and_is_restored() -> None:
    events: list[str] = []

    async def trace(event: str, info: dict[str, Any]) -> None:
        events.append(event)

    inner = _ScriptedTransport("reused", "ok")
    request = httpx.Request("POST", URL, content=b"x", extensions={"trace": trace})
    response = await StaleConnectionResend(inner).handle_async_request(request)
    assert response.status_code == 200
    assert events == ["http11.send_request_headers.started"] * 2
    assert request.extensions["trace"] is trace


async def test_without_a_callers_trace_none_is_left_behind() -> None:
    request = httpx.Request("POST", URL, content=b"x")
    await StaleConnectionResend(_ScriptedTransport("ok")).handle_async_request(request)
    assert "trace" not in request.extensions


async def test_the_library_client_resends_and_keeps_httpx_timeouts() -> None:
    client = new_http_client(7.0)
    try:
        assert isinstance(client._transport, StaleConnectionResend)
        assert client.timeout == httpx.Timeout(7.0)
    finally:
        await client.aclose()

"""What a client can send is bounded, and every refusal is OpenAI's error shape."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import httpx
import pytest

from providers.replay.server import ReplayServer
from tests.unit.providers.gateway.backends import HangingBackend, replying
from tests.unit.providers.gateway.serving import config_for, running_gateway

USER = [{"role": "user", "content": "hi"}]


@pytest.fixture
async def backend() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(replying({"content": "Hello"})) as server:
        yield server


def _error(answer: httpx.Response, status: int) -> dict[str, object]:
    assert answer.status_code == status, answer.text
    error: dict[str, object] = answer.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


async def test_bodies_over_the_limit_are_413_declared_or_not(backend: ReplayServer) -> None:
    config = config_for({"local": backend.base_url}, max_body_bytes=1000)
    big = b'{"model": "local", "messages": [], "pad": "' + b"x" * 5000 + b'"}'

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: chunked upload
        for start in range(0, len(big), 100):
            yield big[start : start + 100]

    headers = {"content-type": "application/json"}
    async with running_gateway(config) as url, httpx.AsyncClient() as http:
        declared = await http.post(f"{url}/chat/completions", content=big, headers=headers)
        streamed = await http.post(f"{url}/chat/completions", content=chunks(), headers=headers)
    assert _error(declared, 413)["code"] == "request_too_large"
    assert _error(streamed, 413)["code"] == "request_too_large"
    assert backend.requests == []


@pytest.mark.parametrize(
    ("content", "content_type", "status", "param"),
    [
        (b'{"model": "local", "messages": [}', "application/json", 400, None),
        (b"model=local", "application/x-www-form-urlencoded", 415, "content-type"),
        (b'{"model": "local"}', None, 415, "content-type"),
        (b'{"messages": []}', "application/json; charset=utf-8", 400, "model"),
        (b'["model"]', "application/json", 400, "model"),
        (
            b'{"model": "local", "stream": "true", "messages": []}',
            "application/json",
            400,
            "stream",
        ),
    ],
)
async def test_malformed_requests_are_named(
    backend: ReplayServer, content: bytes, content_type: str | None, status: int, param: str | None
) -> None:
    headers = {"content-type": content_type} if content_type else {}
    config = config_for({"local": backend.base_url})
    async with running_gateway(config) as url, httpx.AsyncClient() as http:
        answer = await http.post(f"{url}/chat/completions", content=content, headers=headers)
    assert _error(answer, status)["param"] == param
    assert backend.requests == []


async def test_headers_over_the_limit_are_431(backend: ReplayServer) -> None:
    config = config_for({"local": backend.base_url}, max_header_bytes=2048)
    async with running_gateway(config) as url, httpx.AsyncClient() as http:
        answer = await http.get(f"{url}/models", headers={"x-pad": "y" * 3000})
    _error(answer, 431)


async def test_one_request_over_the_concurrency_limit_is_429_with_retry_after() -> None:
    async with HangingBackend() as backend:
        config = config_for({"local": backend.base_url}, max_concurrent_requests=1)
        body = {"model": "local", "messages": USER, "stream": True}
        async with running_gateway(config) as url, httpx.AsyncClient(timeout=10) as http:
            async with http.stream("POST", f"{url}/chat/completions", json=body) as first:
                assert first.status_code == 200
                refused = await http.post(f"{url}/chat/completions", json=body)
            await asyncio.wait_for(backend.closed.wait(), 5)
            for _ in range(100):  # the slot is freed once the first answer has ended
                after = await http.get(f"{url}/models")
                if "requests_in_flight 0" in (await http.get(url[:-3] + "/metrics")).text:
                    break
                await asyncio.sleep(0.02)
    assert _error(refused, 429)["code"] == "concurrency_limit"
    assert refused.headers["retry-after"] == "1"
    assert after.status_code == 200
    assert backend.requests == 1


async def test_a_body_that_trickles_in_is_408_and_frees_its_slot(backend: ReplayServer) -> None:
    config = config_for(
        {"local": backend.base_url}, body_timeout_seconds=0.3, max_concurrent_requests=1
    )

    async def slowly() -> AsyncIterator[bytes]:
        yield b'{"model": "local", '
        await asyncio.sleep(2)
        yield b'"messages": []}'

    headers = {"content-type": "application/json"}
    async with running_gateway(config) as url, httpx.AsyncClient(timeout=10) as http:
        answer = await http.post(f"{url}/chat/completions", content=slowly(), headers=headers)
        after = await http.post(
            f"{url}/chat/completions", json={"model": "local", "messages": USER}
        )
    assert _error(answer, 408)["code"] == "request_timeout"
    assert after.status_code == 200

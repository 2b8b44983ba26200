"""The gateway's routes under the real server: what a client sees for each, and what the
backend is sent."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest

from providers.replay.server import ReplayServer
from tests.unit.providers.gateway.backends import replying
from tests.unit.providers.gateway.serving import config_for, running_gateway

USER = [{"role": "user", "content": "hi"}]
KEYS = {"GW_KEYS": "sekrit-1,sekrit-2"}


@pytest.fixture
async def backend() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(replying({"content": "Hello"}, {"content": " there"})) as server:
        yield server


async def test_a_role_is_answered_by_its_backend_with_its_model(backend: ReplayServer) -> None:
    config = config_for({"local": backend.base_url}, {"main": "local"})
    async with running_gateway(config) as url, httpx.AsyncClient() as http:
        answer = await http.post(
            f"{url}/chat/completions", json={"model": "main", "messages": USER}
        )
    assert answer.status_code == 200
    body = answer.json()
    assert body["choices"][0]["message"]["content"] == "Hello there"
    assert body["model"] == "m"
    sent = json.loads(backend.requests[0].body)
    assert sent["model"] == "m-local"  # the configured model, not the role name


async def test_the_inbound_credentials_never_reach_the_backend(backend: ReplayServer) -> None:
    config = config_for(
        {"local": backend.base_url},
        {"main": "local"},
        api_keys_env="GW_KEYS",
        forward_headers=["x-tenant"],
    )
    headers = {"Authorization": "Bearer sekrit-2", "Cookie": "c=1", "X-Tenant": "t7"}
    async with running_gateway(config, env=KEYS) as url, httpx.AsyncClient() as http:
        answer = await http.post(
            f"{url}/chat/completions", json={"model": "main", "messages": USER}, headers=headers
        )
    assert answer.status_code == 200
    received = {name.lower(): value for name, value in backend.requests[0].headers.items()}
    assert received["x-tenant"] == "t7"
    assert "cookie" not in received
    assert "sekrit" not in json.dumps(received)


async def test_without_a_valid_key_nothing_but_health_answers(backend: ReplayServer) -> None:
    config = config_for({"local": backend.base_url}, api_keys_env="GW_KEYS")
    async with running_gateway(config, env=KEYS) as url, httpx.AsyncClient() as http:
        health = await http.get(url.removesuffix("/v1") + "/health")
        models = await http.get(f"{url}/models", headers={"Authorization": "Bearer nope"})
        metrics = await http.get(url.removesuffix("/v1") + "/metrics")
        chat = await http.post(f"{url}/chat/completions", json={"model": "local", "messages": USER})
        allowed = await http.get(f"{url}/models", headers={"Authorization": "Bearer sekrit-1"})
    assert health.status_code == 200
    for refused in (models, metrics, chat):
        assert refused.status_code == 401
        assert refused.json()["error"]["code"] == "invalid_api_key"
    assert backend.requests == []
    assert [m["id"] for m in allowed.json()["data"]] == ["local"]


async def test_models_lists_roles_and_backends_and_names_one(backend: ReplayServer) -> None:
    config = config_for({"a": backend.base_url, "b": backend.base_url}, {"main": "b"})
    async with running_gateway(config) as url, httpx.AsyncClient() as http:
        listing = await http.get(f"{url}/models")
        one = await http.get(f"{url}/models/a")
        missing = await http.get(f"{url}/models/zz")
        bare = await http.get(url.removesuffix("/v1") + "/models")
    assert [(m["id"], m["owned_by"]) for m in listing.json()["data"]] == [
        ("main", "b"),
        ("a", "a"),
        ("b", "b"),
    ]
    assert bare.json() == listing.json()
    assert one.json()["id"] == "a"
    assert missing.status_code == 404


async def test_an_unknown_model_is_a_404_naming_what_exists(backend: ReplayServer) -> None:
    config = config_for({"local": backend.base_url}, {"main": "local"})
    async with running_gateway(config) as url, httpx.AsyncClient() as http:
        answer = await http.post(
            f"{url}/chat/completions", json={"model": "gpt-4o", "messages": USER}
        )
    assert answer.status_code == 404
    error = answer.json()["error"]
    assert (error["code"], error["param"]) == ("model_not_found", "model")
    assert "main, local" in error["message"]
    assert backend.requests == []


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("GET", "/v1/nothing", 404),
        ("DELETE", "/v1/models", 405),
        ("GET", "/v1/chat/completions", 405),
    ],
)
async def test_unknown_routes_and_methods(
    backend: ReplayServer, method: str, path: str, status: int
) -> None:
    config = config_for({"local": backend.base_url})
    async with running_gateway(config) as url, httpx.AsyncClient() as http:
        answer = await http.request(method, url.removesuffix("/v1") + path)
    assert answer.status_code == status
    assert set(answer.json()["error"]) == {"message", "type", "param", "code"}


async def test_a_backend_error_keeps_its_status_in_openais_shape() -> None:
    refusal = {
        "error": {"message": "maximum context length is 8 tokens", "type": "BadRequestError"}
    }
    async with ReplayServer(replying(status=400, error=refusal)) as backend:
        config = config_for({"local": backend.base_url})
        async with running_gateway(config) as url, httpx.AsyncClient() as http:
            body = {"model": "local", "messages": USER, "stream": True}
            answer = await http.post(f"{url}/chat/completions", json=body)
    assert answer.status_code == 400
    assert answer.headers["content-type"] == "application/json"
    assert "context" in answer.json()["error"]["message"]


async def test_metrics_count_answers_by_route_model_and_status(backend: ReplayServer) -> None:
    config = config_for({"local": backend.base_url}, {"main": "local"})
    async with running_gateway(config) as url, httpx.AsyncClient() as http:
        for model in ("main", "main", "nope"):
            await http.post(f"{url}/chat/completions", json={"model": model, "messages": USER})
        text = (await http.get(url.removesuffix("/v1") + "/metrics")).text
    assert 'oaicompat_gateway_requests_total{route="chat",model="main",status="200"} 2' in text
    assert 'oaicompat_gateway_requests_total{route="chat",model="",status="404"} 1' in text
    assert 'oaicompat_gateway_errors_total{model="",backend="",type="ModelNotFoundError"} 1' in text
    assert 'oaicompat_gateway_output_tokens_total{model="main",backend="local"} 6' in text


async def test_a_backend_failing_before_its_first_token_falls_over_to_the_fallback() -> None:
    down = replying(status=503, error={"error": {"message": "loading model"}})
    async with ReplayServer(down) as main, ReplayServer(replying({"content": "Hi"})) as spare:
        config = config_for(
            {"gpu": main.base_url, "cpu": spare.base_url},
            {"main": {"backend": "gpu", "fallback": "cpu"}},
        )
        async with running_gateway(config) as url, httpx.AsyncClient() as http:
            body = {"model": "main", "messages": USER, "stream": True}
            answer = await http.post(f"{url}/chat/completions", json=body)
    assert answer.status_code == 200
    events = [json.loads(e[6:]) for e in answer.text.split("\n\n") if e.startswith("data: {")]
    assert "".join(e["choices"][0]["delta"].get("content", "") for e in events) == "Hi"
    assert answer.text.endswith("data: [DONE]\n\n")
    assert len(main.requests) == 1
    assert json.loads(spare.requests[0].body)["model"] == "m-cpu"

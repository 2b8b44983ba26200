"""The capability resolver against a live ``llama-server`` (``-c 4096 -np 1``), and against a
server that answers ``/v1/models`` the way vLLM does (respx, from the captured vLLM listing).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import respx

from capabilities import (
    Backend,
    OpenAiCompatibleCapabilityResolver,
    Resolved,
    Source,
    model_not_found_error,
    wait_until_ready,
)
from providers import ChatOptions
from providers.abstractions.errors import ModelNotFoundError
from providers.transport.endpoint import Endpoint
from tests.unit.capabilities.fakes import discovery


async def served_ids(base_url: str) -> list[str]:
    async with httpx.AsyncClient() as http:
        response = await http.get(f"{base_url}/v1/models")
    return [entry["id"] for entry in response.json()["data"]]


async def test_live_llamacpp_per_slot_context_from_props(plain_server: Any) -> None:
    async with OpenAiCompatibleCapabilityResolver(plain_server.base_url) as resolver:
        caps = await resolver.resolve(None)
    assert caps.backend == Resolved(Backend.LLAMACPP, Source.HEADER)
    # -c 4096 -np 1: one slot, so the per-slot context is the whole 4096.
    assert caps.context_window == Resolved(plain_server.ctx_size, Source.PROPS)
    assert caps.parallel_slots == Resolved(1, Source.PROPS)
    assert caps.input_modalities == Resolved(("text",), Source.PROPS)
    assert caps.output_modalities == Resolved(("text",), Source.PROPS)
    assert caps.served_model_ids == Resolved(
        tuple(await served_ids(plain_server.base_url)), Source.MODELS
    )
    assert caps.served_model_ids.value  # the server names its model
    assert caps.supports_tools == Resolved(True, Source.PROPS)  # --jinja + a tools template
    assert (caps.backend_version.value or "").startswith("b")  # build_info b<N>-<sha>
    assert caps.model_field_ignored
    assert caps.answered_probes == (Source.MODELS, Source.PROPS)


async def test_live_llamacpp_reasoning_template_is_seen_in_props(reasoning_server: Any) -> None:
    async with OpenAiCompatibleCapabilityResolver(f"{reasoning_server.base_url}/v1") as resolver:
        caps = await resolver.resolve(None)
    assert caps.supports_reasoning == Resolved(True, Source.PROPS)  # Qwen3 template: <think>
    assert caps.context_window == Resolved(reasoning_server.ctx_size, Source.PROPS)


class PrefixProxy(httpx.AsyncBaseTransport):
    """A reverse proxy that serves the real server under ``/llm``; the host root is someone
    else's (404), as behind a path-prefixed ingress."""

    def __init__(self, upstream: str) -> None:
        self._upstream = httpx.URL(upstream)
        self._inner = httpx.AsyncHTTPTransport()
        self.paths: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        if not request.url.path.startswith("/llm/"):
            return httpx.Response(404, text="not here")
        request.url = self._upstream.copy_with(path=request.url.path.removeprefix("/llm"))
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def test_live_llamacpp_behind_a_path_prefixed_proxy(plain_server: Any) -> None:
    proxy = PrefixProxy(plain_server.base_url)
    async with httpx.AsyncClient(transport=proxy) as http:
        resolver = OpenAiCompatibleCapabilityResolver("http://proxy.test/llm/v1", http_client=http)
        caps = await resolver.resolve(None)
    assert caps.context_window == Resolved(plain_server.ctx_size, Source.PROPS)
    assert "/llm/props" in proxy.paths
    assert all(path.startswith("/llm/") for path in proxy.paths)


async def test_live_llamacpp_is_ready_at_once(plain_server: Any) -> None:
    async with httpx.AsyncClient() as http:
        ready = await wait_until_ready(
            http, Endpoint.from_base_url(plain_server.base_url), budget_seconds=5
        )
    assert (ready.status, ready.attempts) == (200, 1)


async def test_live_llamacpp_ignores_the_model_field_so_validation_passes(
    plain_server: Any,
) -> None:
    async with OpenAiCompatibleCapabilityResolver(plain_server.base_url) as resolver:
        assert await resolver.validate_model("no-such-model") == "no-such-model"
    # Why: the server answers a request for any model with the one it has loaded.
    async with httpx.AsyncClient(timeout=30) as http:
        response = await http.post(
            f"{plain_server.base_url}/v1/chat/completions",
            json={
                "model": "no-such-model",
                "messages": [{"role": "user", "content": "hi"}],
                "max_tokens": 1,
            },
        )
    assert response.status_code == 200


VLLM_LIKE = "http://vllm-like.test"


def vllm_like(router: respx.MockRouter) -> None:
    """Only ``/v1/models``, as captured from vLLM 0.33 (``owned_by: "vllm"``,
    ``max_model_len: 4096``); every other path is FastAPI's 404."""
    models = discovery("vllm", "plain")["/v1/models"]
    router.get(f"{VLLM_LIKE}/v1/models").respond(200, content=models.body, headers=models.headers)
    router.route(url__startswith=VLLM_LIKE).respond(404, json={"detail": "Not Found"})


async def test_a_vllm_like_server_reports_vllm_and_max_model_len() -> None:
    with respx.mock(assert_all_called=False) as router:
        vllm_like(router)
        async with OpenAiCompatibleCapabilityResolver(f"{VLLM_LIKE}/v1") as resolver:
            caps = await resolver.resolve("Qwen/Qwen3-0.6B")
    assert caps.backend == Resolved(Backend.VLLM, Source.MODELS)
    assert caps.context_window == Resolved(4096, Source.MODELS)
    assert caps.backend_version == Resolved(None, Source.DEFAULT)  # no /version here


async def test_a_wrong_model_id_fails_fast_with_served_ids_and_a_suggestion() -> None:
    with respx.mock(assert_all_called=False) as router:
        vllm_like(router)
        async with OpenAiCompatibleCapabilityResolver(f"{VLLM_LIKE}/v1") as resolver:
            with pytest.raises(ModelNotFoundError) as caught:
                await resolver.validate_model("qwen3-0.6b")
        # Fast means one discovery pass, no retry: counted, not timed (a clock flakes on CI).
        paths = [call.request.url.path for call in router.calls]
        assert paths.count("/v1/models") == 1 and len(paths) <= 2
    message = str(caught.value)
    assert "serves `Qwen/Qwen3-0.6B`" in message
    assert "configured `qwen3-0.6b`" in message
    assert "did you mean `Qwen/Qwen3-0.6B`?" in message


async def test_a_vllm_404_during_a_request_gets_the_same_explanation() -> None:
    body = (
        '{"error":{"message":"The model `qwen3-0.6b` does not exist.",'
        '"type":"NotFoundError","param":"model","code":404}}'
    )
    error = model_not_found_error(
        404, body, configured="qwen3-0.6b", served_ids=["Qwen/Qwen3-0.6B"], backend="vllm"
    )
    assert error is not None
    assert "did you mean `Qwen/Qwen3-0.6B`?" in str(error)


async def test_client_get_capabilities_against_live_llama_server(plain_server: Any) -> None:
    """The client's own entry point reports what the resolver does (issue 4, item 5)."""
    from providers import OpenAiCompatibleChatClient

    async with OpenAiCompatibleChatClient(plain_server.base_url, validate_model=True) as client:
        caps = await client.get_capabilities()
        response = await client.get_response("hi", ChatOptions(max_output_tokens=2))
    assert caps.backend.value == "llamacpp"
    assert (caps.context_window.value, caps.context_window.source) == (4096, "props")
    assert response.finish_reason is not None

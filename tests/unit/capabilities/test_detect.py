"""``detect_backend`` against each backend's recorded discovery answers (docs/wire.md §1.4)."""

from __future__ import annotations

from dataclasses import replace

import httpx
import pytest
import respx

from capabilities import Backend, Source, detect_backend
from providers.transport.endpoint import Endpoint
from tests.unit.capabilities.fakes import discovery, mount

ROOT = "http://gpu.test/llm"
BASE = f"{ROOT}/v1"


async def detect(
    base_url: str = BASE, headers: dict[str, str] | None = None
) -> tuple[str, str | None, str, str]:
    async with httpx.AsyncClient() as http:
        found = await detect_backend(http, Endpoint.from_base_url(base_url), headers=headers)
    return found.backend, found.version, found.source, found.evidence


@pytest.mark.parametrize(
    ("backend", "version", "source"),
    [
        (Backend.LLAMACPP, "b0-unknown", Source.HEADER),
        (Backend.VLLM, "0.33.0", Source.MODELS),
        # The SGLang capture has no /server_info, so its version stays unknown.
        (Backend.SGLANG, None, Source.MODELS),
        (Backend.OLLAMA, "0.12.6", Source.ROOT),
        (Backend.LMSTUDIO, None, Source.API_V0_MODELS),
    ],
)
async def test_each_backend_is_recognised_from_its_discovery_files(
    backend: str, version: str | None, source: str
) -> None:
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, backend)
        found = await detect()
    assert found[:3] == (backend, version, source)
    assert ROOT in found[3]  # the evidence names the URL that decided


async def test_llamacpp_without_its_server_header_is_recognised_by_owned_by() -> None:
    # A proxy that rewrites the Server header: /v1/models owned_by still says llamacpp.
    recorded = discovery("llamacpp", "qwen25-plain")
    stripped = [
        replace(ex, headers={"Content-Type": "application/json"}) for ex in recorded.values()
    ]
    with respx.mock(assert_all_called=False) as router:
        mount(
            router,
            ROOT,
            "llamacpp",
            stripped,
            fallback=lambda request: httpx.Response(404, json={"error": "nope"}),
        )
        backend, version, source, _ = await detect()
    assert (backend, version, source) == (Backend.LLAMACPP, "b0-unknown", Source.MODELS)


async def test_probing_stops_once_decided() -> None:
    with respx.mock(assert_all_called=False) as router:
        routes = mount(router, ROOT, "vllm")
        props = router.get(f"{ROOT}/props").respond(404)
        await detect()
        assert routes["/v1/models"].call_count == 1
        assert routes["/version"].call_count == 1  # the version, after the decision
        assert not props.called
        assert [str(call.request.url) for call in router.calls] == [
            f"{ROOT}/v1/models",
            f"{ROOT}/version",
        ]


async def test_vllm_without_the_api_key_is_recognised_by_its_key_free_version_route() -> None:
    recorded = discovery("vllm", "plain")
    unauthorized = replace(recorded["/v1/models"], status=401, body=b'{"error":"Unauthorized"}')
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, "vllm", [unauthorized, recorded["/version"]])
        backend, version, source, _ = await detect()
    assert (backend, version, source) == (Backend.VLLM, "0.33.0", Source.VERSION)


async def test_sglang_without_the_api_key_is_recognised_by_its_root_text() -> None:
    recorded = discovery("sglang", "plain")
    with respx.mock(assert_all_called=False) as router:
        router.get(f"{ROOT}/v1/models").respond(401, json={"error": "Unauthorized"})
        router.get(f"{ROOT}/").respond(200, json="SGLang is running")
        mount(router, ROOT, "sglang", [recorded["/version"]])  # the captured 404
        backend, _, source, _ = await detect()
    assert (backend, source) == (Backend.SGLANG, Source.ROOT)


async def test_the_llamacpp_server_header_decides_even_on_a_401() -> None:
    with respx.mock(assert_all_called=False) as router:
        router.route(url__startswith=ROOT).respond(
            401,
            json={
                "error": {"code": 401, "message": "Invalid API Key", "type": "authentication_error"}
            },
            headers={"Server": "llama.cpp"},
        )
        backend, version, source, _ = await detect()
    assert (backend, version, source) == (Backend.LLAMACPP, None, Source.HEADER)


async def test_probes_stay_under_the_configured_prefix() -> None:
    with respx.mock(assert_all_called=False) as router:
        host_root = router.route(url__regex=r"^http://gpu\.test/(?!llm/)").respond(
            200, json={"default_generation_settings": {"n_ctx": 1}}
        )
        router.route(url__startswith=f"{ROOT}/").respond(404)
        backend, *_ = await detect()
        assert not host_root.called
        assert len(router.calls) == 6
        assert all(str(call.request.url).startswith(f"{ROOT}/") for call in router.calls)
    assert backend == Backend.GENERIC


async def test_an_unreachable_host_costs_one_probe_and_answers_generic() -> None:
    with respx.mock(assert_all_called=False) as router:
        route = router.route(url__startswith="http://gpu.test").mock(
            side_effect=httpx.ConnectError("refused")
        )
        backend, version, source, evidence = await detect()
        assert route.call_count == 1
    assert (backend, version, source) == (Backend.GENERIC, None, Source.DEFAULT)
    assert "no probe" in evidence


async def test_openai_is_recognised_by_its_host_without_a_request() -> None:
    with respx.mock(assert_all_called=False) as router:
        backend, _, source, _ = await detect("https://api.openai.com/v1")
        assert not router.calls
    assert (backend, source) == (Backend.OPENAI, Source.HOST)


async def test_the_api_key_is_sent_with_every_probe() -> None:
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, "ollama")
        await detect(headers={"Authorization": "Bearer sk-test"})
        assert len(router.calls) == 5
        assert all(c.request.headers["Authorization"] == "Bearer sk-test" for c in router.calls)

"""``OpenAiCompatibleCapabilityResolver`` over fakes built from the discovery files."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx
import pytest
import respx
from pydantic import ValidationError
from structlog.testing import capture_logs

from capabilities import (
    Backend,
    CapabilityOverrides,
    ModelCapabilities,
    OpenAiCompatibleCapabilityResolver,
    Source,
    events,
)
from providers.abstractions.errors import ModelNotFoundError
from tests.unit.capabilities.fakes import discovery, mount

ROOT = "http://gpu.test/llm"
BASE = f"{ROOT}/v1"
QWEN = "Qwen/Qwen3-0.6B"


def llamacpp(
    props: dict[str, Any] | None = None, models: dict[str, Any] | None = None
) -> list[Any]:
    """The recorded llama.cpp set, with /props or /v1/models replaced by edited copies."""
    recorded = discovery("llamacpp", "qwen25-plain")
    if props is not None:
        recorded["/props"] = recorded["/props"].with_json(props)
    if models is not None:
        recorded["/v1/models"] = recorded["/v1/models"].with_json(models)
    return list(recorded.values())


def recorded_json(backend: str, setup: str, path: str) -> Any:
    return discovery(backend, setup)[path].json()


async def resolve(
    model_id: str | None = None, base_url: str = BASE, **kwargs: Any
) -> ModelCapabilities:
    async with OpenAiCompatibleCapabilityResolver(base_url, **kwargs) as resolver:
        return await resolver.resolve(model_id)


def pairs(caps: ModelCapabilities, *names: str) -> dict[str, tuple[Any, str]]:
    return {name: (getattr(caps, name).value, getattr(caps, name).source) for name in names}


async def test_llamacpp_per_slot_context_from_props() -> None:
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, "llamacpp")
        caps = await resolve()
    assert pairs(caps, "backend", "context_window", "parallel_slots", "input_modalities") == {
        "backend": (Backend.LLAMACPP, Source.HEADER),
        "context_window": (2048, Source.PROPS),
        "parallel_slots": (2, Source.PROPS),
        "input_modalities": (("text",), Source.PROPS),
    }
    assert caps.served_model_ids.value == ("rig/tiny.gguf",)
    assert caps.backend_version.value == "b0-unknown"
    assert caps.model_field_ignored
    assert caps.answered_probes == (Source.MODELS, Source.PROPS)


async def test_path_prefixed_proxy_probes_under_the_prefix_never_the_host_root() -> None:
    with respx.mock(assert_all_called=False) as router:
        routes = mount(router, ROOT, "llamacpp")
        elsewhere = router.route(url__regex=r"^http://gpu\.test/(?!llm/)").respond(
            200, json={"default_generation_settings": {"n_ctx": 999999}}, headers={"Server": "x"}
        )
        caps = await resolve()
        assert routes["/props"].called and routes["/v1/models"].called
        assert str(routes["/props"].calls[0].request.url) == f"{ROOT}/props"
        assert str(routes["/v1/models"].calls[0].request.url) == f"{ROOT}/v1/models"
        assert not elsewhere.called
    assert caps.context_window.value == 2048


async def test_n_ctx_zero_is_absent_and_the_training_maximum_is_the_fallback() -> None:
    props = recorded_json("llamacpp", "qwen25-plain", "/props")
    props["default_generation_settings"]["n_ctx"] = 0
    models = recorded_json("llamacpp", "qwen25-plain", "/v1/models")
    models["data"][0]["meta"]["n_ctx"] = 0
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, "llamacpp", llamacpp(props, models))
        caps = await resolve()
    assert pairs(caps, "context_window", "training_context_window") == {
        "context_window": (8192, Source.MODELS),  # meta.n_ctx_train, nothing better said
        "training_context_window": (8192, Source.MODELS),
    }
    del models["data"][0]["meta"]["n_ctx_train"]
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, "llamacpp", llamacpp(props, models))
        caps = await resolve()
    assert (caps.context_window.value, caps.context_window.source) == (None, Source.DEFAULT)


async def test_a_timed_out_probe_is_absent() -> None:
    recorded = discovery("llamacpp", "qwen25-plain")
    with respx.mock(assert_all_called=False) as router:
        router.get(f"{ROOT}/props").mock(side_effect=httpx.ReadTimeout("slow"))
        mount(router, ROOT, "llamacpp", [recorded["/v1/models"]])
        caps = await resolve()
    # /props timed out: the context comes from /v1/models meta.n_ctx instead.
    assert (caps.context_window.value, caps.context_window.source) == (2048, Source.MODELS)
    assert caps.parallel_slots.source == Source.DEFAULT
    assert caps.answered_probes == (Source.MODELS,)


async def test_a_slow_probe_is_cut_off_by_its_own_timeout() -> None:
    recorded = discovery("llamacpp", "qwen25-plain")

    async def hang(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(30)
        raise AssertionError("unreachable")

    with respx.mock(assert_all_called=False) as router:
        router.get(f"{ROOT}/props").mock(side_effect=hang)
        mount(router, ROOT, "llamacpp", [recorded["/v1/models"]])
        started = time.monotonic()
        caps = await resolve(probe_timeout=0.2)
    assert time.monotonic() - started < 2.0
    assert caps.backend.value == Backend.LLAMACPP
    assert (caps.context_window.value, caps.context_window.source) == (2048, Source.MODELS)


async def test_an_unreachable_server_resolves_to_defaults_without_raising_and_is_not_cached() -> (
    None
):
    with respx.mock(assert_all_called=False) as router:
        route = router.route(url__startswith="http://gpu.test").mock(
            side_effect=httpx.ConnectTimeout("no route")
        )
        async with OpenAiCompatibleCapabilityResolver(BASE) as resolver:
            first = await resolver.resolve(QWEN)
            await resolver.resolve(QWEN)
        assert route.call_count == 2  # one probe per attempt; the empty answer was not cached
    assert first.backend.value == Backend.GENERIC
    assert first.answered_probes == ()
    assert pairs(first, "context_window", "supports_reasoning") == {
        "context_window": (32768, Source.FAMILY_TABLE),  # the configured id still says qwen3
        "supports_reasoning": (True, Source.FAMILY_TABLE),
    }


async def test_a_router_props_is_ignored_and_the_model_field_then_matters() -> None:
    router_props = {"role": "router", "modalities": {"vision": False}, "total_slots": 4}
    models = recorded_json("llamacpp", "qwen25-plain", "/v1/models")
    models["data"][0]["architecture"]["input_modalities"] = ["text", "image"]
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, "llamacpp", llamacpp(router_props, models))
        caps = await resolve("rig/tiny.gguf")
    assert pairs(caps, "context_window", "input_modalities", "parallel_slots") == {
        "context_window": (2048, Source.MODELS),
        "input_modalities": (("text", "image"), Source.MODELS),  # not the router's vision:false
        "parallel_slots": (None, Source.DEFAULT),
    }
    assert not caps.model_field_ignored  # a router routes by model: validation applies


async def test_an_override_above_the_server_wins_with_a_warning() -> None:
    with respx.mock(assert_all_called=False) as router, capture_logs() as logs:
        mount(router, ROOT, "llamacpp")
        caps = await resolve(overrides={"context_window": 8192, "supports_reasoning": True})
    assert pairs(caps, "context_window", "supports_reasoning") == {
        "context_window": (8192, Source.OVERRIDE),
        "supports_reasoning": (True, Source.OVERRIDE),
    }
    warnings = [e for e in logs if e["event"] == events.OVERRIDE_EXCEEDS_SERVER]
    assert warnings == [
        {
            "event": events.OVERRIDE_EXCEEDS_SERVER,
            "log_level": "warning",
            "field": "context_window",
            "override": 8192,
            "server": 2048,
            "server_source": Source.PROPS,
            "base_url": BASE,
            "model_id": None,
        }
    ]


async def test_an_override_below_the_server_is_silent() -> None:
    with respx.mock(assert_all_called=False) as router, capture_logs() as logs:
        mount(router, ROOT, "llamacpp")
        caps = await resolve(overrides=CapabilityOverrides(context_window=1024))
    assert (caps.context_window.value, caps.context_window.source) == (1024, Source.OVERRIDE)
    assert not [e for e in logs if e["log_level"] == "warning"]


@pytest.mark.parametrize(
    "bad", [{"context_window": 0}, {"context_window": -5}, {"context_windw": 4096}]
)
def test_overrides_are_validated(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        OpenAiCompatibleCapabilityResolver(BASE, overrides=bad)


async def test_a_backend_override_skips_detection() -> None:
    recorded = discovery("vllm", "plain")
    with respx.mock(assert_all_called=False) as router:
        routes = mount(router, ROOT, "vllm")
        props = router.get(f"{ROOT}/props").respond(404)
        caps = await resolve(QWEN, overrides={"backend": "vLLM"})
        assert not props.called
        assert routes["/v1/models"].call_count == 1
    assert (caps.backend.value, caps.backend.source) == (Backend.VLLM, Source.OVERRIDE)
    assert caps.backend_version.value == recorded["/version"].json()["version"]


async def test_results_are_cached_per_model_until_invalidated() -> None:
    with respx.mock(assert_all_called=False) as router:
        routes = mount(router, ROOT, "vllm")
        async with OpenAiCompatibleCapabilityResolver(BASE) as resolver:
            assert resolver.cached(QWEN) is None
            first = await resolver.resolve(QWEN)
            assert resolver.cached(QWEN) is first
            assert await resolver.resolve(QWEN) is first
            assert routes["/v1/models"].call_count == 1
            await resolver.resolve(None)  # another model id: another resolution
            assert routes["/v1/models"].call_count == 2
            resolver.invalidate(QWEN)
            assert await resolver.resolve(QWEN) is not first
            assert routes["/v1/models"].call_count == 3
            resolver.invalidate()
            await asyncio.gather(resolver.resolve(QWEN), resolver.resolve(QWEN))
            assert routes["/v1/models"].call_count == 4  # concurrent callers share one resolution


async def test_vllm_context_from_models_and_the_rest_from_the_family_table() -> None:
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, "vllm")
        caps = await resolve(QWEN)
    assert pairs(caps, "backend", "backend_version", "context_window", "supports_tools") == {
        "backend": (Backend.VLLM, Source.MODELS),
        "backend_version": ("0.33.0", Source.VERSION),
        "context_window": (4096, Source.MODELS),
        "supports_tools": (True, Source.FAMILY_TABLE),
    }
    assert caps.family == "qwen3"


async def test_ollama_runtime_context_from_ps_beats_the_training_maximum() -> None:
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, "ollama")
        caps = await resolve("qwen3:8b")
    assert pairs(caps, "context_window", "training_context_window", "supports_tools") == {
        "context_window": (4096, Source.API_PS),
        "training_context_window": (40960, Source.API_SHOW),
        "supports_tools": (True, Source.API_SHOW),
    }
    assert caps.backend_version.value == "0.12.6"


async def test_ollama_model_not_loaded_falls_back_to_the_model_maximum() -> None:
    recorded = discovery("ollama", "reconstructed")
    recorded["/api/ps"] = recorded["/api/ps"].with_json({"models": []})
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, "ollama", recorded.values())
        caps = await resolve("qwen3:8b")
    assert (caps.context_window.value, caps.context_window.source) == (40960, Source.API_SHOW)


async def test_ollama_show_is_asked_about_the_configured_model() -> None:
    with respx.mock(assert_all_called=False) as router:
        routes = mount(router, ROOT, "ollama")
        await resolve("qwen3:8b")
        # parsed: httpx before 0.28 writes JSON with spaces after the separators
        assert json.loads(routes["/api/show"].calls[0].request.content) == {"model": "qwen3:8b"}


async def test_lmstudio_vision_model_and_loaded_context() -> None:
    recorded = discovery("lmstudio", "reconstructed")
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, "lmstudio", recorded.values())
        caps = await resolve("qwen2-vl-7b-instruct")
    assert pairs(caps, "backend", "context_window", "input_modalities") == {
        "backend": (Backend.LMSTUDIO, Source.API_V0_MODELS),
        "context_window": (32768, Source.API_V0_MODELS),
        "input_modalities": (("text", "image"), Source.API_V0_MODELS),
    }
    listing = recorded["/api/v0/models"].json()
    listing["data"][0].update(state="loaded", loaded_context_length=8192)
    recorded["/api/v0/models"] = recorded["/api/v0/models"].with_json(listing)
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, "lmstudio", recorded.values())
        caps = await resolve("qwen2-vl-7b-instruct")
    assert (caps.context_window.value, caps.context_window.source) == (8192, Source.API_V0_MODELS)


async def test_validate_model_explains_a_wrong_id_on_vllm() -> None:
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, "vllm")
        async with OpenAiCompatibleCapabilityResolver(BASE) as resolver:
            assert await resolver.validate_model(QWEN) == QWEN
            with pytest.raises(ModelNotFoundError) as caught:
                await resolver.validate_model("qwen3-0.6b")
    assert str(caught.value) == (
        f"vllm at {BASE} serves `{QWEN}`; configured `qwen3-0.6b` — did you mean `{QWEN}`?"
    )


async def test_validate_model_catches_a_case_only_mismatch() -> None:
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, "sglang")
        async with OpenAiCompatibleCapabilityResolver(BASE) as resolver:
            with pytest.raises(ModelNotFoundError, match=r"did you mean `Qwen/Qwen3-0\.6B`\?"):
                await resolver.validate_model("qwen/qwen3-0.6b")


async def test_validate_model_passes_on_llamacpp_which_ignores_the_field() -> None:
    with respx.mock(assert_all_called=False) as router, capture_logs() as logs:
        mount(router, ROOT, "llamacpp")
        async with OpenAiCompatibleCapabilityResolver(BASE) as resolver:
            assert await resolver.validate_model("gpt-4o") == "gpt-4o"
            assert await resolver.validate_model(None) == "rig/tiny.gguf"
    skipped = [e for e in logs if e["event"] == events.MODEL_CHECK_SKIPPED]
    assert skipped[0]["reason"] == "the server ignores the request's model field"


async def test_validate_model_cannot_check_without_a_listing() -> None:
    with respx.mock(assert_all_called=False) as router:
        router.get(f"{BASE}/models").respond(500)
        router.route(url__startswith=ROOT).respond(404)
        async with OpenAiCompatibleCapabilityResolver(BASE) as resolver:
            assert await resolver.validate_model("whatever") == "whatever"


async def test_the_api_key_is_sent_but_never_shown() -> None:
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, "vllm")
        async with OpenAiCompatibleCapabilityResolver(
            BASE, api_key="sk-secret", headers={"X-Tenant": "t1"}
        ) as resolver:
            await resolver.resolve(QWEN)
            assert "sk-secret" not in repr(resolver)
        assert router.calls
        for call in router.calls:
            assert call.request.headers["Authorization"] == "Bearer sk-secret"
            assert call.request.headers["X-Tenant"] == "t1"


async def test_a_shared_http_client_is_not_closed() -> None:
    async with httpx.AsyncClient() as http:
        resolver = OpenAiCompatibleCapabilityResolver(BASE, http_client=http)
        await resolver.aclose()
        assert not http.is_closed


async def test_to_dict_is_json_ready_with_value_and_source() -> None:
    with respx.mock(assert_all_called=False) as router:
        mount(router, ROOT, "llamacpp")
        caps = await resolve()
    as_dict = caps.to_dict()
    assert as_dict["context_window"] == {"value": 2048, "source": "props"}
    assert as_dict["input_modalities"] == {"value": ["text"], "source": "props"}
    assert as_dict["answered_probes"] == ["models", "props"]
    assert caps.provenance()["context_window"] == "props"

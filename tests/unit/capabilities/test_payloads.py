"""Probe parsers: recorded bodies in, ``Findings`` out; odd values become absent, never errors."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from capabilities.models import Source
from capabilities.payloads import (
    parse_api_ps,
    parse_api_show,
    parse_api_v0_models,
    parse_model_info,
    parse_models,
    parse_props,
    parse_version,
)
from tests.unit.capabilities.fakes import discovery


def recorded(backend: str, setup: str, path: str) -> Any:
    return discovery(backend, setup)[path].json()


LLAMA_PROPS = recorded("llamacpp", "qwen25-plain", "/props")
LLAMA_MODELS = recorded("llamacpp", "qwen25-plain", "/v1/models")


def test_llamacpp_props_per_slot_context_slots_modalities_and_template_caps() -> None:
    found = parse_props(LLAMA_PROPS)
    assert found.context_window == 2048  # default_generation_settings.n_ctx: per slot
    assert found.parallel_slots == 2
    assert found.input_modalities == ("text",)
    assert found.output_modalities == ("text",)
    assert found.supports_tools is True  # chat_template_caps.supports_tool_calls
    assert found.supports_reasoning is None  # a Qwen2.5 template proves nothing either way
    assert found.max_output_tokens is None  # n_predict -1: no server cap
    assert found.version == "b0-unknown"
    assert found.family_hints == ("tiny.gguf", "tiny.gguf")
    assert not found.router


def test_props_n_ctx_zero_falls_back_to_params_then_to_absent() -> None:
    props = copy.deepcopy(LLAMA_PROPS)
    props["default_generation_settings"]["n_ctx"] = 0
    props["default_generation_settings"]["params"]["n_ctx"] = 1024
    assert parse_props(props).context_window == 1024
    props["default_generation_settings"]["params"]["n_ctx"] = 0
    assert parse_props(props).context_window is None


@pytest.mark.parametrize("bad", [-1, "4096", 4096.0, True, None, [4096]])
def test_only_positive_integers_count(bad: Any) -> None:
    props = copy.deepcopy(LLAMA_PROPS)
    props["default_generation_settings"]["n_ctx"] = bad
    props["total_slots"] = bad
    found = parse_props(props)
    assert found.context_window is None
    assert found.parallel_slots is None


def test_a_router_props_is_ignored_entirely() -> None:
    router_props = {
        "role": "router",
        "default_generation_settings": {"n_ctx": 999},
        "modalities": {"vision": False},
        "total_slots": 8,
    }
    found = parse_props(router_props)
    assert found.router
    assert found.context_window is None
    assert found.input_modalities is None  # its vision:false says nothing about the model
    assert found.parallel_slots is None


def test_props_vision_and_reasoning_template() -> None:
    props = copy.deepcopy(LLAMA_PROPS)
    props["modalities"] = {"vision": True, "audio": True, "video": False}
    props["chat_template"] = "{% if enable_thinking %}<think>\n{% endif %}"
    props["default_generation_settings"]["params"]["n_predict"] = 512
    found = parse_props(props)
    assert found.input_modalities == ("text", "image", "audio")
    assert found.supports_reasoning is True
    assert found.max_output_tokens == 512


@pytest.mark.parametrize("payload", [None, [], "Loading model", 42])
def test_a_body_that_is_not_an_object_gives_no_findings(payload: Any) -> None:
    assert parse_props(payload) == parse_props({}) == type(parse_props({}))(Source.PROPS)
    assert parse_models(payload, "x").served_ids == ()


def test_llamacpp_models_meta_and_architecture() -> None:
    listing = parse_models(LLAMA_MODELS, None)
    assert listing.served_ids == ("rig/tiny.gguf",)
    assert listing.owned_by == ("llamacpp",)
    assert listing.matched_id == "rig/tiny.gguf"  # the only model
    assert listing.findings.context_window == 2048  # meta.n_ctx
    assert listing.findings.training_context_window == 8192  # meta.n_ctx_train
    assert listing.findings.input_modalities == ("text",)


def test_models_meta_n_ctx_zero_is_absent_and_training_stays_separate() -> None:
    models = copy.deepcopy(LLAMA_MODELS)
    models["data"][0]["meta"]["n_ctx"] = 0
    found = parse_models(models, None).findings
    assert found.context_window is None
    assert found.training_context_window == 8192


def test_vllm_models_max_model_len_and_lora_card_without_one() -> None:
    models = recorded("vllm", "plain", "/v1/models")
    assert parse_models(models, "Qwen/Qwen3-0.6B").findings.context_window == 4096
    lora = copy.deepcopy(models)
    lora["data"].append(
        {"id": "my-lora", "object": "model", "owned_by": "vllm", "parent": "Qwen/Qwen3-0.6B",
         "max_model_len": None}
    )  # fmt: skip
    listing = parse_models(lora, "my-lora")
    assert listing.served_ids == ("Qwen/Qwen3-0.6B", "my-lora")
    assert listing.findings.context_window is None


def test_models_match_is_case_insensitive_and_falls_back_to_the_only_model() -> None:
    models = recorded("sglang", "plain", "/v1/models")
    assert parse_models(models, "qwen/qwen3-0.6b").matched_id == "Qwen/Qwen3-0.6B"
    assert parse_models(models, "something-else").matched_id == "Qwen/Qwen3-0.6B"
    two = copy.deepcopy(models)
    two["data"].append({**two["data"][0], "id": "other"})
    assert parse_models(two, "something-else").matched_id is None


def test_sglang_model_info() -> None:
    found = parse_model_info(recorded("sglang", "plain", "/model_info"))
    assert found.input_modalities == ("text",)  # has_image/audio_understanding false
    assert found.supports_tools is None  # tool_call_parser null: the server says nothing
    assert found.supports_reasoning is None
    assert found.family_hints == ("qwen3",)
    parsers = {"reasoning_parser": "qwen3", "tool_call_parser": "hermes",
               "has_image_understanding": True}  # fmt: skip
    found = parse_model_info(parsers)
    assert (found.supports_tools, found.supports_reasoning) == (True, True)
    assert found.input_modalities == ("text", "image")


def test_versions() -> None:
    assert parse_version(recorded("vllm", "plain", "/version"), Source.VERSION).version == "0.33.0"
    assert parse_version(recorded("sglang", "plain", "/version"), Source.VERSION).version is None
    lm_studio_unknown = {"error": "Unexpected endpoint or method. (GET /version)"}
    assert parse_version(lm_studio_unknown, Source.VERSION).version is None


def test_ollama_show_capabilities_num_ctx_and_training_context() -> None:
    show = recorded("ollama", "reconstructed", "/api/show")
    found = parse_api_show(show)
    assert found.context_window is None  # no num_ctx in the Modelfile
    assert found.training_context_window == 40960
    assert (found.supports_tools, found.supports_reasoning) == (True, True)
    assert found.input_modalities == ("text",)
    assert found.family_hints == ("qwen3",)
    tuned = {**show, "parameters": show["parameters"] + "\nnum_ctx                        8192",
             "capabilities": ["completion", "vision"]}  # fmt: skip
    found = parse_api_show(tuned)
    assert found.context_window == 8192
    assert (found.supports_tools, found.supports_reasoning) == (False, False)
    assert found.input_modalities == ("text", "image")


def test_ollama_ps_context_of_the_loaded_model_only() -> None:
    ps = recorded("ollama", "reconstructed", "/api/ps")
    assert parse_api_ps(ps, "qwen3:8b").context_window == 4096
    assert parse_api_ps({"models": []}, "qwen3:8b").context_window is None


def test_lmstudio_models_max_and_loaded_context_type_and_capabilities() -> None:
    listing = recorded("lmstudio", "reconstructed", "/api/v0/models")
    found = parse_api_v0_models(listing, "qwen2-vl-7b-instruct")
    assert found.context_window is None  # not loaded: only the maximum is known
    assert found.training_context_window == 32768
    assert found.input_modalities == ("text", "image")  # type vlm
    assert found.supports_tools is None
    newer = copy.deepcopy(listing)
    newer["data"][1].update(state="loaded", loaded_context_length=16384, capabilities=["tool_use"])
    found = parse_api_v0_models(newer, "meta-llama-3.1-8b-instruct")
    assert found.context_window == 16384
    assert found.supports_tools is True
    assert found.family_hints == ("llama",)

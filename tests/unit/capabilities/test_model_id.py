"""Model-id validation and the explained ``ModelNotFoundError`` (docs/wire.md §4, §5)."""

from __future__ import annotations

import pytest

from capabilities import (
    closest_model_id,
    match_model_id,
    model_not_found_error,
    validate_model_id,
)
from providers.abstractions.errors import ModelNotFoundError

SERVED = ["Qwen/Qwen3-8B"]


def test_an_exact_match_passes() -> None:
    assert validate_model_id("Qwen/Qwen3-8B", SERVED) == "Qwen/Qwen3-8B"


def test_no_configured_id_takes_the_only_served_model() -> None:
    assert validate_model_id(None, SERVED) == "Qwen/Qwen3-8B"


def test_the_message_names_configured_served_and_suggestion() -> None:
    with pytest.raises(ModelNotFoundError) as caught:
        validate_model_id("qwen3-8b", SERVED, backend="vllm")
    assert str(caught.value) == (
        "vllm serves `Qwen/Qwen3-8B`; configured `qwen3-8b` — did you mean `Qwen/Qwen3-8B`?"
    )
    assert caught.value.param == "model"
    assert caught.value.code == "model_not_found"


def test_a_case_only_mismatch_fails_and_suggests_the_served_spelling() -> None:
    served = ["Qwen/Qwen3-0.6B", "qwen/qwen3-coder"]
    with pytest.raises(ModelNotFoundError, match=r"did you mean `Qwen/Qwen3-0\.6B`\?"):
        validate_model_id("qwen/qwen3-0.6b", served)


def test_several_served_ids_without_configuration_must_be_chosen() -> None:
    with pytest.raises(ModelNotFoundError, match="no model configured and the backend serves"):
        validate_model_id(None, ["a", "b"])


def test_an_empty_listing_says_so() -> None:
    with pytest.raises(ModelNotFoundError, match="lists no models; configured `x`"):
        validate_model_id("x", [], base_url="http://h/v1")


def test_a_long_listing_is_truncated() -> None:
    served = [f"model-{i}" for i in range(25)]
    with pytest.raises(ModelNotFoundError, match="and 15 more") as caught:
        validate_model_id("zzz", served)
    assert "model-10" not in str(caught.value)


@pytest.mark.parametrize(
    ("configured", "served", "expected"),
    [
        ("qwen3-8b", ["Qwen3-8B", "Llama-3.1-8B"], "Qwen3-8B"),  # case only
        ("qwen3-8b", ["meta/Llama-3.1-8B", "Qwen/Qwen3-8B"], "Qwen/Qwen3-8B"),  # org prefix
        ("qwen3:latest", ["Qwen/qwen3"], "Qwen/qwen3"),  # Ollama tag
        (
            "Qwen/Qwen3-8b-instruct",
            ["Qwen/Qwen3-8B-Instruct-AWQ", "gpt-oss"],
            "Qwen/Qwen3-8B-Instruct-AWQ",
        ),
        ("totally-different", ["only-one"], "only-one"),
        ("totally-different", ["a-model", "b-model"], None),
    ],
)
def test_closest_model_id(configured: str, served: list[str], expected: str | None) -> None:
    assert closest_model_id(configured, served) == expected


def test_match_for_reading_capabilities_is_looser_than_validation() -> None:
    assert match_model_id("QWEN/QWEN3-8B", SERVED) == "Qwen/Qwen3-8B"
    assert match_model_id("qwen3", ["qwen3:latest", "llama3.2:latest"]) == "qwen3:latest"
    assert match_model_id("anything", SERVED) == "Qwen/Qwen3-8B"  # the only model
    assert match_model_id("anything", ["a", "b"]) is None
    assert match_model_id("A", ["a", "A"]) == "A"


VLLM_404 = (
    b'{"error":{"message":"The model `qwen3-8b` does not exist. Valid aliases: Qwen/Qwen3-8B.",'
    b'"type":"NotFoundError","param":"model","code":404}}'
)


def test_a_vllm_404_becomes_the_same_explained_error() -> None:
    error = model_not_found_error(404, VLLM_404, configured="qwen3-8b", backend="vllm")
    assert isinstance(error, ModelNotFoundError)
    assert error.status == 404
    # Without a cached listing, vLLM's "Valid aliases" supplies the served ids.
    assert "vllm serves `Qwen/Qwen3-8B`; configured `qwen3-8b`" in str(error)
    assert "did you mean `Qwen/Qwen3-8B`?" in str(error)
    assert "does not exist" in str(error)  # the server's own words are kept


@pytest.mark.parametrize(
    ("status", "body"),
    [
        # SGLang /v1/models/{id} and Responses: nested, code is a string.
        (404, '{"error":{"message":"The model \'qwen3-8b\' does not exist",'
              '"type":"invalid_request_error","param":"model","code":"model_not_found"}}'),
        # SGLang chat: an Ollama-style name read as base:adapter.
        (400, '{"object":"error","message":"LoRA adapter \'8b\' was requested, but LoRA is not '
              'enabled. Please start the server with --enable-lora.","type":"BadRequestError",'
              '"param":null,"code":400}'),
        # SGLang (flat envelope) model-not-found wording.
        (400, '{"object":"error","message":"Model qwen3-8b not found","type":"BadRequestError",'
              '"param":null,"code":400}'),
        # llama.cpp router mode.
        (400, '{"error":{"code":400,"message":"model \'qwen3-8b\' not found",'
              '"type":"invalid_request_error"}}'),
        # Ollama.
        (404, '{"error":{"message":"model \\"qwen3-8b\\" not found, try pulling it first",'
              '"type":"api_error","param":null,"code":null}}'),
    ],
)  # fmt: skip
def test_other_model_not_found_answers_are_recognised(status: int, body: str) -> None:
    error = model_not_found_error(
        status, body, configured="qwen3-8b", served_ids=SERVED, backend="sglang"
    )
    assert isinstance(error, ModelNotFoundError)
    assert "serves `Qwen/Qwen3-8B`; configured `qwen3-8b` — did you mean `Qwen/Qwen3-8B`?" in str(
        error
    )


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, '{"object":"error","message":"Messages cannot be empty.","type":"BadRequestError"}'),
        (404, '{"detail":"Not Found"}'),
        (500, '{"error":{"message":"The model `x` does not exist","code":500}}'),
        (400, "not json at all"),
    ],
)
def test_other_errors_are_left_alone(status: int, body: str) -> None:
    assert model_not_found_error(status, body, configured="x", served_ids=SERVED) is None

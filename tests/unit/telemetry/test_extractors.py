"""Timings extractors: one class set up per backend from a table, each reading what its server
reports (docs/wire.md §2.4)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers import ChatResponse, UsageDetails, profile_for
from providers.backends import TimingsKind
from telemetry import (
    BackendTimingsExtractor,
    GenericTimingsExtractor,
    LlamaCppTimingsExtractor,
    SglangTimingsExtractor,
    TimingsExtractor,
    VllmTimingsExtractor,
    extractor_for,
)
from telemetry.extractors import BY_TIMINGS_KIND, TIMINGS_KINDS
from tests.unit.telemetry.helpers import transcript


def last_chunk(backend: str, scenario: str) -> dict[str, Any]:
    """The last JSON event of a captured stream (the one carrying usage/timings)."""
    body = transcript(backend, scenario).body.decode()
    events = [line[6:] for line in body.splitlines() if line.startswith("data: {")]
    chunk: dict[str, Any] = json.loads(events[-1])
    return chunk


def test_llamacpp_reads_the_timings_object_of_the_last_chunk() -> None:
    chunk = last_chunk("llamacpp", "captured--qwen25-plain--cache-turn2")
    server = LlamaCppTimingsExtractor().extract(chunk)
    assert server is not None
    assert server.backend == "llamacpp"
    assert server.cached_input_tokens == 177
    assert server.input_tokens == 195
    assert server.output_tokens == 6
    assert server.prompt_n == 18
    assert server.prompt_ms == 23.824
    assert server.prompt_per_second == 755.5406312961719
    assert server.prompt_per_token_ms == 1.3235555555555556
    assert server.predicted_n == 6
    assert server.predicted_ms == 99.796
    assert server.predicted_per_second == 50.102208505350916
    assert server.draft_n is None
    assert server.missing_cache_flag is None


def test_llamacpp_reads_the_top_level_of_a_non_streamed_response() -> None:
    body = json.loads(transcript("llamacpp", "captured--qwen25-plain--nonstream-text").body)
    server = LlamaCppTimingsExtractor().extract(body)
    assert server is not None
    assert (server.cached_input_tokens, server.prompt_n, server.predicted_n) == (35, 1, 8)
    assert server.prompt_ms == 4.869


def test_llamacpp_timings_without_usage_are_not_dropped() -> None:
    timings = {
        "cache_n": 5,
        "prompt_n": 172,
        "prompt_ms": 25.6,
        "predicted_n": 6,
        "draft_n": 10,
        "draft_n_accepted": 7,
    }
    server = LlamaCppTimingsExtractor().extract({"timings": timings})
    assert server is not None
    assert server.cached_input_tokens == 5
    assert server.input_tokens == 177  # cache_n + prompt_n
    assert server.output_tokens == 6
    assert (server.draft_n, server.draft_n_accepted) == (10, 7)


def test_cache_n_takes_precedence_over_usage_cached_tokens() -> None:
    payload = {
        "usage": {
            "prompt_tokens": 40,
            "completion_tokens": 2,
            "prompt_tokens_details": {"cached_tokens": 30},
        },
        "timings": {"cache_n": 32, "prompt_n": 8},
    }
    server = LlamaCppTimingsExtractor().extract(payload)
    assert server is not None and server.cached_input_tokens == 32
    usage_only = LlamaCppTimingsExtractor().extract({"usage": payload["usage"]})
    assert usage_only is not None and usage_only.cached_input_tokens == 30


def test_a_malformed_timings_object_yields_no_values() -> None:
    server = LlamaCppTimingsExtractor().extract(
        {
            "usage": {"prompt_tokens": 3, "completion_tokens": 1},
            "timings": {"prompt_ms": "fast", "cache_n": 2.5},
        }
    )
    assert server is not None
    assert server.prompt_ms is None and server.cached_input_tokens is None
    assert LlamaCppTimingsExtractor().extract({"timings": "nope"}) is None


def test_vllm_reads_cached_tokens_from_usage_when_the_server_reports_them() -> None:
    chunk = last_chunk("vllm", "reconstructed--usage")
    server = VllmTimingsExtractor().extract(chunk)
    assert server is not None
    assert (server.input_tokens, server.cached_input_tokens) == (30, 16)
    assert server.missing_cache_flag is None
    assert server.prompt_ms is None  # vLLM has no per-request server timings


def test_vllm_without_the_flag_reports_unknown_and_names_the_flag() -> None:
    chunk = last_chunk("vllm", "captured--plain--stream-text")
    server = VllmTimingsExtractor().extract(chunk)
    assert server is not None
    assert server.cached_input_tokens is None  # unknown, not 0
    assert server.uncached_input_tokens is None
    assert server.missing_cache_flag == "--enable-prompt-tokens-details"


def test_vllm_ignores_a_timings_field() -> None:
    server = VllmTimingsExtractor().extract(
        {"usage": {"prompt_tokens": 3, "completion_tokens": 1}, "timings": {"prompt_ms": 1.0}}
    )
    assert server is not None and server.prompt_ms is None


def test_sglang_reads_top_level_reasoning_tokens_and_cached_tokens() -> None:
    chunk = last_chunk("sglang", "assembled--seed000-gpt-oss-reasoning-length")
    server = SglangTimingsExtractor().extract(chunk)
    assert server is not None
    assert server.reasoning_tokens == 200
    assert server.missing_cache_flag == "--enable-cache-report"
    cached = SglangTimingsExtractor().extract(last_chunk("sglang", "reconstructed--usage"))
    assert cached is not None
    assert (cached.cached_input_tokens, cached.reasoning_tokens) == (16, 0)
    assert cached.missing_cache_flag is None


def test_generic_reads_usage_and_a_llamacpp_style_timings_object() -> None:
    chunk = last_chunk("llamacpp", "captured--qwen25-plain--cache-turn3")
    server = GenericTimingsExtractor().extract(chunk)
    assert server is not None
    assert server.backend == "generic"
    assert server.cached_input_tokens == 195 and server.prompt_ms == 23.723
    openai = GenericTimingsExtractor("openai").extract(
        {
            "usage": {
                "prompt_tokens": 9,
                "completion_tokens": 3,
                "completion_tokens_details": {"reasoning_tokens": 2},
            }
        }
    )
    assert openai is not None and openai.reasoning_tokens == 2
    assert openai.missing_cache_flag is None


def test_nothing_reported_gives_none() -> None:
    for extractor in (
        LlamaCppTimingsExtractor(),
        VllmTimingsExtractor(),
        SglangTimingsExtractor(),
        GenericTimingsExtractor(),
    ):
        assert extractor.extract({"id": "x", "choices": []}) is None
        assert extractor.extract(ChatResponse()) is None


def test_a_chat_response_is_read_through_usage_and_the_kept_timings() -> None:
    response = ChatResponse(
        usage=UsageDetails(input_token_count=177, output_token_count=6, cached_input_token_count=5),
        additional_properties={"timings": {"cache_n": 5, "prompt_ms": 25.6}},
    )
    server = LlamaCppTimingsExtractor().extract(response)
    assert server is not None
    assert (server.input_tokens, server.cached_input_tokens, server.prompt_ms) == (177, 5, 25.6)


@pytest.mark.parametrize(
    ("backend", "expected"),
    [
        ("llamacpp", LlamaCppTimingsExtractor()),
        ("vllm", VllmTimingsExtractor()),
        ("SGLang", SglangTimingsExtractor()),
        ("openai", GenericTimingsExtractor("openai")),
        (None, GenericTimingsExtractor()),
        ("ollama", GenericTimingsExtractor("ollama")),
    ],
)
def test_extractor_for_chooses_by_backend(
    backend: str | None, expected: BackendTimingsExtractor
) -> None:
    extractor = extractor_for(backend)
    assert extractor == expected
    assert isinstance(extractor, TimingsExtractor)


def test_extractor_for_accepts_a_profile_and_overrides() -> None:
    assert extractor_for(profile_for("vllm")) == VllmTimingsExtractor()
    assert extractor_for("ollama").extract({"usage": {"prompt_tokens": 1}}) is not None
    custom = LlamaCppTimingsExtractor("vllm-fork")
    assert extractor_for("vllm", {"vllm": custom}) is custom
    assert extractor_for("sglang", {"vllm": custom}) == SglangTimingsExtractor()


@pytest.mark.parametrize("kind", sorted(TIMINGS_KINDS))
def test_each_kind_is_the_one_class_with_its_rows_facts(kind: TimingsKind) -> None:
    read_timings, cache_flag = TIMINGS_KINDS[kind]
    made = BY_TIMINGS_KIND[kind]("label")
    assert made == BackendTimingsExtractor("label", read_timings, cache_flag)
    assert type(made) is BackendTimingsExtractor
    assert BY_TIMINGS_KIND[kind]().backend == kind


def test_the_kinds_differ_only_in_whether_timings_are_read_and_the_flag_named() -> None:
    timings = {"cache_n": 4, "prompt_n": 6, "prompt_ms": 2.0}
    for kind, (read_timings, cache_flag) in TIMINGS_KINDS.items():
        server = BY_TIMINGS_KIND[kind]().extract(
            {"usage": {"prompt_tokens": 10}, "timings": timings}
        )
        assert server is not None
        assert (server.prompt_ms == 2.0) is read_timings, kind
        assert server.missing_cache_flag == (None if read_timings else cache_flag), kind

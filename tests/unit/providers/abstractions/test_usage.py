"""Reading ``usage`` objects of every server (research/wire.md §2.1-§2.4, §7.7)."""

from __future__ import annotations

from providers.abstractions.contents import UsageDetails
from providers.abstractions.usage import parse_usage


def test_llamacpp_usage_with_cached_tokens() -> None:
    details = parse_usage(
        {
            "completion_tokens": 12,
            "prompt_tokens": 30,
            "total_tokens": 42,
            "prompt_tokens_details": {"cached_tokens": 25},
        }
    )
    assert details == UsageDetails(
        input_token_count=30,
        output_token_count=12,
        total_token_count=42,
        cached_input_token_count=25,
    )


def test_vllm_usage_with_completion_tokens_details() -> None:
    details = parse_usage(
        {
            "prompt_tokens": 10,
            "total_tokens": 60,
            "completion_tokens": 50,
            "completion_tokens_details": {"reasoning_tokens": 40},
        }
    )
    assert details is not None
    assert details.reasoning_token_count == 40
    assert details.cached_input_token_count is None  # not reported: unknown, not zero
    assert details.additional_counts is None


def test_sglang_top_level_reasoning_tokens_and_null_details() -> None:
    details = parse_usage(
        {
            "prompt_tokens": 8,
            "total_tokens": 20,
            "completion_tokens": 12,
            "prompt_tokens_details": None,
            "reasoning_tokens": 9,
            "completion_tokens_details": None,
        }
    )
    assert details is not None
    assert details.reasoning_token_count == 9
    assert details.cached_input_token_count is None
    assert details.additional_counts is None  # reasoning_tokens is mapped, not an extra


def test_sglang_both_reasoning_counts_prefers_the_details() -> None:
    details = parse_usage(
        {
            "prompt_tokens": 1,
            "completion_tokens": 9,
            "total_tokens": 10,
            "reasoning_tokens": 7,
            "completion_tokens_details": {"reasoning_tokens": 7},
        }
    )
    assert details is not None
    assert details.reasoning_token_count == 7


def test_zero_cached_tokens_is_zero_not_none() -> None:
    details = parse_usage(
        {"prompt_tokens": 5, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 0}}
    )
    assert details is not None
    assert details.cached_input_token_count == 0


def test_other_integers_kept_by_dotted_path() -> None:
    details = parse_usage(
        {
            "prompt_tokens": 5,
            "completion_tokens": 1,
            "total_tokens": 6,
            "prompt_tokens_details": {"cached_tokens": 2, "image_tokens": 3},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 4},
        }
    )
    assert details is not None
    assert details.additional_counts == {
        "prompt_tokens_details.image_tokens": 3,
        "completion_tokens_details.audio_tokens": 4,
    }


def test_missing_total_is_computed() -> None:
    details = parse_usage({"prompt_tokens": 5, "completion_tokens": 7})
    assert details is not None
    assert details.total_token_count == 12


def test_no_counts_at_all_is_none() -> None:
    assert parse_usage({}) is None
    assert parse_usage({"prompt_tokens_details": {"cached_tokens": 3}}) is None


def test_non_integer_counts_are_ignored() -> None:
    details = parse_usage({"prompt_tokens": "5", "completion_tokens": 2, "total_tokens": None})
    assert details is not None
    assert details.input_token_count is None
    assert details.output_token_count == 2
    assert details.total_token_count is None


def test_updated_with_replaces_field_by_field() -> None:
    older = UsageDetails(
        input_token_count=10,
        output_token_count=1,
        total_token_count=11,
        cached_input_token_count=4,
        additional_counts={"a": 1, "b": 2},
    )
    newer = UsageDetails(output_token_count=5, total_token_count=15, additional_counts={"b": 3})
    assert older.updated_with(newer) == UsageDetails(
        input_token_count=10,
        output_token_count=5,
        total_token_count=15,
        cached_input_token_count=4,
        additional_counts={"a": 1, "b": 3},
    )
    assert older.output_token_count == 1  # not mutated


def test_usage_of_two_requests_adds_up_and_an_unreported_count_stays_none() -> None:
    first = UsageDetails(3, 4, 7, additional_counts={"x": 1})
    second = UsageDetails(5, 6, 11, reasoning_token_count=2, additional_counts={"x": 2, "y": 1})
    total = first + second
    assert (total.input_token_count, total.output_token_count, total.total_token_count) == (
        8,
        10,
        18,
    )
    assert total.reasoning_token_count == 2
    assert total.cached_input_token_count is None
    assert total.additional_counts == {"x": 3, "y": 1}

"""``clamp_max_output_tokens`` and the prompt estimate it is fed with."""

from __future__ import annotations

import pytest

from capabilities import clamp_max_output_tokens, estimate_prompt_tokens
from capabilities.budget import refuse_past_context
from providers.abstractions.errors import ContextLengthExceededError


def test_clamps_to_what_is_left_of_the_window() -> None:
    assert clamp_max_output_tokens(4000, context_window=4096, prompt_tokens=1000) == 3096


def test_keeps_a_request_that_fits() -> None:
    assert clamp_max_output_tokens(500, context_window=4096, prompt_tokens=1000) == 500


def test_respects_the_server_cap_and_the_margin() -> None:
    assert (
        clamp_max_output_tokens(
            4000, context_window=32768, prompt_tokens=100, max_output_tokens=2048
        )
        == 2048
    )
    assert (
        clamp_max_output_tokens(4000, context_window=4096, prompt_tokens=1000, safety_margin=96)
        == 3000
    )


def test_leaves_alone_what_it_cannot_judge() -> None:
    assert clamp_max_output_tokens(None, context_window=4096, prompt_tokens=10) is None
    assert clamp_max_output_tokens(4000, context_window=None, prompt_tokens=10) == 4000
    # The prompt alone overflows: the server's context error says it better than max_tokens=1.
    assert clamp_max_output_tokens(4000, context_window=4096, prompt_tokens=5000) == 4000


def test_the_estimate_over_counts_english_and_covers_cjk() -> None:
    english = "The quick brown fox jumps over the lazy dog. " * 20  # ~200 real tokens
    assert estimate_prompt_tokens([english], per_message_overhead=0) >= 200
    cjk = "天气很好" * 50  # ~200 characters, about one token each
    assert estimate_prompt_tokens([cjk], per_message_overhead=0) >= 200
    assert estimate_prompt_tokens(["", ""]) == 16  # the per-message overhead


def test_refuses_only_what_cannot_fit() -> None:
    refuse_past_context(prompt_tokens=4000, max_output_tokens=96, context_window=4096)
    refuse_past_context(prompt_tokens=4095, max_output_tokens=None, context_window=4096)
    refuse_past_context(prompt_tokens=10**6, max_output_tokens=10, context_window=None)
    with pytest.raises(ContextLengthExceededError) as caught:
        refuse_past_context(
            prompt_tokens=4000,
            max_output_tokens=97,
            context_window=4096,
            backend="vllm",
            counted_by="vllm:/tokenize",
        )
    error = caught.value
    assert (error.prompt_tokens, error.context_window, error.backend) == (4000, 4096, "vllm")
    assert "4000" in str(error) and "4096" in str(error) and "vllm:/tokenize" in str(error)
    with pytest.raises(ContextLengthExceededError):
        refuse_past_context(prompt_tokens=4096, max_output_tokens=None, context_window=4096)

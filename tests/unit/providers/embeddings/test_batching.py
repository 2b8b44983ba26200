"""Slices of a long list, the batch size chosen, usage added over batches (``batching``)."""

from __future__ import annotations

import pytest

from providers.abstractions.errors import ConfigurationError
from providers.abstractions.usage import UsageDetails
from providers.backends import profile_for
from providers.embeddings.batching import (
    DEFAULT_MAX_BATCH_SIZE,
    add_usage,
    batch_size_for,
    slices,
)


def test_slices_cover_every_position_once_in_order() -> None:
    parts = slices(7, 3)
    assert [list(part) for part in parts] == [[0, 1, 2], [3, 4, 5], [6]]
    assert slices(0, 3) == []
    assert [list(part) for part in slices(2, 5)] == [[0, 1]]


def test_the_batch_size_is_the_callers_else_the_rows_else_the_default() -> None:
    assert batch_size_for(None, profile_for("openai")) == 2048
    assert batch_size_for(None, profile_for("llamacpp")) == DEFAULT_MAX_BATCH_SIZE
    assert batch_size_for(5000, profile_for("openai")) == 5000


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_a_batch_size_that_is_not_a_positive_int_is_refused(bad: object) -> None:
    with pytest.raises(ConfigurationError):
        batch_size_for(bad, profile_for(None))  # type: ignore[arg-type]


def test_usage_adds_up_over_batches() -> None:
    first = UsageDetails(input_token_count=3, total_token_count=3)
    assert add_usage(None, None) is None
    assert add_usage(None, first) is first
    assert add_usage(first, None) is first
    total = add_usage(first, UsageDetails(input_token_count=4, total_token_count=4))
    assert total is not None
    assert (total.input_token_count, total.total_token_count) == (7, 7)

"""``TokenCount`` and the ``TokenCounter`` protocol, without any client."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any

import pytest

from providers.abstractions.token_count import ESTIMATE, TokenCount
from providers.abstractions.token_counter import TokenCounter


class Fixed(TokenCounter):
    async def count_tokens(self, messages: Any, options: Any = None) -> TokenCount:
        return TokenCount(len(messages), 8, True, "test")


async def test_a_counter_overrides_count_tokens() -> None:
    counter = Fixed()
    assert isinstance(counter, TokenCounter)
    assert await counter.count_tokens(["a", "b"]) == TokenCount(2, 8, True, "test")
    with pytest.raises(NotImplementedError):
        await TokenCounter().count_tokens([])


def test_a_count_defaults_to_an_estimate_and_is_frozen() -> None:
    count = TokenCount(5)
    assert (count.max_model_len, count.exact, count.source) == (None, False, ESTIMATE)
    with pytest.raises(FrozenInstanceError):
        count.count = 6  # type: ignore[misc]

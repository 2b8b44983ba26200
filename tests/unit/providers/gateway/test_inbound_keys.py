"""Inbound keys come from the environment, are checked on every request, and never show."""

from __future__ import annotations

import pytest

from providers.abstractions.errors import AuthenticationError, ConfigurationError
from providers.gateway.inbound_keys import InboundKeys


def test_no_variable_means_no_key_is_asked_for() -> None:
    keys = InboundKeys.from_environment(None, {})
    assert not keys.required
    keys.check(None)


def test_a_named_variable_that_is_empty_refuses_to_start() -> None:
    with pytest.raises(ConfigurationError, match="GW_KEYS"):
        InboundKeys.from_environment("GW_KEYS", {"GW_KEYS": " , "})


@pytest.mark.parametrize("key", ["k1", "k2"])
def test_any_of_the_comma_separated_keys_lets_a_request_in(key: str) -> None:
    keys = InboundKeys.from_environment("GW_KEYS", {"GW_KEYS": "k1, k2"})
    keys.check(f"Bearer {key}".encode())
    keys.check(f"bearer  {key}".encode())


@pytest.mark.parametrize("header", [None, b"", b"Bearer", b"Bearer k3", b"Basic k1", b"k1"])
def test_anything_else_is_a_401(header: bytes | None) -> None:
    keys = InboundKeys(["k1"])
    with pytest.raises(AuthenticationError) as caught:
        keys.check(header)
    assert caught.value.status == 401
    assert "k1" not in str(caught.value)


def test_the_repr_counts_keys_and_shows_none() -> None:
    assert repr(InboundKeys(["secret-1", "secret-2"])) == "InboundKeys(<2 keys>)"

"""``providers.transport.credentials``: which headers are credentials, what an origin is, and
what a server might echo that errors must mask."""

from __future__ import annotations

import pytest

from providers.abstractions.errors import ConfigurationError
from providers.transport.credentials import (
    is_credential,
    origin_of,
    secret_forms,
    sensitive_header_names,
)


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("http://h/v1", "http://h:80/other", True),
        ("https://H.example/v1", "https://h.example:443", True),
        ("http://h", "https://h", False),  # a scheme change is a new connection
        ("http://h:8080", "http://h:8081", False),
        ("http://h", "http://h.evil", False),
        ("http://[::1]:8000/v1", "http://[::1]:8000/x", True),
    ],
)
def test_an_origin_is_scheme_host_and_port(a: str, b: str, same: bool) -> None:
    assert (origin_of(a) == origin_of(b)) is same
    assert origin_of(a) is not None


@pytest.mark.parametrize("url", ["", "ftp://h/", "/relative", "http://"])
def test_a_url_without_an_origin_has_none(url: str) -> None:
    assert origin_of(url) is None


@pytest.mark.parametrize(
    "name", ["Authorization", "proxy-authorization", "Cookie", "Set-Cookie", "X-Api-Key"]
)
def test_credential_names(name: str) -> None:
    assert is_credential(name)


def test_configured_names_are_credentials_too() -> None:
    names = sensitive_header_names(["X-Tenant"])
    assert names == {"x-tenant"}
    assert is_credential("x-TENANT", names)
    assert not is_credential("X-Trace-Id", names)


@pytest.mark.parametrize("bad", [["bad name"], [""], "x-tenant", [3]])
def test_a_configured_name_must_be_a_header_name(bad: object) -> None:
    with pytest.raises(ConfigurationError, match="sensitive_headers"):
        sensitive_header_names(bad)  # type: ignore[arg-type]


def test_each_cookie_value_is_masked_on_its_own() -> None:
    forms = secret_forms({"Cookie": "sid=abcd1234; lang=en; theme=dark-mode"})
    assert b"abcd1234" in forms
    assert b"dark-mode" in forms
    assert b"en" not in forms  # too short to mask without garbling the message
    assert list(forms) == sorted(forms, key=len, reverse=True)


def test_every_value_of_a_requests_own_headers() -> None:
    assert secret_forms({"X-Trace-Id": "trace-1234"}) == ()
    assert b"trace-1234" in secret_forms({"X-Trace-Id": "trace-1234"}, every_value=True)

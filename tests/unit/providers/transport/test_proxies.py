"""``providers.transport.proxies`` reads the environment exactly as httpx's own client does.

httpx's reader (``httpx._utils.get_environment_proxies``) is private, so the library restates
its rules; this holds the restatement to the original for the cases httpx documents."""

from __future__ import annotations

import pytest
from httpx._utils import get_environment_proxies

from providers.abstractions.errors import ConfigurationError
from providers.transport.proxies import check_proxy_url, environment_proxies, proxy_routes

_NAMES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")

ENVIRONMENTS = [
    {},
    {"HTTP_PROXY": "http://p:3128"},
    {"https_proxy": "p:3128", "HTTP_PROXY": "http://q:1"},
    {"ALL_PROXY": "http://p:1080", "NO_PROXY": "localhost,127.0.0.1,::1,.corp,example.com"},
    {"HTTPS_PROXY": "http://u:pw@p:3128", "NO_PROXY": "*"},
    {"HTTP_PROXY": "http://p:1", "NO_PROXY": " , http://exempt.test ,192.168.0.0/16"},
    {"http_proxy": "http://lower:1", "HTTP_PROXY": "http://upper:1"},
]


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in _NAMES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.delenv("REQUEST_METHOD", raising=False)
    return monkeypatch


@pytest.mark.parametrize("variables", ENVIRONMENTS)
def test_the_environment_is_read_as_httpx_reads_it(
    environment: pytest.MonkeyPatch, variables: dict[str, str]
) -> None:
    for name, value in variables.items():
        environment.setenv(name, value)
    assert environment_proxies() == get_environment_proxies()


def test_a_backends_proxy_wins_and_trust_env_off_reads_nothing(
    environment: pytest.MonkeyPatch,
) -> None:
    environment.setenv("HTTP_PROXY", "http://env:1")
    assert proxy_routes("http://own:2", trust_env=True) == {"all://": "http://own:2"}
    assert proxy_routes(None, trust_env=False) == {}
    assert proxy_routes(None, trust_env=True) == {"http://": "http://env:1"}


def test_an_environment_proxy_that_cannot_be_used_is_refused_unquoted(
    environment: pytest.MonkeyPatch,
) -> None:
    environment.setenv("HTTPS_PROXY", "ftp://u:hidden-pw@p:21")
    with pytest.raises(ConfigurationError, match="https_proxy") as caught:
        environment_proxies()
    assert "hidden-pw" not in str(caught.value)


@pytest.mark.parametrize("url", ["http://p:3128", " https://u:pw@p ", "http://[::1]:8080"])
def test_usable_proxy_urls_pass(url: str) -> None:
    assert check_proxy_url(url) == url.strip()

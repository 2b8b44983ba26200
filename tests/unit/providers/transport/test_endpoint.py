"""Base-URL handling: path prefixes kept, ``/v1`` added only when missing (issue 2 item 2)."""

from __future__ import annotations

import pytest

from providers.transport.endpoint import Endpoint


@pytest.mark.parametrize(
    ("base_url", "chat", "root"),
    [
        ("http://host:8080", "http://host:8080/v1/chat/completions", "http://host:8080"),
        ("http://host:8080/", "http://host:8080/v1/chat/completions", "http://host:8080"),
        ("http://host:8080/v1", "http://host:8080/v1/chat/completions", "http://host:8080"),
        ("http://host:8080/v1/", "http://host:8080/v1/chat/completions", "http://host:8080"),
        ("http://host/llm/v1", "http://host/llm/v1/chat/completions", "http://host/llm"),
        ("http://host/llm", "http://host/llm/v1/chat/completions", "http://host/llm"),
        ("http://host/llm/", "http://host/llm/v1/chat/completions", "http://host/llm"),
        (
            "https://open.example.com/api/coding/paas/v4",
            "https://open.example.com/api/coding/paas/v4/chat/completions",
            "https://open.example.com/api/coding/paas",
        ),
        ("  http://host/V1  ", "http://host/V1/chat/completions", "http://host"),
    ],
)
def test_base_urls(base_url: str, chat: str, root: str) -> None:
    endpoint = Endpoint.from_base_url(base_url)
    assert endpoint.chat_completions == chat
    assert endpoint.server_root == root


def test_models_and_server_paths_share_the_prefix() -> None:
    endpoint = Endpoint.from_base_url("http://host/llm/v1")
    assert endpoint.models == "http://host/llm/v1/models"
    assert endpoint.server_path("/props") == "http://host/llm/props"
    assert endpoint.server_path("health") == "http://host/llm/health"


def test_version_like_segment_inside_the_path_is_not_the_last() -> None:
    endpoint = Endpoint.from_base_url("http://host/v1/proxy")
    assert endpoint.chat_completions == "http://host/v1/proxy/v1/chat/completions"


@pytest.mark.parametrize("bad", ["host:8080", "ftp://host/v1", "http://", "not a url"])
def test_invalid_base_urls_are_rejected(bad: str) -> None:
    with pytest.raises(ValueError, match="base_url"):
        Endpoint.from_base_url(bad)

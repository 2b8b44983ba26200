"""The configuration's network keys: ``proxy``, ``trust_env`` and ``sensitive_headers`` reach
the wire client, a backend's own over ``defaults`` (the header lists added together)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from providers import OpenAiCompatibleChatClient
from providers.abstractions.errors import ConfigurationError
from providers.abstractions.services import service_of
from providers.config import OaicompatConfig, client_for, load_config


def _load(tmp_path: Path, text: str) -> OaicompatConfig:
    path = tmp_path / "oaicompat.yaml"
    path.write_text(text, encoding="utf-8")
    return load_config(path)


def test_backend_settings_win_and_header_lists_add_up(tmp_path: Path) -> None:
    config = _load(
        tmp_path,
        "defaults: {trust_env: false, sensitive_headers: [x-a]}\n"
        "backends:\n"
        "  one: {base_url: 'http://h:1', sensitive_headers: [X-B], trust_env: true,"
        " proxy: 'http://u:pw@p:3128'}\n"
        "  two: {base_url: 'http://h:2'}\n",
    )
    one = config.network_for(config.backends["one"])
    assert one == {
        "proxy": "http://u:pw@p:3128",
        "trust_env": True,
        "sensitive_headers": ["x-a", "X-B"],
    }
    assert config.network_for(config.backends["two"]) == {
        "trust_env": False,
        "sensitive_headers": ["x-a"],
    }
    assert "pw" not in repr(config.backends["one"])


async def test_the_wire_client_gets_the_configured_names(tmp_path: Path) -> None:
    config = _load(
        tmp_path, "backends:\n  b: {base_url: 'http://h:1', sensitive_headers: [X-Tenant]}\n"
    )
    client = client_for(config, "b")
    try:
        wire = service_of(client, OpenAiCompatibleChatClient)
        assert wire is not None
        assert wire.sensitive_headers == {"x-tenant"}
    finally:
        await client.aclose()


def test_an_unset_file_passes_no_network_keys(tmp_path: Path) -> None:
    config = _load(tmp_path, "backends:\n  b: {base_url: 'http://h:1'}\n")
    assert config.network_for(config.backends["b"]) == {}


@pytest.mark.parametrize("names", ["[bad name]", "x-tenant", "['']"])
def test_a_sensitive_header_that_is_no_header_name_is_refused(tmp_path: Path, names: str) -> None:
    with pytest.raises(ConfigurationError, match="sensitive_headers"):
        _load(tmp_path, f"backends:\n  b: {{base_url: 'http://h:1', sensitive_headers: {names}}}\n")


def test_a_caller_http_client_wins_over_the_files_proxy(tmp_path: Path) -> None:
    config = _load(tmp_path, "backends:\n  b: {base_url: 'http://h:1', proxy: 'http://p:1'}\n")
    client_for(config, "b", http_client=httpx.AsyncClient())  # no ConfigurationError
    with pytest.raises(ConfigurationError, match="proxy"):
        OpenAiCompatibleChatClient(
            "http://h:1", proxy="http://p:1", http_client=httpx.AsyncClient()
        )

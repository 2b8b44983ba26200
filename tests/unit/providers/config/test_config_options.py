"""``model_family`` and ``unsupported_options`` per backend: read, validated as strictly as every
other key (an unknown value is refused with its line), and passed to the wire client."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from providers import OpenAiCompatibleChatClient
from providers.abstractions.errors import ConfigurationError
from providers.config import client_for, load_config


def _load(tmp_path: Path, block: str) -> Any:
    path = tmp_path / "oaicompat.yaml"
    text = "backends:\n  a:\n    base_url: http://a\n    model_id: served-alias\n"
    path.write_text(text + textwrap.indent(textwrap.dedent(block), "    "))
    return load_config(path, env={})


def _core(client: Any) -> OpenAiCompatibleChatClient:
    while not isinstance(client, OpenAiCompatibleChatClient):
        client = client.inner
    return client


def test_the_keys_reach_the_wire_client(tmp_path: Path) -> None:
    config = _load(tmp_path, "model_family: Qwen3\nunsupported_options: warn\n")
    backend = config.backend("a")
    assert (backend.model_family, backend.unsupported_options) == ("qwen3", "warn")
    core = _core(client_for(config, "a"))
    assert (core.model_family, core.unsupported_options) == ("qwen3", "warn")
    assert core.request_family(None) == "qwen3"  # not read from the alias


def test_unset_keys_keep_the_client_defaults(tmp_path: Path) -> None:
    core = _core(client_for(_load(tmp_path, ""), "a"))
    assert (core.model_family, core.unsupported_options) == (None, "raise")


@pytest.mark.parametrize("family", ["gpt-oss", "deepseek-v3.1", "glm", "granite", "llama-3.x"])
def test_every_known_family_name_is_taken(tmp_path: Path, family: str) -> None:
    assert _load(tmp_path, f"model_family: {family}\n").backend("a").model_family == family


def test_an_unknown_family_is_refused_with_the_known_names(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as info:
        _load(tmp_path, "model_family: qwen-3\n")
    message = str(info.value)
    assert ":5: backends.a.model_family" in message
    assert "unknown family" in message and "qwen3" in message


def test_an_unknown_policy_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError) as info:
        _load(tmp_path, "unsupported_options: skip\n")
    message = str(info.value)
    assert ":5: backends.a.unsupported_options" in message
    assert "'raise'" in message and "'warn'" in message and "'ignore'" in message

"""``providers.config``: the YAML file, its errors (file, line, key path) and ``client_for``."""

from __future__ import annotations

import json
import logging
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest
from structlog.testing import capture_logs

from capabilities.models import CapabilityOverrides
from providers import AuthenticationError, OpenAiCompatibleChatClient, RetryingChatClient, Timeouts
from providers.abstractions.errors import ConfigurationError
from providers.config import OaicompatConfig, client_for, find_config, load_config
from providers.factory import ExtraBodyChatClient
from providers.layers.fallback import FallbackChatClient

SECRET = "sk-top-secret-value-42"

ISSUE_YAML = """\
defaults: {timeouts: {connect: 5, first_token: 300, idle: 60, total: 1800},
           retry: {max_attempts: 3}}
backends:
  local-llama: {base_url: "http://127.0.0.1:8080", model_id: qwen3-8b, backend: auto}
  gpu-vllm:
    base_url: "https://vllm.internal/v1"
    model_id: Qwen/Qwen3-8B
    api_key: ${VLLM_API_KEY}
    capabilities: {context_window: 32768, vision: false}
    reasoning_tags: auto
    text_tool_calls: qwen3_coder
    extra_body: {chat_template_kwargs: {enable_thinking: true}}
roles: {main: gpu-vllm, fallback: local-llama}
"""

VALID_YAML = ISSUE_YAML.replace(
    "capabilities: {context_window: 32768, vision: false}",
    "capabilities: {context_window: 32768, input_modalities: [text]}",
)


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "oaicompat.yaml"
    path.write_text(textwrap.dedent(text))
    return path


def _inner(client: Any) -> Any:
    """One layer in; through a ``FallbackChatClient``, into its main backend."""
    return client.main if isinstance(client, FallbackChatClient) else client.inner


def _core(client: Any) -> OpenAiCompatibleChatClient:
    while not isinstance(client, OpenAiCompatibleChatClient):
        client = _inner(client)
    return client


def _find(client: Any, kind: type) -> Any:
    while not isinstance(client, kind):
        client = _inner(client)
    return client


def test_the_issue_example_loads(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, VALID_YAML), env={"VLLM_API_KEY": SECRET})
    vllm = config.backend("main")
    assert vllm.base_url == "https://vllm.internal/v1"
    assert vllm.api_key is not None and vllm.api_key.get_secret_value() == SECRET
    assert vllm.capabilities is not None and vllm.capabilities.context_window == 32768
    assert vllm.extra_body == {"chat_template_kwargs": {"enable_thinking": True}}
    assert vllm.text_tool_calls == "qwen3_coder"
    assert config.backend("fallback").model_id == "qwen3-8b"
    assert config.timeouts_for(vllm) == Timeouts(5, 300, 60, 1800)
    assert config.retry_for(vllm).max_attempts == 3


def test_the_issue_example_verbatim_loads_with_vision_as_text_only_input(tmp_path: Path) -> None:
    """The issue's own YAML: ``vision: false`` is the modality shorthand (text-only input)."""
    path = _write(tmp_path, ISSUE_YAML)
    config = load_config(path, env={"VLLM_API_KEY": SECRET})
    overrides = CapabilityOverrides.coerce(config.backend("gpu-vllm").capabilities)
    assert overrides.context_window == 32768
    assert overrides.input_modalities == ("text",)
    assert SECRET not in repr(config)


def test_backend_overrides_defaults_field_by_field(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """\
        defaults: {timeouts: {connect: 5, idle: 60}, retry: {max_attempts: 4, base_delay: 0}}
        backends:
          a: {base_url: "http://a", timeouts: {idle: 7}, retry: {max_attempts: 1}}
          b: {base_url: "http://b"}
        """,
    )
    config = load_config(path, env={})
    a, b = config.backend("a"), config.backend("b")
    assert config.timeouts_for(a) == Timeouts(connect=5, idle=7)
    assert config.retry_for(a).max_attempts == 1
    assert config.retry_for(a).base_delay == 0
    assert config.timeouts_for(b) == Timeouts(connect=5, idle=60)
    assert OaicompatConfig().timeouts_for(b) is None


def test_env_interpolation_with_and_without_default(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """\
        backends:
          a:
            base_url: "http://${HOST:-localhost}:${PORT}/v1"
            model_id: ${MODEL:-fallback-model}
            extra_body: {tag: "${TAG:-x}", n: 3, "${NOT_IN_KEYS}": 1}
        """,
    )
    config = load_config(path, env={"PORT": "8081", "MODEL": ""})
    a = config.backend("a")
    assert a.base_url == "http://localhost:8081/v1"
    assert a.model_id == "fallback-model"  # set but empty takes the default, as in the shell
    assert a.extra_body == {"tag": "x", "n": 3, "${NOT_IN_KEYS}": 1}


def test_missing_variable_names_variable_key_path_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, ISSUE_YAML)
    with pytest.raises(ConfigurationError) as info:
        load_config(path, env={})
    message = str(info.value)
    assert message.startswith(f"{path}:8: backends.gpu-vllm.api_key:")
    assert "VLLM_API_KEY" in message


def test_unknown_key_has_did_you_mean_and_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """\
        backends:
          a:
            base_url: "http://a"
            modle_id: qwen
        """,
    )
    with pytest.raises(ConfigurationError) as info:
        load_config(path, env={})
    assert str(info.value) == (
        f"{path}:4: backends.a.modle_id: unknown key 'modle_id' (did you mean 'model_id'?)"
    )


def test_unknown_top_level_and_nested_keys(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """\
        defaults:
          timeouts: {conect: 5}
        backend: {}
        """,
    )
    with pytest.raises(ConfigurationError) as info:
        load_config(path, env={})
    message = str(info.value)
    assert (
        f"{path}:2: defaults.timeouts.conect: unknown key 'conect' (did you mean 'connect'?)"
        in message
    )
    assert f"{path}:3: backend: unknown key 'backend' (did you mean 'backends'?)" in message


def test_wrong_type_and_missing_field_point_at_the_entry(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """\
        backends:
          a:
            model_id: m
            retry: {max_attempts: 0}
        """,
    )
    with pytest.raises(ConfigurationError) as info:
        load_config(path, env={})
    message = str(info.value)
    assert f"{path}:2: backends.a.base_url: Field required" in message
    assert f"{path}:4: backends.a.retry.max_attempts:" in message


def test_yaml_syntax_error_has_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "backends:\n  a: {base_url: [\n")
    with pytest.raises(ConfigurationError, match=rf"^{path}:\d+: "):
        load_config(path)


def test_python_tags_are_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "backends: !!python/object/apply:os.system ['true']\n")
    with pytest.raises(ConfigurationError, match=rf"^{path}:1: "):
        load_config(path)


def test_role_pointing_at_an_unknown_backend(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        """\
        backends:
          local-llama: {base_url: "http://a"}
        roles:
          main: local-lama
        """,
    )
    with pytest.raises(ConfigurationError) as info:
        load_config(path)
    assert str(info.value) == (
        f"{path}:4: roles.main: no backend named 'local-lama' (did you mean 'local-llama'?)"
    )


def test_secret_is_never_shown(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    config = load_config(_write(tmp_path, VALID_YAML), env={"VLLM_API_KEY": SECRET})
    backend = config.backend("main")
    shown = [repr(config), str(config), config.model_dump_json(), repr(backend), str(backend)]
    shown.append(json.dumps(config.model_dump(mode="json")))
    assert all(SECRET not in text for text in shown)
    assert "**********" in config.model_dump_json()

    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(401, json={"error": {"message": "bad key"}})

    async def call() -> None:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            client = client_for(config, "main", http_client=http, retry=None)
            assert SECRET not in repr(client) and SECRET not in repr(_core(client))
            with pytest.raises(AuthenticationError) as info:
                await client.get_response("hi")
            assert SECRET not in str(info.value) and SECRET not in repr(info.value)

    import asyncio

    caplog.set_level(logging.DEBUG)
    with capture_logs() as logs:
        asyncio.run(call())
    assert seen[0].headers["authorization"] == f"Bearer {SECRET}"  # it is used, just not shown
    assert SECRET not in repr(logs) and SECRET not in caplog.text


def test_secret_not_in_an_error_about_another_key(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        f"""\
        backends:
          a: {{base_url: "http://a", api_key: "{SECRET}", retry: {{max_attempts: nope}}}}
        """,
    )
    with pytest.raises(ConfigurationError) as info:
        load_config(path)
    assert SECRET not in str(info.value)
    assert "backends.a.retry.max_attempts" in str(info.value)


async def test_client_for_role_and_backend_name(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, VALID_YAML), env={"VLLM_API_KEY": SECRET})
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(
            200,
            json={
                "id": "x",
                "model": "m",
                "choices": [{"index": 0, "message": {"content": "ok"}, "finish_reason": "stop"}],
            },
        )

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        main = client_for(config, "main", http_client=http)
        assert _core(main).profile.name == "generic"
        assert _core(main).model_id == "Qwen/Qwen3-8B"
        assert _core(main).timeouts == Timeouts(5, 300, 60, 1800)
        assert _find(main, RetryingChatClient).policy.max_attempts == 3
        assert _find(main, ExtraBodyChatClient).extra_body == {
            "chat_template_kwargs": {"enable_thinking": True}
        }
        assert (await main.get_response("hi")).text == "ok"
        # roles.fallback is main's fallback, with its own standard pipeline
        assert isinstance(main, FallbackChatClient)
        assert (main.main_name, main.fallback_name) == ("gpu-vllm", "local-llama")
        assert _core(main.fallback).model_id == "qwen3-8b"
        assert _find(main.fallback, RetryingChatClient).policy.max_attempts == 3
        assert not isinstance(client_for(config, "main", fallback=False), FallbackChatClient)
        by_name = client_for(config, "local-llama", http_client=http)
        assert not isinstance(by_name, FallbackChatClient)
        assert _core(by_name).endpoint.api_base.startswith("http://127.0.0.1:8080")
    assert bodies[0]["chat_template_kwargs"] == {"enable_thinking": True}
    assert bodies[0]["model"] == "Qwen/Qwen3-8B"


def test_unknown_role_suggests_a_name(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, VALID_YAML), env={"VLLM_API_KEY": SECRET})
    with pytest.raises(ConfigurationError, match=r"'mian'.*did you mean 'main'"):
        client_for(config, "mian")


def test_find_config_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert find_config() is None
    home = tmp_path / "home" / ".config" / "oaicompat" / "config.yaml"
    home.parent.mkdir(parents=True)
    home.write_text("backends: {}\n")
    assert find_config() == home
    (tmp_path / "oaicompat.yaml").write_text("backends: {}\n")
    assert find_config() == Path("oaicompat.yaml")
    with pytest.raises(ConfigurationError, match="not found"):
        find_config(tmp_path / "missing.yaml")


def test_empty_file_is_an_empty_config(tmp_path: Path) -> None:
    assert load_config(_write(tmp_path, "")).backends == {}


ROLE_MAPPING_YAML = """\
backends:
  small: {base_url: "http://small/v1"}
  big: {base_url: "http://big/v1"}
roles:
  summarise: {backend: small, fallback: big}
  plain: small
"""


def test_a_role_written_as_a_mapping_names_its_own_fallback(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, ROLE_MAPPING_YAML), env={})
    assert config.backend_name("summarise") == "small"
    assert config.fallback_name("summarise") == "big"
    assert config.fallback_name("plain") is None
    client = client_for(config, "summarise")
    assert isinstance(client, FallbackChatClient)
    assert (client.main_name, client.fallback_name) == ("small", "big")
    assert str(_core(client.fallback).endpoint.api_base).startswith("http://big")


def test_a_fallback_naming_an_unknown_backend_fails_with_line_and_key_path(
    tmp_path: Path,
) -> None:
    path = _write(tmp_path, ROLE_MAPPING_YAML.replace("fallback: big", "fallback: bgi"))
    with pytest.raises(ConfigurationError) as info:
        load_config(path, env={})
    assert str(info.value).startswith(f"{path}:5: roles.summarise.fallback: no backend named")
    assert "did you mean 'big'" in str(info.value)


def test_a_fallback_equal_to_the_main_backend_is_no_fallback(tmp_path: Path) -> None:
    config = load_config(
        _write(tmp_path, ROLE_MAPPING_YAML.replace("fallback: big", "fallback: small")), env={}
    )
    assert config.fallback_name("summarise") is None
    assert not isinstance(client_for(config, "summarise"), FallbackChatClient)

"""The configuration file is outside input: a hostile or broken one costs a ``ConfigurationError``
(exit 2 in the CLI) naming ``file:line: key.path``, never a traceback, gigabytes or minutes, and
no message quotes a value the environment supplied (issue #20)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from providers.abstractions.errors import ConfigurationError
from providers.abstractions.limits import DEFAULT_LIMITS, Limits
from providers.cli import main
from providers.config import client_for, document, load_config, loading

SECRET = "sk-env-secret-5f3a9c"


def _write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "oaicompat.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def _never_called(*args: object, **kwargs: object) -> Any:
    raise AssertionError("interpolation walked a document that should have been refused")


def _alias_bomb(levels: int) -> str:
    """Nine aliases of nine aliases …: a few hundred bytes, ``9**levels`` strings expanded."""
    lines = ["backends:", "  a:", '    base_url: "http://a"', "    extra_body:"]
    lines.append('      l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]')
    for level in range(1, levels):
        refs = ",".join([f"*l{level - 1}"] * 9)
        lines.append(f"      l{level}: &l{level} [{refs}]")
    return "\n".join(lines) + "\n"


def _config_error(path: Path, **kwargs: Any) -> str:
    with pytest.raises(ConfigurationError) as info:
        load_config(path, **kwargs)
    return str(info.value)


# --- the document is bounded: size, alias expansion, depth -------------------------------------


def test_an_alias_bomb_is_refused_quickly_with_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused within the value budget, before interpolation or validation walks anything:
    the work is counted, not timed (a loaded machine makes any time limit flaky). Expanded,
    the bomb is half a million strings; the walk stops after ``MAX_VALUES``."""
    path = _write(tmp_path, _alias_bomb(6))  # 300 bytes, half a million strings expanded
    assert path.stat().st_size < 450
    counted: list[int] = []
    original = document._Builder._count

    def counting(self: Any, key_path: Any, text: int) -> None:
        counted.append(text)
        original(self, key_path, text)

    monkeypatch.setattr(document._Builder, "_count", counting)
    monkeypatch.setattr(loading, "interpolate", _never_called)
    message = _config_error(path, env={})
    assert 0 < len(counted) <= document.MAX_VALUES + 1
    assert message.startswith(f"{path}:")
    assert "alias" in message and "backends.a.extra_body" in message


def test_a_long_string_used_many_times_through_an_alias_is_refused(tmp_path: Path) -> None:
    """Few values, but each a 100 KB string: as large downstream as the copies it stands for."""
    text = "x" * 100_000
    refs = ", ".join(["*big"] * 30)
    path = _write(
        tmp_path,
        f'backends:\n  a:\n    base_url: "http://a"\n    extra_body:\n'
        f"      big: &big {text}\n      again: [{refs}]\n",
    )
    message = _config_error(path, env={})
    assert message.startswith(f"{path}:") and "characters once aliases are expanded" in message


def test_a_recursive_alias_is_a_configuration_error(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        'backends:\n  a:\n    base_url: "http://a"\n    extra_body: &loop {again: *loop}\n',
    )
    message = _config_error(path, env={})
    assert message.startswith(f"{path}:4: backends.a.extra_body")
    assert "alias" in message


def test_a_recursive_merge_key_is_a_configuration_error(tmp_path: Path) -> None:
    path = _write(tmp_path, 'backends:\n  a: &a {base_url: "http://a", <<: *a}\n')
    assert _config_error(path, env={}).startswith(f"{path}:2: backends.a")


@pytest.mark.parametrize("shape", ["flow", "block"])
def test_a_deeply_nested_document_is_a_configuration_error(tmp_path: Path, shape: str) -> None:
    if shape == "flow":
        nested = "[" * 5000 + "]" * 5000
        text = f'backends:\n  a:\n    base_url: "http://a"\n    extra_body: {{x: {nested}}}\n'
    else:  # indentation: 300 levels is still a small file
        text = 'backends:\n  a:\n    base_url: "http://a"\n    extra_body:\n'
        text += "".join(" " * (6 + 2 * i) + f"k{i}:\n" for i in range(300)) + " " * 606 + "x\n"
    message = _config_error(_write(tmp_path, text), env={})
    assert "nested deeper than" in message
    assert message.startswith(str(tmp_path / "oaicompat.yaml") + ":")


def test_depth_reached_through_aliases_is_bounded_too(tmp_path: Path) -> None:
    """Each anchor nests the previous one once: shallow as written, deep as expanded."""
    lines = ['backends:\n  a:\n    base_url: "http://a"\n    extra_body:\n      d0: &d0 [x]\n']
    lines += [f"      d{i}: &d{i} [*d{i - 1}]\n" for i in range(1, 150)]
    assert "nested deeper than" in _config_error(_write(tmp_path, "".join(lines)), env={})


def test_reasonable_nesting_and_aliases_still_load(tmp_path: Path) -> None:
    nested = "{k: " * 40 + "1" + "}" * 40
    path = _write(
        tmp_path,
        f"""\
backends:
  a: &common
    base_url: "http://a"
    model_id: m
    extra_body: {{deep: {nested}, tags: &tags [x, y]}}
  b:
    <<: *common
    base_url: "http://b"
  c:
    <<: [{{model_id: first}}, {{model_id: second, backend: vllm}}]
    base_url: "http://c"
    extra_body: {{tags: *tags}}
""",
    )
    config = load_config(path, env={})
    assert config.backend("b").base_url == "http://b"
    assert config.backend("b").model_id == "m"
    assert config.backend("b").extra_body == config.backend("a").extra_body
    assert config.backend("c").model_id == "first"  # the first mapping listed wins, as in YAML
    assert config.backend("c").backend == "vllm"
    assert config.backend("c").extra_body == {"tags": ["x", "y"]}


def test_an_oversized_file_is_refused_before_it_is_parsed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "backends: {}\n" + "# padding padding padding padding padding padding padding\n" * 40_000
    path = _write(tmp_path, text)
    assert path.stat().st_size > 2_000_000
    parses: list[object] = []
    original = yaml.parser.Parser.__init__

    def counting(self: yaml.parser.Parser) -> None:
        parses.append(self)
        original(self)

    monkeypatch.setattr(yaml.parser.Parser, "__init__", counting)
    message = _config_error(path, env={})
    assert parses == []
    assert message.startswith(f"{path}: ") and "larger than" in message


def test_the_file_is_parsed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    parses: list[object] = []
    original = yaml.parser.Parser.__init__

    def counting(self: yaml.parser.Parser) -> None:
        parses.append(self)
        original(self)

    monkeypatch.setattr(yaml.parser.Parser, "__init__", counting)
    load_config(_write(tmp_path, 'backends:\n  a: {base_url: "http://a"}\n'), env={})
    assert len(parses) == 1


def test_a_file_that_is_not_utf8_is_a_configuration_error(tmp_path: Path) -> None:
    path = _write(tmp_path, b'backends:\n  a: {base_url: "http://caf\xe9"}\n')
    message = _config_error(path, env={})
    assert message.startswith(f"{path}:2: ") and "UTF-8" in message


def test_a_control_character_is_a_configuration_error_with_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path, 'backends:\n  a: {base_url: "http://a\x07"}\n')
    assert _config_error(path, env={}).startswith(f"{path}:2: ")


@pytest.mark.parametrize(
    "url", ["http://[::1", "ftp://files.example", "localhost:8080", "http://a:99999999"]
)
def test_an_invalid_base_url_is_a_configuration_error_at_load(tmp_path: Path, url: str) -> None:
    path = _write(tmp_path, f'backends:\n  a:\n    model_id: m\n    base_url: "{url}"\n')
    message = _config_error(path, env={})
    assert message.startswith(f"{path}:4: backends.a.base_url: ")
    assert url not in message


@pytest.mark.parametrize(
    "text",
    [
        _alias_bomb(6),
        'backends:\n  a: {base_url: "http://a", extra_body: &x {y: *x}}\n',
        "backends: " + "[" * 3000 + "]" * 3000 + "\n",
        'backends:\n  a: {base_url: "http://[::1"}\n',
    ],
    ids=["alias-bomb", "recursive-alias", "deep", "bad-url"],
)
def test_the_cli_exits_2_with_one_line_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    path = _write(tmp_path, text)
    assert main(["chat", "--config", str(path), "hi"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"oaicompat: {path}:") and "Traceback" not in err


def test_an_invalid_base_url_flag_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chat", "--base-url", "http://[::1", "hi"]) == 2
    assert main(["probe", "--base-url", "ftp://x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("oaicompat: --base-url") and "Traceback" not in err


# --- values from the environment are never quoted ----------------------------------------------


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('backends:\n  a: {base_url: "${URL}"}\n', "backends.a.base_url"),
        ('backends:\n  a: {base_url: "http://a:${URL}/v1"}\n', "backends.a.base_url"),
        ('backends:\n  a: {base_url: "http://a"}\nroles: {main: "${URL}"}\n', "roles.main"),
        (
            'backends:\n  a: {base_url: "http://a"}\n'
            'roles: {main: {backend: a, fallback: "${URL}"}}\n',
            "roles.main.fallback",
        ),
        ('backends:\n  a: {base_url: "http://a", reasoning_tags: "${URL}"}\n', "reasoning_tags"),
        ('backends:\n  a: {base_url: "http://a", text_tool_calls: "${URL}"}\n', "text_tool_calls"),
        ('backends:\n  a: {base_url: "http://a", retry: {max_attempts: "${URL}"}}\n', "retry"),
        ('backends:\n  a: {base_url: "http://a", limits: {max_tool_calls: "${URL}"}}\n', "limits"),
    ],
)
def test_a_value_from_the_environment_is_not_quoted(tmp_path: Path, text: str, where: str) -> None:
    message = _config_error(_write(tmp_path, text), env={"URL": SECRET})
    assert where in message
    assert SECRET not in message
    assert "URL" in message  # the variable is named, so the user knows where to look


def test_a_written_value_is_still_quoted_where_it_helps(tmp_path: Path) -> None:
    path = _write(tmp_path, 'backends:\n  local: {base_url: "http://a"}\nroles: {main: lcoal}\n')
    assert _config_error(path, env={}) == (
        f"{path}:3: roles.main: no backend named 'lcoal' (did you mean 'local'?)"
    )


# --- limits: per backend and in defaults, field by field ---------------------------------------


def test_limits_are_read_per_backend_over_defaults_and_reach_the_pipeline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(
        tmp_path,
        """\
defaults: {limits: {max_event_bytes: 1000, max_tool_calls: 8}}
backends:
  a: {base_url: "http://a", limits: {max_tool_calls: 2, max_json_depth: "${DEPTH}"}}
  b: {base_url: "http://b"}
  c: {base_url: "http://c", retry: {max_attempts: 1}}
roles: {main: {backend: a, fallback: b}}
""",
    )
    config = load_config(path, env={"DEPTH": "30"})
    seen: dict[str, Any] = {}

    def fake_create(base_url: str, *args: Any, **kwargs: Any) -> Any:
        seen[base_url] = kwargs["limits"]
        return _Closed()

    monkeypatch.setattr("providers.config.clients.create_chat_client", fake_create)
    monkeypatch.setattr("providers.config.clients.FallbackChatClient", lambda *a, **k: None)
    client_for(config, "main")
    assert seen["http://a"] == Limits(max_event_bytes=1000, max_tool_calls=2, max_json_depth=30)
    assert seen["http://b"] == Limits(max_event_bytes=1000, max_tool_calls=8)
    assert config.limits_for(config.backend("c")) == Limits(max_event_bytes=1000, max_tool_calls=8)


class _Closed:
    async def aclose(self) -> None:
        return None


def test_limits_without_any_setting_are_the_library_defaults(tmp_path: Path) -> None:
    config = load_config(_write(tmp_path, 'backends:\n  a: {base_url: "http://a"}\n'))
    assert config.limits_for(config.backend("a")) in (None, DEFAULT_LIMITS)
    assert config.pipeline_settings(config.backend("a"))["limits"] in (None, DEFAULT_LIMITS)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("{max_tool_call: 3}", "unknown key 'max_tool_call' (did you mean 'max_tool_calls'?)"),
        ("{max_body_bytes: 0}", "backends.a.limits.max_body_bytes: Input should be greater than 0"),
        ("{max_body_bytes: -5}", "backends.a.limits.max_body_bytes: Input should be greater"),
        ("{max_body_bytes: 1.5}", "backends.a.limits.max_body_bytes:"),
        ("{max_body_bytes: true}", "backends.a.limits.max_body_bytes:"),
        ("{max_body_bytes: lots}", "backends.a.limits.max_body_bytes:"),
    ],
)
def test_limits_are_validated_with_file_line_and_key_path(
    tmp_path: Path, body: str, expected: str
) -> None:
    path = _write(tmp_path, f'backends:\n  a:\n    base_url: "http://a"\n    limits: {body}\n')
    message = _config_error(path, env={})
    assert message.startswith(f"{path}:4: backends.a.limits")
    assert expected in message


def test_limits_in_defaults_are_validated_too(tmp_path: Path) -> None:
    path = _write(tmp_path, "defaults:\n  limits:\n    max_held_update: 5\n")
    assert _config_error(path, env={}) == (
        f"{path}:3: defaults.limits.max_held_update: unknown key 'max_held_update' "
        "(did you mean 'max_held_updates'?)"
    )


def test_the_limits_section_has_every_field_of_limits() -> None:
    from providers.config import LimitsConfig

    assert list(LimitsConfig.model_fields) == list(Limits.__dataclass_fields__)

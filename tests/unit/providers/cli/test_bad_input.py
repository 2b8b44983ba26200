"""Every subcommand with bad input: one ``oaicompat: …`` line naming the problem and the fix,
the documented exit code (2 for usage and configuration), and never a traceback.

``main`` runs in-process: an exception escaping it (what a user would see as a traceback)
fails the test as that exception.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from providers.cli import main
from providers.cli.demo import DEMO_SCENARIOS, demo_root
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from providers.replay.transcripts import default_root
from tests.unit.capabilities.fakes import discovery
from tests.unit.providers.cli.test_cli import CHAT_TRANSCRIPT, _Llama

DEAD = "http://127.0.0.1:9"  # nothing listens on the discard port


def _one_usage_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert "Traceback" not in err
    assert len(lines) == 1 and lines[0].startswith("oaicompat: "), err
    return lines[0]


@pytest.fixture
async def llama() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(_Llama()) as server:
        yield server


async def _main(*argv: str) -> int:
    return await asyncio.to_thread(main, list(argv))


@pytest.mark.parametrize("command", ["chat", "record"])
def test_tools_from_a_missing_file(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    extra = ["--name", "x"] if command == "record" else []
    code = main([command, "hi", "--base-url", DEAD, "--tools", "@missing.json", *extra])
    assert code == 2
    line = _one_usage_line(capsys.readouterr().err)
    assert "@missing.json" in line and "No such file" in line


@pytest.mark.parametrize("name", ["a/b", "../up", "..", "-x", ""])
def test_record_name_must_be_one_file_name(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["record", "hi", "--base-url", DEAD, f"--name={name}"]) == 2
    assert "--name" in _one_usage_line(capsys.readouterr().err)


async def test_record_to_an_unwritable_folder(
    llama: ReplayServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code = await _main(
        "record", "hi", "--base-url", llama.base_url, "--name", "x", "--transcripts",
        str(blocker / "sub"),
    )  # fmt: skip
    assert code == 2
    line = _one_usage_line(capsys.readouterr().err)
    assert "cannot write" in line and "--transcripts" in line


async def test_record_defaults_away_from_the_bundled_folder_and_never_overwrites(
    llama: ReplayServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ("record", "hi", "--base-url", llama.base_url, "--name", "x")
    assert await _main(*argv) == 0
    (sidecar,) = (tmp_path / "oaicompat-transcripts").glob("*/captured--cli--x.json")
    assert not (tmp_path / "transcripts").exists()
    sidecar.write_text("{}")  # stands for a reviewed capture
    capsys.readouterr()
    assert await _main(*argv) == 2
    line = _one_usage_line(capsys.readouterr().err)
    assert "--force" in line and str(sidecar.name) in line
    assert sidecar.read_text() == "{}"
    requests = len(llama.requests)
    assert await _main(*argv, "--force") == 0
    assert json.loads(sidecar.read_text())["response"]["status"] == 200
    assert len(llama.requests) > requests


def test_replay_of_a_sidecar_without_body(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sidecar = tmp_path / "x.json"
    shutil.copy(default_root() / CHAT_TRANSCRIPT, sidecar)
    assert main(["replay", str(sidecar)]) == 2
    assert "no .sse or .raw body" in _one_usage_line(capsys.readouterr().err)


def test_replay_of_a_discovery_file(capsys: pytest.CaptureFixture[str]) -> None:
    meta = default_root() / "vllm" / "discovery" / "plain--get-v1-models.meta.json"
    work = meta.with_name("plain--get-v1-models.meta.json")
    assert main(["replay", str(work)]) == 2
    assert "no recorded response" in _one_usage_line(capsys.readouterr().err)


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"response": {"status": "x"}}'])
def test_replay_of_a_json_that_is_no_transcript(
    content: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "x.json").write_text(content)
    (tmp_path / "x.raw").write_text("{}")
    assert main(["replay", str(tmp_path / "x.json")]) == 2
    _one_usage_line(capsys.readouterr().err)


def test_demo_with_a_partial_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    backend, name = next(iter(next(iter(DEMO_SCENARIOS.values())).items()))
    (tmp_path / backend).mkdir()
    for suffix in (".json", ".sse"):
        shutil.copy(demo_root() / backend / f"{name}{suffix}", tmp_path / backend)
    assert main(["demo", "--transcripts", str(tmp_path)]) == 2
    line = _one_usage_line(capsys.readouterr().err)
    assert "--transcripts" in line and "six demo captures" in line
    assert capsys.readouterr().out == ""  # nothing printed before the error


def test_unset_api_key_variable_is_named(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OAICOMPAT_TEST_UNSET_KEY", raising=False)
    code = main(["probe", "--base-url", DEAD, "--api-key-env", "OAICOMPAT_TEST_UNSET_KEY"])
    assert code == 2
    assert "OAICOMPAT_TEST_UNSET_KEY is unset" in _one_usage_line(capsys.readouterr().err)


async def test_a_401_without_a_key_says_the_variable_is_unset(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OAICOMPAT_API_KEY", raising=False)

    def refuse(request: ReceivedRequest) -> RecordedReply:
        body = b'{"error": {"message": "Invalid API Key", "type": "authentication_error"}}'
        return RecordedReply(401, body, {"Content-Type": "application/json"})

    async with ReplayServer(refuse) as server:
        assert await _main("chat", "hi", "--base-url", server.base_url) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert "OAICOMPAT_API_KEY is unset" in err


class _Vllm:
    """vLLM's recorded discovery answers (it serves ``Qwen/Qwen3-0.6B``-style ids by name)."""

    def __init__(self) -> None:
        self.exchanges = discovery("vllm", "plain")

    def __call__(self, request: ReceivedRequest) -> RecordedReply:
        exchange = self.exchanges.get(request.path.split("?")[0])
        if exchange is None:
            return RecordedReply(404, b'{"detail": "Not Found"}')
        return RecordedReply(exchange.status, exchange.body, {"Content-Type": "application/json"})


async def test_probe_refuses_a_model_the_server_does_not_serve(
    capsys: pytest.CaptureFixture[str],
) -> None:
    async with ReplayServer(_Vllm()) as server:
        assert await _main("probe", "--base-url", server.base_url, "--model", "nope") == 2
        err = capsys.readouterr().err
        served = json.loads(_Vllm().exchanges["/v1/models"].body)["data"][0]["id"]
        assert "nope" in err and served in err and "Traceback" not in err
        assert await _main("probe", "--base-url", server.base_url, "--model", served) == 0


async def test_probe_notes_a_model_a_single_model_server_ignores(
    llama: ReplayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await _main("probe", "--base-url", llama.base_url, "--model", "nope") == 0
    assert "ignores the model field" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf", "nan"])
def test_timeout_must_be_positive_seconds(value: str) -> None:
    assert main(["chat", "hi", "--base-url", DEAD, "--timeout", value]) == 2


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--base-url", DEAD, "--extra-body", "{"],
        ["probe", "--base-url", "not a url"],
        ["chat", "hi", "--use", "nope"],
        ["chat", "hi", "--api-key-env", "X"],  # only with --base-url
    ],
)
def test_configuration_mistakes(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(f'backends:\n  a: {{base_url: "{DEAD}"}}\n')
    assert main([*argv, "--config", str(config)]) == 2
    _one_usage_line(capsys.readouterr().err)


async def test_chat_answers_from_the_fallback_role(
    llama: ReplayServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        textwrap.dedent(
            f"""\
            defaults: {{retry: {{max_attempts: 1}}}}
            backends:
              gpu-vllm: {{base_url: "{DEAD}", model_id: big}}
              local-llama: {{base_url: "{llama.base_url}", model_id: small}}
            roles: {{main: gpu-vllm, fallback: local-llama}}
            """
        )
    )
    assert await _main("chat", "--config", str(config), "hi") == 0
    assert "It is sunny in Paris." in capsys.readouterr().out
    assert json.loads(llama.requests[-1].body)["model"] == "small"


@pytest.mark.parametrize(("verbose", "shown"), [(0, False), (1, True)])
def test_warnings_reach_stderr_only_with_v(
    verbose: int, shown: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    import structlog

    from providers.cli.backend_commands import _configure_logging

    restore = _configure_logging(verbose)
    try:
        structlog.get_logger("oaicompat").warning("oaicompat.test.expected_overflow")
        structlog.get_logger("oaicompat").error("oaicompat.test.failed")
    finally:
        restore()
    err = capsys.readouterr().err
    assert ("expected_overflow" in err) is shown
    assert "oaicompat.test.failed" in err


@pytest.mark.parametrize("tty", [True, False])
def test_waiting_line_on_a_terminal_only(tty: bool) -> None:
    import io

    from providers.cli.output import print_waiting

    class _Err(io.StringIO):
        def isatty(self) -> bool:
            return tty

    err = _Err()
    print_waiting("http://h:1", 30.0, err)
    assert ("waiting for http://h:1" in err.getvalue()) is tty
    assert ("30 s" in err.getvalue()) is tty


def test_timeout_caps_every_phase(tmp_path: Path) -> None:
    import argparse

    from providers.cli.arguments import build_parser
    from providers.cli.target import target_from

    args: argparse.Namespace = build_parser().parse_args(
        ["chat", "hi", "--base-url", DEAD, "--timeout", "7"]
    )
    target = target_from(args)
    timeouts = target.settings["timeouts"]
    assert (timeouts.first_token, timeouts.idle, timeouts.total) == (7, 7, 7)
    assert timeouts.connect <= 7 and target.timeout == 7

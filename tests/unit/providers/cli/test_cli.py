"""``oaicompat`` against a loopback server replaying recorded llama.cpp traffic.

``main`` runs its own event loop, so each call runs in a worker thread while the
``ReplayServer`` serves from the test's loop.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from providers.cli import main
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from providers.replay.transcripts import Transcript, default_root
from tests.unit.capabilities.fakes import discovery

CHAT_TRANSCRIPT = "llamacpp/captured--qwen3-reasoning-deepseek--stream-reasoning.json"
TOOLS_TRANSCRIPT = (
    "llamacpp/captured--qwen25-plain--stream-text-parallel-tool-calls-in-content.json"
)


class _Llama:
    """Discovery answers from ``transcripts/llamacpp/discovery``; chat from one transcript."""

    def __init__(self, chat: str = CHAT_TRANSCRIPT) -> None:
        self.exchanges = discovery("llamacpp", "qwen25-plain")
        self.chat = Transcript.load(default_root() / chat)

    def __call__(self, request: ReceivedRequest) -> RecordedReply:
        if request.path.endswith("/chat/completions"):
            content_type = self.chat.sidecar["response"].get("content_type", "")
            return RecordedReply(self.chat.status, self.chat.body, {"Content-Type": content_type})
        exchange = self.exchanges.get(request.path.split("?")[0])
        if exchange is None:
            return RecordedReply(404, b'{"error":{"code":404,"message":"File Not Found"}}')
        keep = {
            k: v for k, v in exchange.headers.items() if k.lower() in ("content-type", "server")
        }
        return RecordedReply(exchange.status, exchange.body, keep)


@pytest.fixture
async def llama() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(_Llama()) as server:
        yield server


async def _main(*argv: str) -> int:
    return await asyncio.to_thread(main, list(argv))


async def test_probe_json_reports_backend_and_provenance(
    llama: ReplayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await _main("probe", "--base-url", llama.base_url, "--json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["backend"]["value"] == "llamacpp"
    assert data["backend_version"]["value"]
    assert data["context_window"]["value"] and data["context_window"]["source"] == "props"
    assert data["base_url"] == llama.base_url


async def test_probe_table(llama: ReplayServer, capsys: pytest.CaptureFixture[str]) -> None:
    assert await _main("probe", "--base-url", llama.base_url) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].split() == ["field", "value", "source"]
    assert any(line.split()[:2] == ["backend", "llamacpp"] for line in out.splitlines())


async def test_probe_unreachable_is_a_backend_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert await _main("probe", "--base-url", "http://127.0.0.1:9", "--json") == 1
    assert "no probe" in capsys.readouterr().err


async def test_chat_streams_reasoning_and_text_plainly_off_a_terminal(
    llama: ReplayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await _main("chat", "--base-url", llama.base_url, "weather in Paris?") == 0
    captured = capsys.readouterr()
    assert "\x1b[" not in captured.out  # not a TTY: no escape codes
    assert "[reasoning]\n" in captured.out and "[text]\n" in captured.out
    assert "It is sunny in Paris." in captured.out
    assert "finish: stop" in captured.err
    assert "e2e_ms_client" in captured.err
    body = json.loads(llama.requests[-1].body)
    assert body["messages"] == [{"role": "user", "content": "weather in Paris?"}]


async def test_chat_shows_tool_calls_and_sends_extra_body(
    capsys: pytest.CaptureFixture[str],
) -> None:
    tools = [{"type": "function", "function": {"name": "get_weather"}}]
    async with ReplayServer(_Llama(TOOLS_TRANSCRIPT)) as server:
        code = await _main(
            "chat",
            "--base-url",
            server.base_url,
            "--extra-body",
            '{"grammar": "root ::= \\"x\\""}',
            "--tools",
            json.dumps(tools),
            "weather and time?",
        )
        body = json.loads(server.requests[-1].body)
    assert code == 0
    out = capsys.readouterr().out
    assert "tool call: get_weather({" in out
    assert body["grammar"] == 'root ::= "x"'
    assert body["tools"][0]["function"]["name"] == "get_weather"


def test_stream_view_dims_reasoning_on_a_terminal() -> None:
    import io

    from providers import ChatResponseUpdate, TextContent, TextReasoningContent
    from providers.cli.output import StreamView

    out = io.StringIO()
    view = StreamView(out, tty=True)
    view.show(ChatResponseUpdate(contents=[TextReasoningContent("think")]))
    view.show(ChatResponseUpdate(contents=[TextContent("answer")]))
    view.end()
    assert out.getvalue() == "\x1b[2mthink\x1b[0m\nanswer\n"


async def test_chat_from_a_configuration_file(
    llama: ReplayServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        textwrap.dedent(
            f"""\
            backends:
              local: {{base_url: "{llama.base_url}", model_id: m, backend: llamacpp,
                       extra_body: {{n_probs: 0}}}}
            roles: {{main: local}}
            """
        )
    )
    assert await _main("chat", "--config", str(config), "hi") == 0
    body = json.loads(llama.requests[-1].body)
    assert body["model"] == "m" and body["n_probs"] == 0
    assert "It is sunny in Paris." in capsys.readouterr().out


def test_config_error_exits_2_with_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text('backends:\n  a: {base_url: x, api_key: "${NOPE_NOT_SET_42}"}\n')
    assert main(["probe", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"{config}:2: backends.a.api_key" in err and "NOPE_NOT_SET_42" in err


def test_usage_errors_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["probe"]) == 2  # no --base-url and no configuration file
    assert main(["chat"]) == 2  # argparse: the prompt is missing
    assert main(["probe", "--base-url", "http://x", "--extra-body", "[1]"]) == 2
    assert main(["probe", "--config", str(tmp_path / "missing.yaml")]) == 2


def test_help_documents_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "exit codes:" in out and "2  usage or configuration error" in out


def test_replay_still_works(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(default_root() / CHAT_TRANSCRIPT)]) == 0
    assert json.loads(capsys.readouterr().out)["text"]


def test_cli_is_not_imported_by_the_package() -> None:
    import subprocess
    import sys

    code = "import providers, sys; print('providers.cli' in sys.modules, 'yaml' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False"]

"""``oaicompat probe``, ``chat``, ``check`` and ``record`` against a real llama-server.

The model has random weights, so output that must mean something is forced with a GBNF
``grammar`` passed through ``--extra-body``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from providers.cli import main
from providers.replay.transcripts import Transcript


def _grammar(text: str) -> str:
    return json.dumps({"grammar": f"root ::= {json.dumps(text)}"})


def test_probe_json(plain_server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "--base-url", plain_server.base_url, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["backend"] == {"value": "llamacpp", "source": data["backend"]["source"]}
    assert data["backend_version"]["value"]
    assert data["context_window"]["value"] == 4096
    # a chat server: no embeddings or rerank (each says how to start for it), its tokenizer
    services = data["services"]
    assert services["embeddings"]["supported"] is False
    assert "--embeddings" in services["embeddings"]["fix"]
    assert services["rerank"]["supported"] is False
    assert services["tokenize"] == {
        "supported": True,
        "source": "llamacpp:/apply-template+/tokenize",
    }


def test_probe_table(plain_server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "--base-url", plain_server.base_url]) == 0
    assert "llamacpp" in capsys.readouterr().out


def test_chat_streams_forced_text_with_timings(
    plain_server: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["chat", "--base-url", plain_server.base_url, "--extra-body", _grammar("Hi there.")]
    assert main([*argv, "--max-tokens", "20", "hello?"]) == 0
    captured = capsys.readouterr()
    assert "Hi there." in captured.out
    assert "usage: in " in captured.err
    assert "e2e_ms_client" in captured.err


def test_chat_from_config_recovers_a_text_tool_call(
    plain_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The call is recovered because the tool is offered (issue #20: with no tools offered, a
    call written as text stays text). ``tool_choice: none`` keeps llama-server's own parser out
    of the way and lets it take the grammar beside the tools."""
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    extra = {"grammar": f"root ::= {json.dumps(call)}", "tool_choice": "none"}
    config = tmp_path / "oaicompat.yaml"
    config.write_text(
        f"backends:\n  local:\n    base_url: {plain_server.base_url}\n    backend: llamacpp\n"
        f"    extra_body: {json.dumps(extra)}\n"
    )
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
    argv = ["chat", "--config", str(config), "--tools", json.dumps(tools), "--max-tokens", "60"]
    assert main([*argv, "weather?"]) == 0
    assert 'tool call: get_weather({"city": "Paris"})' in capsys.readouterr().out


def test_chat_leaves_a_text_tool_call_as_text_when_no_tool_is_offered(
    plain_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    call = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
    config = tmp_path / "oaicompat.yaml"
    config.write_text(
        f"backends:\n  local:\n    base_url: {plain_server.base_url}\n    backend: llamacpp\n"
        f"    extra_body: {_grammar(call)}\n"
    )
    assert main(["chat", "--config", str(config), "--max-tokens", "60", "weather?"]) == 0
    out = capsys.readouterr().out
    assert "tool call:" not in out
    assert "<tool_call>" in out


def test_check_report(plain_server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", "--base-url", plain_server.base_url, "--json", "--max-tokens", "8"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    checks = {c["check"]: c for c in report["checks"]}
    assert report["backend"] == "llamacpp"
    assert set(checks) == {
        "plain text",
        "reasoning",
        "tool call",
        "parallel tool calls",
        "usage",
        "over-long prompt",
        "wrong model id",
    }
    assert checks["plain text"]["outcome"] == "ok"
    assert checks["usage"]["outcome"] == "ok"
    assert checks["over-long prompt"]["outcome"] == "ok"
    assert "ContextLengthExceededError" in checks["over-long prompt"]["detail"]
    assert checks["wrong model id"]["outcome"] in ("ok", "differs")


def test_record_writes_a_replayable_transcript(
    plain_server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [
        "record",
        "--base-url",
        plain_server.base_url,
        "--extra-body",
        _grammar("Recorded."),
        "--max-tokens",
        "20",
        "--transcripts",
        str(tmp_path),
        "--setup",
        "test",
        "--name",
        "stream-text",
        "say it",
    ]
    assert main(argv) == 0
    sidecar = tmp_path / "llamacpp" / "captured--test--stream-text.json"
    transcript = Transcript.load(sidecar)
    assert transcript.is_stream and transcript.status == 200
    assert transcript.expected["text"] == "Recorded."
    assert transcript.expected["error"] is None
    assert transcript.sidecar["provenance"]["server"].startswith("llamacpp")
    assert transcript.request["grammar"] == 'root ::= "Recorded."'
    capsys.readouterr()
    assert main(["replay", str(sidecar)]) == 0
    assert json.loads(capsys.readouterr().out)["text"] == "Recorded."

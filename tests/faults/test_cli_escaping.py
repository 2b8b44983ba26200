"""What a server sends (model ids, error messages, streamed text, tool calls, probe values) and
what a configuration file names (its keys) reach the terminal with their control characters
written out, never acted on: ``ESC ] 0 ; … BEL`` retitles the window, ``CSI 2 J`` clears the
screen, and C1's one-character CSI (U+009B) does the same on terminals that honour it
(issue #20). Streamed text keeps its newlines and tabs."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from providers.cli import main
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer

EVIL = "\x1b]0;owned\x07\x1b[2J\x9b31m\r\x00\x7f"
"""A window title, a screen clear, a C1 CSI, a carriage return, a NUL and a DEL."""
RAW = ("\x1b", "\x07", "\x9b", "\r", "\x00", "\x7f")


def _assert_inert(*outputs: str) -> None:
    for output in outputs:
        for control in RAW:
            assert control not in output, f"{control!r} reached the terminal"


def _sse(*events: dict[str, object]) -> bytes:
    lines = [f"data: {json.dumps(event)}\n\n" for event in events]
    return ("".join(lines) + "data: [DONE]\n\n").encode()


def _chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
    return {
        "id": "c1",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


_MODELS = {"object": "list", "data": [{"id": f"model{EVIL}", "object": "model", "owned_by": EVIL}]}


def _server(chat: RecordedReply) -> Callable[[ReceivedRequest], RecordedReply]:
    def answer(request: ReceivedRequest) -> RecordedReply:
        path = request.path.split("?")[0]
        if path.endswith("/chat/completions"):
            return chat
        if path.endswith("/models"):
            return RecordedReply(200, json.dumps(_MODELS).encode(), {"Content-Type": "json"})
        if path.endswith("/version"):
            body = json.dumps({"version": f"0.1{EVIL}"}).encode()
            return RecordedReply(200, body, {"Content-Type": "application/json"})
        return RecordedReply(404, b'{"error": {"message": "no"}}')

    return answer


async def _main(*argv: str) -> int:
    return await asyncio.to_thread(main, list(argv))


async def test_chat_escapes_streamed_text_reasoning_tool_calls_and_stats(
    capsys: pytest.CaptureFixture[str],
) -> None:
    call = {
        "index": 0,
        "id": f"call{EVIL}",
        "type": "function",
        "function": {"name": f"get{EVIL}", "arguments": json.dumps({"city": f"Paris{EVIL}"})},
    }
    body = _sse(
        _chunk({"role": "assistant", "reasoning_content": f"think{EVIL}\nmore"}),
        _chunk({"content": f"line one{EVIL}\n\tindented"}),
        _chunk({"tool_calls": [call]}),
        _chunk({}, f"stop{EVIL}"),
    )
    reply = RecordedReply(200, body, {"Content-Type": "text/event-stream"})
    async with ReplayServer(_server(reply)) as server:
        code = await _main("chat", "--base-url", server.base_url, "--backend", "vllm", "hi")
    captured = capsys.readouterr()
    assert code == 0
    _assert_inert(captured.out, captured.err)
    assert "line one\\x1b]0;owned\\x07" in captured.out
    assert "\n\tindented" in captured.out  # streamed layout is kept
    assert "think\\x1b" in captured.out and "\\x9b31m" in captured.out
    assert "tool call: get\\x1b" in captured.out


async def test_a_server_error_message_is_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    # The log line's renderer quotes a value with a space or a CR in it, but not this one.
    error = {"error": {"message": f"bad request{EVIL}\nsecond", "type": "bad\x1b[2J\x9b2J"}}
    reply = RecordedReply(400, json.dumps(error).encode(), {"Content-Type": "application/json"})
    async with ReplayServer(_server(reply)) as server:
        code = await _main("chat", "--base-url", server.base_url, "hi")
    captured = capsys.readouterr()
    assert code == 1
    _assert_inert(captured.out, captured.err)
    assert "bad request\\x1b]0;owned" in captured.err


@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
async def test_probe_escapes_model_ids_and_versions(
    capsys: pytest.CaptureFixture[str], as_json: bool
) -> None:
    reply = RecordedReply(500, b"{}")
    async with ReplayServer(_server(reply)) as server:
        flags = ["--json"] if as_json else []
        code = await _main("probe", "--base-url", server.base_url, *flags)
    captured = capsys.readouterr()
    assert code == 0
    _assert_inert(captured.out, captured.err)
    if as_json:
        data = json.loads(captured.out)  # still JSON, and the same values once parsed
        assert data["served_model_ids"]["value"] == [f"model{EVIL}"]
        assert data["backend_version"]["value"] == f"0.1{EVIL}"
    else:
        assert "model\\x1b]0;owned" in captured.out


async def test_check_escapes_server_text_in_its_report(capsys: pytest.CaptureFixture[str]) -> None:
    error = {"error": {"message": f"overloaded{EVIL}"}}
    reply = RecordedReply(400, json.dumps(error).encode(), {"Content-Type": "application/json"})
    async with ReplayServer(_server(reply)) as server:
        await _main("check", "--base-url", server.base_url, "--max-tokens", "4")
        await _main("check", "--base-url", server.base_url, "--max-tokens", "4", "--json")
    captured = capsys.readouterr()
    _assert_inert(captured.out, captured.err)
    assert "overloaded\\x1b" in captured.out
    assert "overloaded\\u001b" in captured.out  # the JSON report escapes as JSON does


def test_yaml_keys_are_escaped_in_configuration_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.yaml"
    config.write_text('backends:\n  "evil\\e]0;owned\\a\\e[2J": {model_id: m}\n')
    assert main(["probe", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    _assert_inert(err)
    assert "backends.evil\\x1b]0;owned\\x07\\x1b[2J.base_url" in err


def test_terminal_safe_keeps_layout_only_where_asked() -> None:
    from providers.cli.output import json_text, terminal_safe

    assert terminal_safe("a\x1b[2Jb\x9bc\n\td\r") == "a\\x1b[2Jb\\x9bc\\x0a\\x09d\\x0d"
    assert terminal_safe("a\x1b\n\td\r", layout=True) == "a\\x1b\n\td\\x0d"
    assert terminal_safe("naïve — 日本") == "naïve — 日本"  # printable text is untouched
    text = json_text({"k": "v\x1b\x9b\x7fé"})
    assert json.loads(text) == {"k": "v\x1b\x9b\x7fé"}
    _assert_inert(text)
    assert "é" in text

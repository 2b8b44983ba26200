"""``oaicompat chat|record|replay --api responses``: the CLI over ``/v1/responses``, against a
loopback server replaying a captured vLLM Responses exchange."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from providers.cli import main
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from providers.replay.transcripts import Transcript, default_root
from tests.unit.providers.cli.test_cli import _main

RESPONSES = "vllm/captured--qwen3-hermes--responses--stream-tool-call.json"


class _VllmResponses:
    """``/v1/responses`` answers with the captured stream; anything else is a 404, which the
    backend detection reads as "unknown" (the recorder then files it under ``generic``)."""

    def __init__(self) -> None:
        self.transcript = Transcript.load(default_root() / RESPONSES)

    def __call__(self, request: ReceivedRequest) -> RecordedReply:
        if request.path.endswith("/responses"):
            content_type = self.transcript.sidecar["response"]["content_type"]
            return RecordedReply(
                self.transcript.status, self.transcript.body, {"Content-Type": content_type}
            )
        return RecordedReply(404, b'{"detail":"Not Found"}', {"Content-Type": "application/json"})


@pytest.fixture
async def server() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(_VllmResponses()) as replaying:
        yield replaying


async def test_chat_over_the_responses_api(
    server: ReplayServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code = await _main("chat", "--base-url", server.base_url, "--api", "responses", "weather?")
    assert code == 0
    assert [r.path for r in server.requests if r.method == "POST"] == ["/v1/responses"]
    body = json.loads(server.requests[-1].body)
    assert body["input"][0]["role"] == "user" and body["stream"] is True
    assert 'tool call: get_weather({"city": "Paris", "unit": "celsius"})' in capsys.readouterr().out


async def test_record_over_the_responses_api_writes_a_replayable_transcript(
    server: ReplayServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["record", "--base-url", server.base_url, "--api", "responses"]
    argv += ["--name", "tool-call", "--transcripts", str(tmp_path), "weather?"]
    # The tool the recorded call names is offered (a call naming none carries ``error``).
    argv += ["--tools", json.dumps([{"type": "function", "function": {"name": "get_weather"}}])]
    assert await _main(*argv) == 0
    (sidecar_path,) = tmp_path.glob("*/captured--cli--responses--tool-call.json")
    sidecar = json.loads(sidecar_path.read_text())
    assert sidecar["api"] == "responses"
    assert sidecar["request"]["input"][0]["role"] == "user"
    captured = Transcript.load(default_root() / RESPONSES).expected
    assert sidecar["expected"]["tool_calls"] == captured["tool_calls"]
    assert sidecar["expected"]["finish_reason"] == "tool_calls"
    assert sidecar_path.with_suffix(".sse").read_bytes() == _VllmResponses().transcript.body

    capsys.readouterr()
    assert await _main("replay", str(sidecar_path)) == 0
    assert json.loads(capsys.readouterr().out)["tool_calls"] == captured["tool_calls"]


def test_replay_reads_the_api_from_the_sidecar(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(default_root() / RESPONSES)]) == 0
    printed = json.loads(capsys.readouterr().out)
    expected = Transcript.load(default_root() / RESPONSES).expected
    assert printed == expected


def test_replay_of_an_error_without_partial_prints_every_field(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = default_root() / "vllm/captured--plain--error-unknown-model.json"
    assert main(["replay", str(path)]) == 1
    printed = json.loads(capsys.readouterr().out)
    assert printed["error"]["class"] == "ModelNotFoundError"
    assert {"text", "reasoning", "tool_calls", "finish_reason", "usage"} <= printed.keys()

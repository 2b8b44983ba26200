"""``providers.replay.recording`` against a live llama-server: what ``oaicompat record`` and
``--rerecord-transcripts`` write, checked field by field (the re-record run itself is opt-in).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from providers.replay.recording import record_exchange
from providers.replay.transcripts import Transcript, replay_bytes
from tests.integration.llama_server import forcing_grammar


async def build_info(base_url: str) -> str:
    async with httpx.AsyncClient() as http:
        props = (await http.get(f"{base_url}/props")).json()
    return str(props["build_info"])


async def test_a_recorded_stream_is_a_transcript_with_provenance(
    plain_server: Any, tmp_path: Path
) -> None:
    request = {
        "model": "anything",
        "messages": [{"role": "user", "content": "Say it."}],
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 12,
        "grammar": forcing_grammar("Recorded."),
    }
    (tmp_path / "llamacpp").mkdir()
    stale = tmp_path / "llamacpp" / "captured--test--stream.raw"  # an earlier, non-stream take
    stale.write_bytes(b"{}")
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    recording = await record_exchange(
        plain_server.base_url,
        request,
        root=tmp_path,
        scenario="captured--test--stream",
        flags=["--jinja"],
        source="tests/integration/test_llamacpp_recording.py",
        notes="A test recording.",
        extra={"recovery": {}},
        recorded_at=when,
    )

    assert recording.body_path == tmp_path / "llamacpp" / "captured--test--stream.sse"
    assert not stale.exists()
    transcript = Transcript.load(recording.sidecar_path)
    assert transcript.body == recording.exchange.body  # byte for byte, as received
    assert transcript.body.rstrip().endswith(b"data: [DONE]")
    provenance = transcript.sidecar["provenance"]
    version = await build_info(plain_server.base_url)
    assert provenance["kind"] == "captured"
    assert provenance["server"] == f"llamacpp {version}"
    assert provenance["version"] == version
    assert provenance["flags"] == ["--jinja"]
    assert provenance["recorded_at"] == "2026-01-02T03:04:05+00:00"
    assert provenance["notes"].endswith("A test recording.")
    assert str(plain_server.port) not in provenance["notes"]  # no per-run host or port
    assert transcript.request == request
    assert transcript.sidecar["response"] == {
        "status": 200,
        "content_type": "text/event-stream",
        "headers": {"Server": "llama.cpp", "Content-Type": "text/event-stream"},
    }
    assert list(transcript.sidecar)[-1] == "recovery"
    expected = transcript.expected
    assert (expected["text"], expected["finish_reason"], expected["error"]) == (
        "Recorded.",
        "stop",
        None,
    )
    replayed = await replay_bytes(
        200, transcript.body, "text/event-stream", streaming=True, backend="llamacpp"
    )
    assert replayed == expected


async def test_an_error_answer_is_recorded_not_raised_with_the_full_expected_shape(
    plain_server: Any, tmp_path: Path
) -> None:
    request = "{not json"  # sent verbatim: llama.cpp answers 400
    recording = await record_exchange(
        plain_server.base_url, request, root=tmp_path, scenario="captured--test--bad-json"
    )
    transcript = Transcript.load(recording.sidecar_path)
    assert recording.body_path.suffix == ".raw"
    assert transcript.sidecar["request"] == "{not json"
    assert transcript.status == 400
    assert transcript.sidecar["provenance"]["flags"] == []
    assert "Server flags unknown." in transcript.sidecar["provenance"]["notes"]
    assert transcript.expected == {
        "text": "",
        "reasoning": "",
        "tool_calls": [],
        "finish_reason": None,
        "usage": None,
        "response_id": None,
        "model_id": None,
        "stop_sequence": None,
        "error": {"class": "InvalidRequestError", "status": 400},
    }

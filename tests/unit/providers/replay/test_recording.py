"""The recorder keeps the client's reading out of the committed transcripts.

A transcript whose ``expected`` is the client's own output can only catch change, never error,
so recording into the repository's ``transcripts/`` is refused unless ``expected`` comes from a
reader of the body that does not use the client.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from providers.replay.recording import CLIENT_READING, record_exchange
from providers.replay.transcripts import default_root
from tools.import_transcripts import expected_for

BODY = (
    b'data: {"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n'
    b'data: {"id":"c1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n"
)
REQUEST = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}


class FakeVllm:
    """Answers the detector's probes as vLLM does and the chat request with ``BODY``."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.url.path == "/v1/models":
            model = {"id": "m", "object": "model", "owned_by": "vllm", "max_model_len": 4096}
            return httpx.Response(200, json={"object": "list", "data": [model]})
        if request.url.path == "/v1/chat/completions":
            headers = {"content-type": "text/event-stream"}
            return httpx.Response(200, stream=httpx.ByteStream(BODY), headers=headers)
        return httpx.Response(404, json={"detail": "Not Found"})


async def record(server: FakeVllm, root: Path, **options: Any) -> dict[str, Any]:
    async with httpx.AsyncClient(transport=httpx.MockTransport(server)) as http:
        recording = await record_exchange(
            "http://vllm.test/v1", REQUEST, root=root, scenario="captured--t--s",
            http_client=http, **options,
        )  # fmt: skip
    return dict(recording.sidecar)


@pytest.mark.parametrize("where", [(), ("vllm",), ("vllm", "deeper")])
async def test_the_committed_transcripts_refuse_the_clients_reading(where: tuple[str, ...]) -> None:
    server = FakeVllm()
    root = default_root().joinpath(*where)

    with pytest.raises(ValueError, match="committed transcripts") as raised:
        await record(server, root)

    assert "reader=" in str(raised.value)
    assert server.requests == []  # refused before anything was sent


async def test_a_reader_writes_expected_and_says_so_in_the_provenance(tmp_path: Path) -> None:
    def reader(body: bytes, status: int, is_sse: bool) -> dict[str, Any]:
        return {**expected_for(body, status, is_sse), "text": f"read {len(body)} bytes"}

    sidecar = await record(FakeVllm(), tmp_path, reader=reader)

    assert sidecar["expected"]["text"] == f"read {len(BODY)} bytes"
    assert sidecar["expected"]["finish_reason"] == "stop"
    notes = sidecar["provenance"]["notes"]
    assert "reader" in notes and "not by the client" in notes
    assert CLIENT_READING not in notes
    written = json.loads((tmp_path / "vllm" / "captured--t--s.json").read_text("utf-8"))
    assert written["expected"] == sidecar["expected"]


async def test_elsewhere_the_clients_reading_is_recorded_and_flagged(tmp_path: Path) -> None:
    sidecar = await record(FakeVllm(), tmp_path)

    assert sidecar["expected"]["text"] == "Hi"
    assert sidecar["expected"]["finish_reason"] == "stop"
    assert CLIENT_READING in sidecar["provenance"]["notes"]

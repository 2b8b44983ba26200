"""The gateway benchmark's pieces on tiny runs (no LiteLLM): they run, and their checks bite.

No timing is asserted. The backend streams what it says, the load generator notices a wrong
text or a missing usage chunk, the CPU of a process tree includes a grandchild's, the figures
(ratio, added TTFT, last start) come from the measurements, and the gateway target is wired
to a real ``oaicompat serve``.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.gateway_backend import MODEL_ID, Pacing, expected_text, frames_for
from benchmarks.gateway_client import (
    Endpoint,
    LoadResult,
    StreamRecord,
    chat_body,
    run_load,
    stream_once,
)
from benchmarks.gateway_stats import (
    PhaseResult,
    bar_lines,
    percentile,
    render,
    rows,
    tree_cpu_seconds,
)
from benchmarks.gateway_targets import API_KEY, Backend, find_litellm, gateway_proxy

FAST = Pacing(first_delay=0.01, pace=0.002, per_piece=5)


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Backend]:
    with Backend(FAST, 50, tmp_path_factory.mktemp("backend")) as running:
        yield running


def _unchunk(data: bytes) -> bytes:
    """The body of a chunked HTTP/1.1 message (after its head)."""
    body = b""
    while True:
        size_line, _, data = data.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return body
        body += data[:size]
        assert data[size : size + 2] == b"\r\n"
        data = data[size + 2 :]


@pytest.mark.parametrize("usage", [True, False])
def test_the_backend_frames_a_vllm_stream_with_usage_only_when_asked(usage: bool) -> None:
    frames = frames_for(12, usage, per_piece=5)
    head, _, rest = b"".join(frames.pieces).partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head
    events = _unchunk(rest).split(b"\n\n")[:-1]
    assert events[-1] == b"data: [DONE]" and len(events) == frames.events
    chunks = [json.loads(e[6:]) for e in events[:-1]]
    assert [bool(c.get("usage")) for c in chunks].count(True) == (1 if usage else 0)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == frames.text == expected_text(12)
    assert len(frames.pieces) == 1 + math.ceil((frames.events - 1) / 5)  # role chunk alone first


async def test_concurrent_streams_arrive_complete_and_are_timed(backend: Backend) -> None:
    backend.arrivals()
    result = await run_load(Endpoint(backend.port), MODEL_ID, streams=20, chunks=30)
    assert [r.error for r in result.records] == [None] * 20
    assert {r.chunks for r in result.records} == {30}  # max_tokens sets the length
    assert all(r.ttft is not None and 0 < r.ttft <= r.total for r in result.records)
    arrivals = backend.arrivals()
    assert len(arrivals) == 20 and all(a >= result.started for a in arrivals)
    assert backend.arrivals() == []  # each read starts a new list


async def test_a_wrong_text_and_a_missing_usage_chunk_fail_a_stream(backend: Backend) -> None:
    endpoint = Endpoint(backend.port)
    right = await stream_once(endpoint, chat_body(MODEL_ID, 10), expected_text(10))
    assert right.error is None
    wrong = await stream_once(endpoint, chat_body(MODEL_ID, 10), expected_text(10) + "!")
    assert wrong.error is not None and wrong.error.startswith("wrong text")
    body = json.dumps({"model": MODEL_ID, "stream": True, "max_tokens": 10, "messages": []})
    no_usage = await stream_once(endpoint, body.encode(), expected_text(10))
    assert no_usage.error == "no usage chunk although the request asked for one"
    refused = await stream_once(Endpoint(backend.port, path="/nowhere"), b"{}", "")
    assert refused.error is not None and refused.error.startswith("HTTP 404")


def test_percentiles_interpolate_between_ranks() -> None:
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0], 0) == 1.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 100) == 4.0
    assert percentile([0.0, 10.0], 99) == pytest.approx(9.9)
    assert math.isnan(percentile([], 50))


_BURN = (
    "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.4: pass\n"
    "import sys\nsys.stdin.read()"
)


def test_the_cpu_of_a_process_tree_counts_its_grandchildren() -> None:
    spawn = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {_BURN!r}])"
    parent = subprocess.Popen([sys.executable, "-c", spawn], stdin=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 20
        seen = 0.0
        while time.monotonic() < deadline and seen < 0.35:
            seen = tree_cpu_seconds(parent.pid)
            time.sleep(0.05)
        assert seen >= 0.35  # the parent alone idles in subprocess.run
    finally:
        assert parent.stdin is not None
        parent.stdin.close()
        parent.wait(timeout=10)


def _phase(target: str, ttfts: list[float], cpu: float | None, last: float) -> PhaseResult:
    records = [StreamRecord(sent=100.0, ttft=t, total=2.0, chunks=10) for t in ttfts]
    load = LoadResult(started=100.0, wall=2.0, cpu=0.1, records=records)
    return PhaseResult(target, load, 10, cpu, 0.01, arrivals=[100.0, 100.0 + 2.0 * last])


def test_ratio_added_ttft_and_last_start_come_from_the_phases() -> None:
    table = {
        row.target: row
        for row in rows(
            [
                _phase("direct", [0.100, 0.100, 0.200], None, 0.1),
                _phase("gateway", [0.101, 0.101, 0.300], 0.003, 0.2),  # 100 µs per chunk
                _phase("litellm", [0.150, 0.150, 0.900], 0.030, 0.5),
            ]
        )
    }
    gateway = table["gateway"]
    assert gateway.cpu_us_per_chunk == pytest.approx(100.0)
    assert gateway.ratio == pytest.approx(0.1)
    assert gateway.added_p50 == pytest.approx(0.001)
    assert gateway.last_start == pytest.approx(0.2)
    assert gateway.arrival_p50 == pytest.approx(0.2)  # the median of 0 s and 0.4 s
    assert table["direct"].cpu_us_per_chunk is None and table["direct"].added_p50 is None
    rendered = render(list(table.values())).splitlines()
    assert len({line.count("|") for line in rendered}) == 1  # every row has every column
    assert rendered[3].startswith("| gateway | 3/3 | 100.0 | 0.100 | 101.0 |")
    lines = bar_lines(list(table.values()))
    assert [line.split()[-1] for line in lines] == ["PASS", "PASS", "PASS"]
    slow = rows([_phase("direct", [0.1], None, 0.1), _phase("gateway", [0.2], 0.003, 0.9)])
    assert [line.split()[-1] for line in bar_lines(slow)] == ["n/a", "FAIL", "FAIL"]


def test_an_absent_litellm_is_reported_as_absent(tmp_path: Path) -> None:
    assert find_litellm(str(tmp_path / "no-such-litellm")) is None


async def test_the_gateway_target_streams_through_oaicompat_serve(
    backend: Backend, tmp_path: Path
) -> None:
    pytest.importorskip("uvicorn")
    proxy = gateway_proxy(tmp_path, backend.url)
    proxy.start(tmp_path)
    try:
        proxy.wait_ready(timeout=60)
        endpoint = Endpoint(proxy.port, api_key=API_KEY)
        result = await run_load(endpoint, proxy.model, streams=5, chunks=20)
        assert [r.error for r in result.records] == [None] * 5
        assert tree_cpu_seconds(proxy.pid) > 0
        unauthorised = await stream_once(Endpoint(proxy.port), chat_body("main"), "")
        assert unauthorised.error is not None and unauthorised.error.startswith("HTTP 401")
    finally:
        proxy.stop()

"""The benchmark machinery on tiny streams: it runs, and its correctness check bites.

No timing is asserted: these tests prove that the generated streams mirror the captures'
shapes, that every registered client agrees on every scenario, and that a client producing a
wrong outcome is reported, so a benchmark run cannot pass on wrong answers.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from benchmarks.clients import ClientSpec, StreamFn, default_clients
from benchmarks.concurrency import median_run, run_streams
from benchmarks.cpu import describe_mismatch, measure_cpu
from benchmarks.report import cpu_table, evaluate_targets, render
from benchmarks.scenarios import BACKENDS, KINDS, Outcome, Scenario, generate
from benchmarks.sse_server import ServerProcess, encode_response
from benchmarks.suite import Options, run_suite

N = 50
SCENARIOS = [Scenario(backend, kind, N) for kind in KINDS for backend in BACKENDS]
TRANSCRIPTS = Path(__file__).resolve().parents[2] / "transcripts"


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with ServerProcess() as base:
        yield base


def runnable() -> list[ClientSpec]:
    return [spec for spec in default_clients().values() if spec.session is not None]


def _shapes(events: list[bytes]) -> set[tuple[tuple[str, ...], ...]]:
    """Key sets of the chunk, its choice and its delta: the shape, without the values."""
    shapes: set[tuple[tuple[str, ...], ...]] = set()
    for event in events:
        if not event.startswith(b"data: {"):
            continue
        chunk = json.loads(event[6:])
        choice = chunk["choices"][0] if chunk["choices"] else {}
        shapes.add((tuple(chunk), tuple(choice), tuple(choice.get("delta", {}))))
    return shapes


@pytest.mark.parametrize(
    ("scenario", "capture"),
    [
        (Scenario("vllm", "text", N), "vllm/captured--plain--stream-text.sse"),
        (Scenario("vllm", "reasoning", N), "vllm/captured--qwen3-hermes--stream-reasoning.sse"),
        (Scenario("vllm", "tools", N), "vllm/captured--qwen3-hermes--stream-tool-call.sse"),
        (Scenario("sglang", "text", N), "sglang/captured--plain--stream-text.sse"),
        (Scenario("sglang", "reasoning", N), "sglang/captured--qwen3-qwen25--stream-reasoning.sse"),
        (Scenario("sglang", "tools", N), "sglang/captured--qwen3-qwen25--stream-tool-call.sse"),
        (
            Scenario("llamacpp", "reasoning", N),
            "llamacpp/captured--qwen3-reasoning-deepseek--stream-reasoning.sse",
        ),
        (
            Scenario("llamacpp", "text-tool-call-in-content", N),
            "llamacpp/captured--qwen25-plain--stream-text-tool-call-in-content.sse",
        ),
    ],
    ids=lambda value: value.id if isinstance(value, Scenario) else "",
)
def test_generated_chunks_have_the_captured_shapes(scenario: Scenario, capture: str) -> None:
    path = TRANSCRIPTS / capture
    if not path.exists():
        pytest.skip(f"{capture} is not in this checkout")
    captured = path.read_bytes().replace(b"\r\n", b"\n").split(b"\n\n")
    generated = generate(scenario).events
    assert _shapes(generated) == _shapes(captured)
    assert generated[-1] == b"data: [DONE]\n\n"


def test_generation_is_deterministic_and_sized() -> None:
    for scenario in SCENARIOS:
        first, second = generate(scenario), generate(scenario)
        assert first.events == second.events
        assert len(first.events) >= N
    tools = generate(Scenario("sglang", "tools", N))
    assert json.loads(tools.wire.tool_arguments[0])["city"] == "Paris"
    in_text = generate(Scenario("vllm", "text-tool-call-in-content", N))
    assert in_text.wire.text.startswith("<tool_call>") and not in_text.wire.tool_arguments
    assert in_text.recovered.text == "" and len(in_text.recovered.tool_arguments) == 1


def test_chunked_encoding_frames_the_body_exactly() -> None:
    events = generate(Scenario("llamacpp", "text", N)).events
    blocks = encode_response(events, block_bytes=500)
    wire = b"".join(blocks)
    head, _, body = wire.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head
    decoded = b""
    while True:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        decoded, body = decoded + body[:size], body[size + 2 :]
    assert decoded == b"".join(events)


def test_mismatch_descriptions() -> None:
    right = Outcome("abc", "r", ('{"a": 1}',))
    assert describe_mismatch(right, right) is None
    assert describe_mismatch(right, Outcome("abc", "r", ('{"a":1}',))) is None  # same JSON
    assert "text differs at 2" in (
        describe_mismatch(right, Outcome("abX", "r", right.tool_arguments)) or ""
    )
    assert "reasoning" in (describe_mismatch(right, Outcome("abc", "", ('{"a": 1}',))) or "")
    assert "tool call" in (describe_mismatch(right, Outcome("abc", "r", ())) or "")
    assert "arguments differ" in (describe_mismatch(right, Outcome("abc", "r", ("{",))) or "")


async def test_every_client_agrees_on_every_scenario(server: str) -> None:
    specs = runnable()
    assert [spec.name for spec in specs][:2] == ["floor", "oaicompat"]
    result = await measure_cpu(specs, SCENARIOS, server, runs=1)
    assert result.mismatches == []
    table = cpu_table(result, specs)
    assert set(table) == {s.id for s in SCENARIOS}
    for row in table.values():
        assert all(row[spec.name]["us_per_chunk"] > 0 for spec in specs)


def _wrong(spec: ClientSpec) -> ClientSpec:
    """``spec`` with its text losing the last character: the check must notice."""
    assert spec.session is not None
    inner = spec.session

    @asynccontextmanager
    async def session(base: str, max_connections: int) -> AsyncIterator[StreamFn]:
        async with inner(base, max_connections) as stream:

            async def wrong(scenario: Scenario) -> Outcome:
                outcome = await stream(scenario)
                return replace(outcome, text=outcome.text[:-1])

            yield wrong

    return replace(spec, name="wrong", label="wrong client", session=session)


async def test_a_wrong_client_is_detected(server: str) -> None:
    specs = default_clients()
    wrong = _wrong(specs["floor"])
    scenarios = [Scenario("vllm", "text", N), Scenario("sglang", "reasoning", N)]
    result = await measure_cpu([specs["floor"], wrong], scenarios, server, runs=1, warmup=False)
    assert {(m.client, m.scenario) for m in result.mismatches} == {
        ("wrong", s.id) for s in scenarios
    }
    assert all("text differs" in m.detail for m in result.mismatches)


async def test_recovering_client_is_held_to_the_recovered_outcome(server: str) -> None:
    """A client claiming to recover text tool calls but not doing it fails that scenario."""
    floor = default_clients()["floor"]
    pretender = replace(floor, name="pretender", recovers_text_tool_calls=True)
    scenarios = [Scenario("vllm", "text", N), Scenario("vllm", "text-tool-call-in-content", N)]
    result = await measure_cpu([floor, pretender], scenarios, server, runs=1, warmup=False)
    assert [(m.client, m.scenario) for m in result.mismatches] == [
        ("pretender", "vllm/text-tool-call-in-content-50")
    ]


async def test_concurrent_streams_all_complete(server: str) -> None:
    spec = default_clients()["oaicompat"]
    result = await run_streams(spec, server, Scenario("llamacpp", "tools", 20), streams=20)
    assert result.completed == 20 and result.errors == []


def test_the_median_run_stands_for_a_client_unless_one_failed() -> None:
    runs: list[dict[str, Any]] = [
        {"streams": 2, "completed": 2, "peak_rss_growth_kib": growth, "wall_seconds": float(i)}
        for i, growth in enumerate([900, 100, 500, 300])
    ]
    chosen = median_run(runs)
    assert chosen["peak_rss_growth_kib"] == 300  # the lower median of four
    assert chosen["wall_seconds"] == 3.0  # the figures of that one run, not mixed
    assert chosen["peak_rss_growth_samples_kib"] == [900, 100, 500, 300]
    assert chosen["runs"] == 4
    lost: list[dict[str, Any]] = [*runs, {"streams": 2, "completed": 1, "peak_rss_growth_kib": 50}]
    assert median_run(lost)["completed"] == 1
    crashed: list[dict[str, Any]] = [*runs, {"streams": 2, "completed": 0, "errors": ["exit 1"]}]
    assert median_run(crashed)["errors"] == ["exit 1"]


def test_targets_and_rendering_without_timing_claims() -> None:
    table = {
        "vllm/text-10": {"events": 14, "floor": {"us_per_chunk": 1.0, "ratio_to_floor": 1.0},
                         "oaicompat": {"us_per_chunk": 2.0, "ratio_to_floor": 2.0}},
    }  # fmt: skip
    concurrency = {
        "floor": {"streams": 2, "completed": 2, "peak_rss_growth_kib": 100},
        "oaicompat": {"streams": 2, "completed": 1, "peak_rss_growth_kib": 50},
    }
    imports = {"providers": {"cached_ms": 10.0}}
    targets = evaluate_targets(table, imports, concurrency, ["oaicompat"])
    verdicts = {t.name.split(" ")[0]: t.passed for t in targets}
    assert verdicts["text"] is False  # 2.0x > 1.5x
    assert verdicts["reasoning"] is None  # not measured
    assert verdicts["2"] is False  # one stream did not complete
    assert verdicts["cold"] is True
    assert all(t.issue_target for t in targets)


def test_a_reported_client_is_judged_against_the_same_limits_but_marked() -> None:
    table = {
        "vllm/text-10": {"events": 14, "floor": {"us_per_chunk": 1.0, "ratio_to_floor": 1.0},
                         "full": {"us_per_chunk": 1.2, "ratio_to_floor": 1.2},
                         "full_retry": {"us_per_chunk": 1.8, "ratio_to_floor": 1.8}},
    }  # fmt: skip
    targets = evaluate_targets(table, None, {}, ["full"], ["full_retry"])
    text = {t.client: t for t in targets if t.name.startswith("text CPU")}
    assert text["full"].passed is True and text["full"].issue_target
    assert text["full_retry"].passed is False and not text["full_retry"].issue_target
    assert "(reported, not an issue-9 target)" in render(
        {"meta": {"n": 1, "runs": 1, "python": "3", "cpus": 2, "quick": False},
         "cpu": table, "mismatches": []},
        runnable(), targets,
    )  # fmt: skip


def test_the_suite_runs_end_to_end_and_fails_on_a_wrong_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    options = Options(
        n=30,
        runs=1,
        kinds=["text", "tools"],
        backends=["llamacpp"],
        clients=["floor", "oaicompat"],
        streams=5,
        stream_n=10,
        concurrency_runs=2,
        imports=False,
        text_parser=False,
        pin=False,
        output=tmp_path / "run.json",
    )
    report, code = run_suite(options)
    assert code == 0 and report["mismatches"] == []
    assert json.loads((tmp_path / "run.json").read_text())["meta"]["n"] == 30
    assert len(report["concurrency"]["oaicompat"]["peak_rss_growth_samples_kib"]) == 2
    assert "Targets (issue 9)" in render(report, runnable()[:2], [])

    real = default_clients

    def with_wrong_oaicompat() -> dict[str, ClientSpec]:
        specs = real()
        specs["oaicompat"] = replace(_wrong(specs["oaicompat"]), name="oaicompat")
        return specs

    monkeypatch.setattr("benchmarks.suite.default_clients", with_wrong_oaicompat)
    options.concurrency = False
    report, code = run_suite(options)
    assert code == 1 and report["mismatches"]

"""The benchmark machinery on tiny streams: it runs, and its correctness check bites.

No timing is asserted: these tests prove that the generated streams mirror the captures'
shapes, that every registered client agrees on every scenario, and that a client producing a
wrong outcome is reported, so a benchmark run cannot pass on wrong answers.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack, asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from benchmarks.baseline import BaselineError, checkout, use_tree
from benchmarks.clients import (
    FLOORS,
    OUR_CLIENTS,
    POOL_CHECK,
    REFERENCE_FLOOR,
    ClientSpec,
    Revision,
    StreamFn,
    default_clients,
    reference_floor,
)
from benchmarks.concurrency import measure_in_subprocess, median_run, run_streams
from benchmarks.cpu import describe_mismatch, measure_cpu
from benchmarks.issue21 import issue21_lines
from benchmarks.remote import RemoteClients
from benchmarks.report import after_before, cpu_table, evaluate_targets, render
from benchmarks.scenarios import BACKENDS, KINDS, Outcome, Scenario, generate, grid
from benchmarks.sse_server import PACE_EVENTS, ServerProcess, encode_paced, encode_response, paced
from benchmarks.suite import Options, run_suite, select_clients

N = 50
SCENARIOS = grid(BACKENDS, KINDS, N)
TRANSCRIPTS = Path(__file__).resolve().parents[3] / "transcripts"


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


@pytest.mark.parametrize(
    ("scenario", "capture"),
    [
        (Scenario("sglang-tools", "text", N), "captured--qwen3-qwen25--stream-text-then-tool-call"),
        (
            Scenario("sglang-tools", "reasoning", N),
            "captured--qwen3-qwen25--stream-reasoning-then-tool-call",
        ),
    ],
    ids=lambda value: value.id if isinstance(value, Scenario) else "",
)
def test_sglang_with_tools_in_the_request_has_the_tool_parser_shape(
    scenario: Scenario, capture: str
) -> None:
    """Every content delta lists role, content and reasoning_content, and its chunk carries
    ``"usage": null``; the captures' tool-call deltas are ``sglang/tools``'s."""
    path = TRANSCRIPTS / "sglang" / f"{capture}.sse"
    if not path.exists():
        pytest.skip(f"{capture} is not in this checkout")
    captured = _shapes(path.read_bytes().replace(b"\r\n", b"\n").split(b"\n\n"))
    tool_deltas = {shape for shape in captured if "tool_calls" in shape[2]}
    generated = _shapes(generate(scenario).events)
    assert generated == captured - tool_deltas
    with_usage = ("id", "object", "created", "model", "choices", "usage")
    assert (with_usage, ("role", "content", "reasoning_content")) in {
        (chunk, delta) for chunk, _, delta in generated
    }
    assert tool_deltas <= _shapes(generate(Scenario("sglang", "tools", N)).events)
    assert Scenario.parse(scenario.id) == scenario and scenario.profile == "sglang"


def test_a_shape_streams_only_its_kinds() -> None:
    assert "sglang-tools/tools-50" not in {s.id for s in SCENARIOS}
    assert len(SCENARIOS) == len(BACKENDS) * len(KINDS) - 2
    with pytest.raises(ValueError, match="not a scenario id"):
        Scenario.parse("sglang-tools/tools-50")
    with pytest.raises(ValueError, match="does not stream"):
        generate(Scenario("sglang-tools", "text-tool-call-in-content", N))


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


def test_paced_mode_sends_the_head_alone_then_pieces_of_the_same_body() -> None:
    events = generate(Scenario("vllm", "text", N)).events
    blocks = encode_paced(events)
    assert blocks[0].endswith(b"\r\n\r\n") and b"data:" not in blocks[0]
    assert len(blocks) == 1 + -(-len(events) // PACE_EVENTS)
    assert all(block.count(b"data: ") <= PACE_EVENTS for block in blocks)
    assert _dechunk(b"".join(blocks)) == _dechunk(b"".join(encode_response(events)))


def test_chunked_encoding_frames_the_body_exactly() -> None:
    events = generate(Scenario("llamacpp", "text", N)).events
    blocks = encode_response(events, block_bytes=500)
    assert _dechunk(b"".join(blocks)) == b"".join(events)


def _dechunk(wire: bytes) -> bytes:
    head, _, body = wire.partition(b"\r\n\r\n")
    assert b"transfer-encoding: chunked" in head
    decoded = b""
    while True:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            break
        decoded, body = decoded + body[:size], body[size + 2 :]
    return decoded


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
    names = [spec.name for spec in specs]
    floors = [name for name in FLOORS if name in names]  # orjson is a `bench` extra
    assert names[: len(floors) + 1] == [*floors, "oaicompat"] and "floor_stdlib" in floors
    result = await measure_cpu(specs, SCENARIOS, server, runs=1)
    assert result.mismatches == []
    table = cpu_table(result, specs, reference_floor(specs).name)
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
    floor = default_clients()["floor_stdlib"]
    wrong = _wrong(floor)
    scenarios = [Scenario("vllm", "text", N), Scenario("sglang-tools", "reasoning", N)]
    result = await measure_cpu([floor, wrong], scenarios, server, runs=1, warmup=False)
    assert {(m.client, m.scenario) for m in result.mismatches} == {
        ("wrong", s.id) for s in scenarios
    }
    assert all("text differs" in m.detail for m in result.mismatches)


async def test_recovering_client_is_held_to_the_recovered_outcome(server: str) -> None:
    """A client claiming to recover text tool calls but not doing it fails that scenario."""
    floor = default_clients()["floor_stdlib"]
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


async def test_paced_streams_complete_and_their_arrivals_are_read(server: str) -> None:
    """The concurrency phase's setting: paced server, the library's client on its own pool."""
    spec = default_clients()["full_retry"]
    assert spec.concurrency_session is not None  # not the session that borrows a pool
    result = await run_streams(spec, paced(server), Scenario("vllm", "text", 30), streams=20)
    assert result.completed == 20 and result.errors == []
    assert result.last_arrival_fraction is not None and 0 <= result.last_arrival_fraction < 1


def test_the_arrival_bar_and_its_check_can_each_fail() -> None:
    def verdicts(floor: float, ours: float, check: float) -> list[str]:
        runs = {REFERENCE_FLOOR: floor, "oaicompat": ours, "full_retry": ours, POOL_CHECK: check}
        report = {"concurrency": {k: {"last_arrival_fraction": v} for k, v in runs.items()}}
        lines = issue21_lines(report, REFERENCE_FLOOR)
        return [line.split()[0] for line in lines if "last request" in line]

    assert verdicts(0.2, 0.3, 0.6) == ["PASS"] * 4
    assert verdicts(0.2, 0.6, 0.6) == ["PASS", "FAIL", "FAIL", "PASS"]
    assert verdicts(0.2, 0.3, 0.3)[-1] == "FAIL"  # a queueing pool that reads early: no measure


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


_FLOOR_CELL = {"us_per_chunk": 1.0, "ratio_to_floor": 1.0}


def test_targets_and_rendering_without_timing_claims() -> None:
    table = {
        "vllm/text-10": {"events": 14, REFERENCE_FLOOR: _FLOOR_CELL,
                         "oaicompat": {"us_per_chunk": 2.0, "ratio_to_floor": 2.0}},
    }  # fmt: skip
    concurrency = {
        REFERENCE_FLOOR: {"streams": 2, "completed": 2, "peak_rss_growth_kib": 100},
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
        "vllm/text-10": {"events": 14, REFERENCE_FLOOR: _FLOOR_CELL,
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
        clients=["oaicompat"],
        streams=5,
        stream_n=10,
        concurrency_runs=2,
        paced=False,  # (covered by the test of run_streams: here a second a process)
        imports=False,
        text_parser=False,
        pin=False,
        output=tmp_path / "run.json",
    )
    report, code = run_suite(options)
    assert code == 0 and report["mismatches"] == []
    assert json.loads((tmp_path / "run.json").read_text())["meta"]["n"] == 30
    assert len(report["concurrency"]["oaicompat"]["peak_rss_growth_samples_kib"]) == 2
    assert report["concurrency"][POOL_CHECK]["completed"] == 5  # the arrival check's row
    assert "floor_stdlib" in report["cpu"]["llamacpp/text-30"]  # the floors are always measured
    assert report["after_before"] == {}
    assert "Targets (issue 9;" in render(report, runnable()[:2], [])

    real = default_clients

    def with_wrong_oaicompat() -> dict[str, ClientSpec]:
        specs = real()
        specs["oaicompat"] = replace(_wrong(specs["oaicompat"]), name="oaicompat")
        return specs

    monkeypatch.setattr("benchmarks.suite.default_clients", with_wrong_oaicompat)
    options.concurrency = False
    report, code = run_suite(options)
    assert code == 1 and report["mismatches"]


# ---- --baseline: another revision's library, in the same run ------------------------------------


def test_each_baseline_twin_follows_its_client() -> None:
    registry = default_clients()
    revision = Revision("abc1234", "a" * 40, "abc1234", Path("/nonexistent"))
    names = [spec.name for spec in select_clients(registry, ["full"], revision)]
    floors = [name for name in FLOORS if registry[name].session is not None]
    assert names[-2:] == ["full", "full@abc1234"]
    assert names[: len(FLOORS)] == list(FLOORS)  # both floors, whatever was chosen
    everything = select_clients(registry, None, revision)
    twins = [spec for spec in everything if spec.revision is not None]
    assert [spec.registry_name for spec in twins] == list(OUR_CLIENTS)
    assert all(spec.label.endswith(" @abc1234") for spec in twins)
    assert reference_floor(everything).name == floors[0]


def test_the_stdlib_floor_stands_in_without_orjson() -> None:
    registry = default_clients()
    registry[REFERENCE_FLOOR] = replace(registry[REFERENCE_FLOOR], session=None)
    assert reference_floor(registry.values()).name == "floor_stdlib"


def test_after_before_divides_each_client_by_its_baseline_row() -> None:
    revision = Revision("old", "b" * 40, "old", Path("/nonexistent"))
    client = default_clients()["oaicompat"]
    specs = [client, client.at(revision)]
    medians = {
        "vllm/text-10": (3.0, 4.0),
        "sglang/text-10": (1.0, 2.0),
        "vllm/tools-10": (5.0, 5.0),
    }
    table = {
        scenario_id: {"oaicompat": {"us_per_chunk": now}, "oaicompat@old": {"us_per_chunk": old}}
        for scenario_id, (now, old) in medians.items()
    }
    ratios = after_before(table, specs)["oaicompat"]
    assert ratios["scenarios"] == {
        "vllm/text-10": 0.75,
        "sglang/text-10": 0.5,
        "vllm/tools-10": 1.0,
    }
    assert ratios["pooled"] == {"text": round(4 / 6, 3), "tools": 1.0}
    assert ratios["baseline"] == "oaicompat@old" and ratios["revision"] == "old"


def test_an_unknown_baseline_is_a_usage_error() -> None:
    with pytest.raises(BaselineError, match="not a commit"), checkout("no-such-revision-xyz"):
        pass


def test_a_measuring_process_refuses_a_library_it_already_imported() -> None:
    import providers

    assert providers.__file__
    with pytest.raises(RuntimeError, match="before the baseline tree"):
        use_tree("/nonexistent")


async def test_a_baseline_revision_is_measured_from_its_own_tree(server: str) -> None:
    """HEAD extracted aside: the child imports that copy, and its rows pass the same checks."""
    with ExitStack() as stack:
        try:
            revision = stack.enter_context(checkout("HEAD"))
        except BaselineError:
            pytest.skip("not a git checkout")
        registry = default_clients()
        scenario = Scenario("sglang-tools", "text", N)
        async with RemoteClients(revision, ["oaicompat"], server) as remote:
            assert Path(remote.providers_file).is_relative_to(revision.tree)
            cpu, wall, mismatch = await remote.stream("oaicompat", scenario)
            assert mismatch is None and cpu > 0 and wall > 0
        specs = [
            registry["floor_stdlib"],
            registry["oaicompat"],
            registry["oaicompat"].at(revision),
            registry["full"].at(revision),
        ]
        scenarios = [scenario, Scenario("vllm", "text-tool-call-in-content", N)]
        result = await measure_cpu(specs, scenarios, server, runs=1)
        assert result.mismatches == []
        assert all(result.cpu_seconds["full@HEAD"][s.id] for s in scenarios)
        run = measure_in_subprocess(specs[2], server, Scenario("vllm", "text", 10), streams=5)
        assert run["client"] == "oaicompat@HEAD" and run["completed"] == 5, run

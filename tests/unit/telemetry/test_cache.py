"""``CacheEvolution``: the per-turn table, n/a for what was not reported, the one-time hint."""

from __future__ import annotations

import json

from structlog.testing import capture_logs

from providers import ChatResponse, UsageDetails
from telemetry import (
    CLIENT_MEASURED,
    SERVER_REPORTED,
    CacheEvolution,
    CacheReportHint,
    ClientTimings,
    Measurement,
    RequestRecord,
    RequestTimings,
    ServerTimings,
    VllmTimingsExtractor,
)
from telemetry.events import CACHE_REPORT_UNAVAILABLE, SERVER_FLAG

CLIENT = ClientTimings(
    started=0.0,
    request_sent=0.0,
    response_headers=0.01,
    first_byte=0.02,
    first_token=0.05,
    last_token=0.15,
    end=0.2,
    substantive_updates=6,
)


def llamacpp_turn(cached: int, prompt_n: int, prompt_ms: float) -> RequestTimings:
    server = ServerTimings(
        "llamacpp",
        input_tokens=cached + prompt_n,
        output_tokens=6,
        cached_input_tokens=cached,
        prompt_n=prompt_n,
        prompt_ms=prompt_ms,
        predicted_per_second=50.0,
    )
    return RequestTimings("llamacpp", True, CLIENT, server)


def vllm_turn(cached: int | None) -> RequestTimings:
    flag = "--enable-prompt-tokens-details" if cached is None else None
    server = ServerTimings(
        "vllm",
        input_tokens=15,
        output_tokens=7,
        cached_input_tokens=cached,
        missing_cache_flag=flag,
    )
    return RequestTimings("vllm", True, CLIENT, server)


def test_turns_record_server_counts_and_client_times_apart() -> None:
    evolution = CacheEvolution()
    for cached, prompt_n, ms in ((5, 172, 25.6), (177, 18, 23.8), (195, 18, 23.7)):
        evolution.add(llamacpp_turn(cached, prompt_n, ms))
    turns = evolution.turns
    assert [t.turn for t in turns] == [1, 2, 3]
    assert [t.cached_tokens for t in turns] == [
        Measurement(5, "token", SERVER_REPORTED),
        Measurement(177, "token", SERVER_REPORTED),
        Measurement(195, "token", SERVER_REPORTED),
    ]
    assert [t.uncached_tokens.value for t in turns if t.uncached_tokens] == [172, 18, 18]
    first = turns[0]
    assert first.prompt_ms_server == Measurement(25.6, "ms", SERVER_REPORTED)
    assert first.ttft_ms_client is not None and first.ttft_ms_client.source == CLIENT_MEASURED
    assert first.output_tokens_per_second_server == Measurement(50.0, "token/s", SERVER_REPORTED)
    assert first.output_tokens_per_second_client is not None
    assert first.output_tokens_per_second_client.source == CLIENT_MEASURED


def test_text_table_shows_each_turn_and_the_source_legend() -> None:
    evolution = CacheEvolution()
    evolution.add(llamacpp_turn(5, 172, 25.6))
    evolution.add(llamacpp_turn(177, 18, 23.824))
    lines = evolution.render_text().splitlines()
    assert lines[0].split() == [
        "turn",
        "input",
        "cached",
        "uncached",
        "prompt_ms_server",
        "ttft_ms_client",
        "tok_s_server",
        "tok_s_client",
    ]
    assert lines[1].split()[:5] == ["1", "177", "5", "172", "25.60"]
    assert lines[2].split()[:5] == ["2", "195", "177", "18", "23.82"]
    assert "server_reported" in lines[3] and "client_measured" in lines[3]
    assert str(evolution) == evolution.render_text()


def test_json_has_value_and_source_per_cell() -> None:
    evolution = CacheEvolution()
    evolution.add(llamacpp_turn(5, 172, 25.6))
    data = json.loads(evolution.render_json())
    turn = data["turns"][0]
    assert turn["turn"] == 1 and turn["backend"] == "llamacpp"
    assert turn["cached_tokens"] == {"value": 5, "unit": "token", "source": "server_reported"}
    assert turn["ttft_ms_client"]["source"] == "client_measured"
    assert data["notes"] == []


def test_unreported_cached_tokens_are_na_with_a_note_and_a_single_hint() -> None:
    evolution = CacheEvolution()
    with capture_logs() as logs:
        for _ in range(3):
            evolution.add(vllm_turn(None))
    hints = [e for e in logs if e["event"] == CACHE_REPORT_UNAVAILABLE]
    assert len(hints) == 1
    assert hints[0][SERVER_FLAG] == "--enable-prompt-tokens-details"
    assert hints[0]["log_level"] == "warning"
    assert all(t.cached_tokens is None and t.uncached_tokens is None for t in evolution.turns)
    text = evolution.render_text()
    row = text.splitlines()[1].split()
    assert row[:4] == ["1", "15", "n/a", "n/a"]
    assert " 0 " not in f" {' '.join(row)} "
    assert "cached tokens n/a: start vllm with --enable-prompt-tokens-details" in text
    data = evolution.to_json()
    assert data["turns"][0]["cached_tokens"] is None
    assert data["notes"] == ["cached tokens n/a: start vllm with --enable-prompt-tokens-details"]


def test_no_hint_when_the_server_reports_cached_tokens() -> None:
    evolution = CacheEvolution()
    with capture_logs() as logs:
        evolution.add(vllm_turn(16))
        evolution.add(vllm_turn(None))  # reported before: the flag is on, this is not it
    assert not [e for e in logs if e["event"] == CACHE_REPORT_UNAVAILABLE]


def test_a_shared_hint_logs_once_across_owners() -> None:
    hint = CacheReportHint()
    with capture_logs() as logs:
        CacheEvolution(cache_hint=hint).add(vllm_turn(None))
        CacheEvolution(cache_hint=hint).add(vllm_turn(None))
    assert len([e for e in logs if e["event"] == CACHE_REPORT_UNAVAILABLE]) == 1
    assert hint.logged


def test_a_response_without_request_timings_gives_the_server_columns() -> None:
    response = ChatResponse(
        usage=UsageDetails(input_token_count=15, output_token_count=7),
    )
    evolution = CacheEvolution(extractor=VllmTimingsExtractor())
    with capture_logs():
        turn = evolution.add(response)
    assert turn is not None
    assert turn.input_tokens == Measurement(15, "token", SERVER_REPORTED)
    assert turn.cached_tokens is None and turn.ttft_ms_client is None
    assert turn.missing_cache_flag == "--enable-prompt-tokens-details"


def test_failed_records_are_not_turns_and_nothing_reported_is_all_na() -> None:
    evolution = CacheEvolution()
    failed = RequestRecord("error", "vllm", True, vllm_turn(None))
    assert evolution.add(failed) is None
    empty = RequestTimings("vllm", False, CLIENT, None)
    turn = evolution.add(RequestRecord("ok", "vllm", False, empty))
    assert turn is not None and turn.turn == 1
    assert evolution.render_text().splitlines()[1].split()[1:4] == ["n/a", "n/a", "n/a"]

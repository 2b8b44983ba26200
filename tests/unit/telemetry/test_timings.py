"""``ClientTimings``/``ServerTimings``/``RequestTimings``: derived values and provenance."""

from __future__ import annotations

from providers import ChatResponse, ChatResponseUpdate
from telemetry import (
    CLIENT_MEASURED,
    REQUEST_TIMINGS,
    SERVER_REPORTED,
    ClientTimings,
    Measurement,
    RequestTimings,
    ServerTimings,
    request_timings,
)


def client(**overrides: float | int | None) -> ClientTimings:
    values: dict[str, float | int | None] = {
        "started": 9.9,
        "request_sent": 10.0,
        "response_headers": 10.1,
        "first_byte": 10.2,
        "first_token": 10.5,
        "last_token": 11.5,
        "end": 12.0,
        "substantive_updates": 5,
    }
    values.update(overrides)
    return ClientTimings(**values)  # type: ignore[arg-type]


def test_client_values_are_derived_from_the_instants() -> None:
    timings = client()
    assert round(timings.time_to_headers_ms or 0, 6) == 100.0
    assert round(timings.time_to_first_byte_ms or 0, 6) == 200.0
    assert round(timings.ttft_ms or 0, 6) == 500.0
    assert round(timings.e2e_ms, 6) == 2000.0
    assert round(timings.generation_ms or 0, 6) == 1000.0
    assert round(timings.mean_inter_token_gap_ms or 0, 6) == 250.0  # 1000 ms over 4 gaps


def test_non_streamed_timings_have_no_token_instants() -> None:
    timings = client(first_token=None, last_token=None, substantive_updates=0)
    assert timings.ttft_ms is None
    assert timings.generation_ms is None
    assert timings.mean_inter_token_gap_ms is None
    assert timings.e2e_ms > 0


def test_one_substantive_update_has_no_gap() -> None:
    assert client(last_token=10.5, substantive_updates=1).mean_inter_token_gap_ms is None


def test_client_tokens_per_second_uses_server_count_and_client_clock() -> None:
    server = ServerTimings("llamacpp", output_tokens=11)
    timings = RequestTimings("llamacpp", True, client(), server)
    # 10 tokens after the first one, over 1 s between first and last token.
    assert round(timings.output_tokens_per_second_client or 0, 6) == 10.0
    assert RequestTimings("vllm", True, client(), None).output_tokens_per_second_client is None
    one = RequestTimings("vllm", True, client(), ServerTimings("vllm", output_tokens=1))
    assert one.output_tokens_per_second_client is None


def test_every_measurement_name_states_its_source() -> None:
    server = ServerTimings(
        "llamacpp",
        output_tokens=6,
        cached_input_tokens=177,
        prompt_n=18,
        prompt_ms=23.824,
        prompt_per_second=755.54,
        predicted_n=6,
        predicted_ms=99.796,
        predicted_per_second=50.1,
        draft_n=4,
        draft_n_accepted=3,
    )
    measurements = RequestTimings("llamacpp", True, client(), server).measurements()
    assert measurements["prompt_ms_server"] == Measurement(23.824, "ms", SERVER_REPORTED)
    assert measurements["ttft_ms_client"].source == CLIENT_MEASURED
    assert measurements["draft_n_accepted_server"].value == 3
    for name, measurement in measurements.items():
        suffix = "_server" if measurement.source == SERVER_REPORTED else "_client"
        assert name.endswith(suffix), name
    # Token counts belong to usage, not to timings: never duplicated here.
    assert not any("cached" in name for name in measurements)


def test_server_values_are_kept_as_floats_without_scaling() -> None:
    server = ServerTimings("llamacpp", prompt_ms=23.824, predicted_per_second=50.102208505350916)
    values = RequestTimings("llamacpp", True, client(), server).to_dict()
    assert values["prompt_ms_server"] == 23.824
    assert values["predicted_per_second_server"] == 50.102208505350916


def test_server_derived_counts() -> None:
    server = ServerTimings(
        "llamacpp", input_tokens=195, cached_input_tokens=177, draft_n=8, draft_n_accepted=6
    )
    assert server.uncached_input_tokens == 18
    assert server.draft_acceptance_rate == 0.75
    assert ServerTimings("vllm", input_tokens=15).uncached_input_tokens is None
    assert ServerTimings("llamacpp").draft_acceptance_rate is None
    assert ServerTimings.source == SERVER_REPORTED
    assert ClientTimings.source == CLIENT_MEASURED


def test_request_timings_helper_reads_its_own_key_only() -> None:
    timings = RequestTimings("llamacpp", False, client())
    response = ChatResponse(additional_properties={REQUEST_TIMINGS: timings})
    assert request_timings(response) is timings
    assert str(REQUEST_TIMINGS) != "timings"  # llama.cpp's raw object keeps its key
    raw_only = ChatResponse(additional_properties={"timings": {"prompt_ms": 1.0}})
    assert request_timings(raw_only) is None
    assert request_timings(ChatResponseUpdate()) is None
    update = ChatResponseUpdate(additional_properties={REQUEST_TIMINGS: timings})
    assert request_timings(update) is timings

"""The scripted scheduler's own rules (no server): SGLang's finish rules and detokenizer offsets.

``ScriptedRequest`` is plain Python, so these run in the dev venv; the server tests then rely on
it emitting exactly what a model with SGLang's scheduler would.
"""

from __future__ import annotations

from tests.integration.rigs.sglang.fake_scheduler import ScriptedRequest

EOS = 151645
PROMPT = list(range(100, 115))  # 15 prompt ids


def scripted(
    script: list[int],
    *,
    max_new_tokens: int | None = 50,
    stop: frozenset[int] = frozenset({EOS}),
    stream: bool = True,
) -> ScriptedRequest:
    return ScriptedRequest(
        rid="r1",
        http_worker_ipc=None,
        prompt_ids=PROMPT,
        script_ids=script,
        end_id=EOS,
        stop_ids=stop,
        max_new_tokens=max_new_tokens,
        stream=stream,
        skip_special_tokens=True,
        spaces_between_special_tokens=True,
        no_stop_trim=False,
    )


def run_to_end(request: ScriptedRequest, limit: int = 100) -> None:
    for _ in range(limit):
        request.step()
        if request.finished_reason is not None:
            return
    raise AssertionError("never finished")


def test_the_script_then_end_of_sequence_finishes_on_the_matched_token() -> None:
    request = scripted([1, 2, 3])
    run_to_end(request)
    assert request.output_ids == [1, 2, 3, EOS]
    assert request.finished_reason == {"type": "stop", "matched": EOS}


def test_max_new_tokens_cuts_with_a_length_finish() -> None:
    request = scripted([1, 2, 3, 4, 5], max_new_tokens=3)
    run_to_end(request)
    assert request.output_ids == [1, 2, 3]
    assert request.finished_reason == {"type": "length", "length": 3}


def test_a_stop_token_in_the_script_ends_it_there_before_the_length() -> None:
    # SGLang checks stop tokens before the length: the 3rd token is both.
    request = scripted([1, 2, 7, 4], max_new_tokens=3, stop=frozenset({EOS, 7}))
    run_to_end(request)
    assert request.output_ids == [1, 2, 7]
    assert request.finished_reason == {"type": "stop", "matched": 7}


def test_without_stop_ids_the_end_id_repeats_until_the_length() -> None:
    request = scripted([1], max_new_tokens=4, stop=frozenset())  # ignore_eos
    run_to_end(request)
    assert request.output_ids == [1, EOS, EOS, EOS]
    assert request.finished_reason == {"type": "length", "length": 4}


def test_first_message_carries_five_prompt_ids_then_only_new_ids() -> None:
    request = scripted([1, 2, 3])
    request.step()
    assert request.take_delta() == ([1], [*PROMPT[-5:], 1], 5)
    request.step()
    request.step()
    assert request.take_delta() == ([2, 3], [2, 3], 5)


def test_streamed_requests_send_every_step_the_others_at_the_end() -> None:
    streamed, whole = scripted([1, 2], stream=True), scripted([1, 2], stream=False)
    for request in (streamed, whole):
        request.step()
    assert streamed.due(force_interval=50)
    assert not whole.due(force_interval=50)
    run_to_end(whole)
    assert whole.due(force_interval=50)

"""Stop sequences applied to the answer's text here when the server would apply them inside the
reasoning (issue 33 item 3): not sent, cut here, streamed and whole, never inside reasoning."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import respx
from structlog.testing import capture_logs

from providers import (
    ChatFinishReason,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    OpenAiCompatibleChatClient,
    TextContent,
    TextReasoningContent,
    UsageContent,
    UsageDetails,
)
from providers.abstractions.event_names import REQUEST_OPTION_ENFORCED
from providers.abstractions.reasoning_options import ReasoningEffort, ReasoningOptions
from providers.backends import profile_for
from providers.chat_completions.option_enforcement import Enforcement, enforcement_for
from providers.chat_completions.request import build_chat_request
from providers.chat_completions.stop_sequences import (
    STOP_SEQUENCE,
    StopMatcher,
    stop_sequence_response,
    stop_sequence_runs,
    stops_applied_here,
)

BASE = "http://llm.test"
CHAT = f"{BASE}/v1/chat/completions"
LLAMACPP = profile_for("llamacpp")
STOPS = ChatOptions(stop_sequences=["END", "\n\nUser:"])


# --- when -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("family", "model_id", "backend", "effort", "here"),
    [
        ("qwen3", None, "llamacpp", None, True),  # thinks by default
        (None, "Qwen/Qwen3-8B", "vllm", None, True),  # the family read from the model id
        ("deepseek-r1", None, "sglang", ReasoningEffort.HIGH, True),
        ("qwen3", None, "llamacpp", ReasoningEffort.NONE, False),  # thinking switched off
        ("qwen3-instruct-2507", None, "vllm", None, False),  # never thinks
        ("llama-3", None, "vllm", None, False),
        (None, None, "vllm", None, False),  # family unknown: sent as before
        ("glm", None, "vllm", None, True),  # thinks unless switched off
        ("granite", None, "vllm", None, False),  # thinks only when switched on
        ("granite", None, "vllm", ReasoningEffort.LOW, True),
        (None, "zai-org/GLM-4.6", "sglang", None, True),  # read from the model id
        ("qwen3", None, "openai", None, False),  # reasoning never comes back as text there
    ],
)
def test_where_stop_is_applied_here_instead_of_sent(
    family: str | None,
    model_id: str | None,
    backend: str,
    effort: ReasoningEffort | None,
    here: bool,
) -> None:
    options = ChatOptions(
        stop_sequences=["END"],
        model_id=model_id,
        reasoning=None if effort is None else ReasoningOptions(effort=effort),
    )
    profile = profile_for(backend)
    assert stops_applied_here(options, profile, family) == (("END",) if here else ())
    body = build_chat_request(
        [ChatMessage.user("hi")], options, model_id="m", stream=True, profile=profile, family=family
    )
    assert ("stop" not in body) is here
    plan = enforcement_for(options, profile, family=family)
    assert (plan is not None and plan.stop_sequences == ("END",)) is here


# --- the matcher ----------------------------------------------------------------------------


def test_a_stop_split_over_pieces_is_caught_and_only_a_possible_start_is_held() -> None:
    matcher = StopMatcher(("END", "\n\nUser:"))
    assert matcher.feed("Hello E") == ("Hello ", None)  # "E" may begin END
    assert matcher.held == "E"
    assert matcher.feed("N") == ("", None)
    assert matcher.feed("D and more") == ("", "END")  # nothing before it in the piece


def test_held_text_is_at_most_the_longest_stop_less_one() -> None:
    matcher = StopMatcher(("\n\nUser:",))
    text, stop = matcher.feed("a\n\nUser")
    assert (text, stop, matcher.held) == ("a", None, "\n\nUser")
    assert len(matcher.held) <= len("\n\nUser:") - 1
    assert matcher.feed("!") == ("\n\nUser!", None)


def test_the_stop_that_completes_first_wins() -> None:
    matcher = StopMatcher(("abcd", "bc"))
    assert matcher.feed("xabcd") == ("xa", "bc")


# --- streamed -------------------------------------------------------------------------------


def frame(delta: dict[str, Any], finish: str | None = None) -> bytes:
    chunk = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(chunk)}\n\n".encode()


class Pieces:
    """A response body read piece by piece, counting what the client pulled."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces
        self.pulled = 0

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for piece in self.pieces:
            self.pulled += 1
            yield piece


@respx.mock
async def test_a_streamed_stop_is_cut_here_not_inside_reasoning_and_ends_the_stream() -> None:
    body = Pieces(
        [
            frame({"role": "assistant", "content": ""}),
            frame({"reasoning_content": "I could write END here, "}),
            frame({"reasoning_content": "but it is thinking."}),
            frame({"content": "The answer E"}),
            frame({"content": "N"}),
            frame({"content": "D of it, and more"}),
            frame({"content": " never read"}),
            frame({}, "length"),
            b"data: [DONE]\n\n",
        ]
    )
    route = respx.post(CHAT).mock(
        return_value=httpx.Response(
            200, content=body, headers={"content-type": "text/event-stream"}
        )
    )
    async with OpenAiCompatibleChatClient(
        BASE, "m", backend="llamacpp", model_family="qwen3"
    ) as client:
        with capture_logs() as logs:
            updates = [u async for u in client.get_streaming_response("hi", STOPS)]
    assert "stop" not in json.loads(route.calls.last.request.content)
    response = ChatResponse.from_updates(updates)
    assert response.reasoning == "I could write END here, but it is thinking."
    assert response.text == "The answer "
    assert response.finish_reason == ChatFinishReason.STOP
    assert response.additional_properties[STOP_SEQUENCE] == "END"
    assert body.pulled == 6  # the stream ended at the stop: nothing after it was read
    (event,) = [e for e in logs if e["event"] == REQUEST_OPTION_ENFORCED]
    assert (event["option"], event["stop_sequence"]) == ("stop_sequences", "END")


async def runs_of(*runs: list[ChatResponseUpdate]) -> AsyncIterator[list[ChatResponseUpdate]]:
    for run in runs:
        yield run


PLAN = Enforcement("llamacpp", stop_sequences=("END",))


async def test_held_text_goes_out_at_the_finish_when_no_stop_completes() -> None:
    runs = stop_sequence_runs(
        runs_of(
            [ChatResponseUpdate([TextContent("Hello E")])],
            [ChatResponseUpdate([], finish_reason=ChatFinishReason.STOP)],
        ),
        PLAN,
    )
    updates = [u async for run in runs for u in run]
    assert [u.text for u in updates] == ["Hello ", "E"]
    assert updates[-1].finish_reason == ChatFinishReason.STOP
    assert STOP_SEQUENCE not in (updates[-1].additional_properties or {})


async def test_held_text_goes_out_at_the_end_of_a_stream_without_finish() -> None:
    runs = stop_sequence_runs(runs_of([ChatResponseUpdate([TextContent("Hello EN")])]), PLAN)
    updates = [u async for run in runs for u in run]
    assert "".join(u.text for u in updates) == "Hello EN"


async def test_reasoning_between_two_texts_keeps_them_apart_and_in_order() -> None:
    runs = stop_sequence_runs(
        runs_of(
            [ChatResponseUpdate([TextContent("a E")])],
            [ChatResponseUpdate([TextReasoningContent("thinking")])],
            [ChatResponseUpdate([TextContent("ND b")], finish_reason=ChatFinishReason.STOP)],
        ),
        PLAN,
    )
    updates = [u async for run in runs for u in run]
    response = ChatResponse.from_updates(updates)
    kinds = [(type(c).__name__, c.text) for c in response.messages[0].contents]  # type: ignore[attr-defined]
    assert kinds == [
        ("TextContent", "a E"),
        ("TextReasoningContent", "thinking"),
        ("TextContent", "ND b"),
    ]
    assert STOP_SEQUENCE not in response.additional_properties


async def test_the_run_holding_the_stop_is_cut_after_it() -> None:
    runs = stop_sequence_runs(
        runs_of([ChatResponseUpdate([TextContent(t)]) for t in ("x", "yEND", "z")]), PLAN
    )
    with capture_logs():
        updates = [u async for run in runs for u in run]
    assert [u.text for u in updates] == ["x", "y"]
    assert updates[-1].finish_reason == ChatFinishReason.STOP


# --- whole ----------------------------------------------------------------------------------


def test_a_whole_answer_is_cut_in_its_text_only() -> None:
    response = ChatResponse(
        [
            ChatMessage(
                ChatRole.ASSISTANT,
                [TextReasoningContent("think END"), TextContent("one E"), TextContent("ND two")],
            )
        ],
        finish_reason=ChatFinishReason.LENGTH,
    )
    with capture_logs() as logs:
        result = stop_sequence_response(response, PLAN)
    assert result.reasoning == "think END"
    assert result.text == "one "
    assert result.finish_reason == ChatFinishReason.STOP
    assert result.additional_properties[STOP_SEQUENCE] == "END"
    assert len(logs) == 1


@respx.mock
async def test_a_whole_answer_from_the_server_is_cut() -> None:
    body = {
        "id": "c2",
        "object": "chat.completion",
        "created": 2,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "reasoning_content": "END? no",
                    "content": "yes\n\nUser: more",
                },
                "finish_reason": "length",
            }
        ],
    }
    route = respx.post(CHAT).mock(return_value=httpx.Response(200, json=body))
    async with OpenAiCompatibleChatClient(BASE, "m", backend="vllm", model_family="qwq") as client:
        with capture_logs():
            response = await client.get_response("hi", STOPS)
    assert "stop" not in json.loads(route.calls.last.request.content)
    assert (response.reasoning, response.text) == ("END? no", "yes")
    assert response.additional_properties[STOP_SEQUENCE] == "\n\nUser:"
    assert response.finish_reason == ChatFinishReason.STOP


def test_an_answer_without_a_stop_is_unchanged() -> None:
    response = ChatResponse([ChatMessage(ChatRole.ASSISTANT, [TextContent("no stop here")])])
    result = stop_sequence_response(response, PLAN)
    assert result.text == "no stop here"
    assert STOP_SEQUENCE not in result.additional_properties


async def test_usage_in_the_stopping_update_is_kept_once() -> None:
    usage = UsageContent(UsageDetails(input_token_count=3, output_token_count=2))
    runs = stop_sequence_runs(
        runs_of([ChatResponseUpdate([usage, TextContent("aEND b"), usage])]), PLAN
    )
    with capture_logs():
        (update,) = [u async for run in runs for u in run]
    assert [type(c).__name__ for c in update.contents] == [
        "UsageContent",
        "TextContent",
        "UsageContent",
    ]
    assert update.text == "a"

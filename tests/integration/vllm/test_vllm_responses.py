"""Chat completions and the Responses API against the same real ``vllm serve`` (issue #11).

Two promises, checked on the real server rather than on captures (the shared bodies are in
``tests/integration/rigs/responses_checks.py``):

* The same model text gives the same ``ChatResponse`` through ``create_chat_client(api="chat")``
  and ``create_chat_client(api="responses")``, streamed and not: text, reasoning, tool calls
  (name and parsed arguments), finish reason and usage. The engine's prompt log shows that both
  requests fed the model the same prompt, so equal usage is a real check, not a coincidence.
* A tool loop (call → ``function_call_output`` → answer → a follow-up question) works with the
  response store off (the whole history as input items) and on (``previous_response_id``), and
  the model's prompts are the ones the chat client's run of the same loop gives it. vLLM's store
  rebuilds the earlier turns from ``message`` items only and drops the previous
  ``function_call`` (``RESPONSES_QUIRKS["vllm"]``), so the client sends the call again; one test
  pins that lossy replay itself, so a vLLM that fixes it is noticed.

Set ``qwen3-hermes-store`` (``VLLM_ENABLE_RESPONSES_API_STORE=1``) is the one extra server; the
rig pool runs the tests grouped by server set, so each set starts once.
"""

from __future__ import annotations

from contextlib import aclosing
from typing import ClassVar

import pytest

from providers import ChatOptions, ChatResponse, ModelNotFoundError
from providers.responses import ConversationMode
from tests.integration.rigs.responses_checks import (
    FIRST_TURNS,
    STREAMING,
    ResponsesRig,
    SentBodies,
    assert_cut_call_is_not_a_call,
    assert_falls_back_without_store,
    assert_same_prompts,
    assert_same_through_both_apis,
    assert_store_off_sends_the_whole_history,
    chat_prompts,
    context_overflow_errors,
    converse,
    error_of,
    input_types,
    pipeline,
    probe_store,
    run_store_on_loop,
    trim_replayed_answer,
    turns_after_question,
)
from tests.integration.rigs.scenarios import PROMPT, SCENARIOS
from tests.integration.rigs.vllm.server import EngineRecord, VllmServer


def usage_of(response: ChatResponse) -> tuple[int | None, ...]:
    usage = response.usage
    assert usage is not None, "no usage reported"
    return (
        usage.input_token_count,
        usage.output_token_count,
        usage.total_token_count,
        usage.reasoning_token_count or None,  # 0 and "not reported" say the same here
    )


class VllmResponses(ResponsesRig[EngineRecord]):
    """vLLM renders the same prompt on both routes and counts usage the same way (reasoning
    tokens included); its store does not replay a previous ``function_call``."""

    backend: ClassVar[str] = "vllm"
    replays_function_calls: ClassVar[bool] = False

    def assert_usage(
        self,
        chat: ChatResponse,
        chat_got: EngineRecord,
        responses: ChatResponse,
        responses_got: EngineRecord,
    ) -> None:
        assert usage_of(responses) == usage_of(chat)
        assert usage_of(responses)[:2] == (responses_got.prompt_tokens, responses_got.output_tokens)


VLLM = VllmResponses()


# --- the same ChatResponse through both APIs -----------------------------------------------------


@STREAMING
@pytest.mark.parametrize("name", ["text", "text-length"])
async def test_plain_text_is_the_same_through_both_apis(
    vllm_plain: VllmServer, name: str, streaming: bool
) -> None:
    """No parsers: the answer and a ``max_output_tokens`` cut (finish ``length``; vLLM's
    ``response.incomplete`` / ``incomplete_details.reason: max_output_tokens``)."""
    await assert_same_through_both_apis(VLLM, vllm_plain, SCENARIOS[name], streaming)


# --- the same typed errors -----------------------------------------------------------------------


@STREAMING
async def test_unknown_model_is_model_not_found_on_both_apis(
    vllm_plain: VllmServer, streaming: bool
) -> None:
    """vLLM checks the model name on both routes (404, plain JSON even for a stream), before the
    engine runs: ``ModelNotFoundError`` either way."""
    before = len(vllm_plain.prompts())
    errors = {}
    for api in ("chat", "responses"):
        async with aclosing(pipeline(VLLM, vllm_plain, api, model_id="no-such-model")) as client:
            errors[api] = await error_of(client, PROMPT, SCENARIOS["text"].options(), streaming)
    for error in errors.values():
        assert type(error) is ModelNotFoundError
        assert error.status == 404
        assert error.backend == "vllm"
        assert "no-such-model" in str(error)
    assert len(vllm_plain.prompts()) == before, "the engine must not have been reached"


@STREAMING
async def test_context_overflow_is_the_same_typed_error_on_both_apis(
    vllm_plain: VllmServer, streaming: bool
) -> None:
    """An input over ``--max-model-len``: 400 param ``input_tokens`` on both routes, read into
    ``ContextLengthExceededError`` with the same sizes."""
    chat, responses = await context_overflow_errors(
        VLLM,
        vllm_plain,
        "weather " * 5000,
        ChatOptions(max_output_tokens=4),
        context_window=vllm_plain.max_model_len,
        streaming=streaming,
    )
    assert responses.status == chat.status == 400


@STREAMING
@pytest.mark.parametrize(
    "name",
    [
        "reasoning",
        "tool-call",
        "parallel-tool-calls",
        "text-then-tool-call",
        "reasoning-then-tool-call",
    ],
)
async def test_hermes_and_qwen3_reasoning_are_the_same_through_both_apis(
    vllm_qwen3_hermes: VllmServer, name: str, streaming: bool
) -> None:
    """``--tool-call-parser hermes --reasoning-parser qwen3``: reasoning items and
    ``function_call`` items give what chat's ``reasoning`` and ``tool_calls`` give; a completed
    response with calls finishes ``tool_calls`` as chat does. The streamed ``"\\n\\n"`` message
    item between reasoning and a call is not text (scenario ``reasoning-then-tool-call``)."""
    _, responses = await assert_same_through_both_apis(
        VLLM, vllm_qwen3_hermes, SCENARIOS[name], streaming
    )
    usage = responses.usage
    assert usage is not None and usage.output_token_count is not None
    if SCENARIOS[name].expected_reasoning:  # vLLM counts reasoning tokens on both routes
        reasoning = usage.reasoning_token_count
        assert reasoning is not None and 0 < reasoning < usage.output_token_count


async def assert_vllm_cut_call(server: VllmServer, name: str, streaming: bool) -> None:
    """The shared cut-call promise; vLLM marks the cut ``function_call`` item ``status:
    "incomplete"`` (name only, ``arguments: ""``), which the client reads as a call with
    ``error``, and the engine stopped at the limit."""
    scenario = SCENARIOS[name]
    engine = await assert_cut_call_is_not_a_call(VLLM, server, scenario, streaming)
    assert engine.output_tokens == scenario.max_output_tokens
    assert engine.finish == "length"


@STREAMING
async def test_hermes_call_cut_by_max_output_tokens(
    vllm_qwen3_hermes: VllmServer, streaming: bool
) -> None:
    await assert_vllm_cut_call(vllm_qwen3_hermes, "tool-call-length-cut", streaming)


# --- the tool loop: call → function_call_output → answer → a follow-up ---------------------------


@STREAMING
async def test_tool_loop_store_off_sends_the_whole_history(
    vllm_qwen3_hermes: VllmServer, streaming: bool
) -> None:
    """``ConversationMode.STATELESS`` (the default): every turn sends the whole history as
    message, function_call and function_call_output items with ``store: false``, and the model
    sees exactly the prompts the chat client's run of the same loop gives it."""
    await assert_store_off_sends_the_whole_history(
        VLLM, vllm_qwen3_hermes, SCENARIOS["reasoning-then-tool-call"], streaming
    )


async def test_tool_loop_previous_response_id_without_store_falls_back(
    vllm_qwen3_hermes: VllmServer,
) -> None:
    """``PREVIOUS_RESPONSE_ID`` configured on a server whose store is off: vLLM ignores
    ``store: true`` on turn 1 and answers 404 for the id on turn 2; the client warns once,
    sends the whole history instead and stays stateless; the model still sees the call."""
    await assert_falls_back_without_store(
        VLLM, vllm_qwen3_hermes, SCENARIOS["tool-call"], refusal_status=404
    )


async def test_probe_store_is_off_by_default(vllm_qwen3_hermes: VllmServer) -> None:
    """``probe_store()``: vLLM answers 404 for unknown ids whether or not its store is on, so
    the probe stores a one-token response and reads it back; without the env switch, not found."""
    vllm_qwen3_hermes.script("ok")
    assert await probe_store(VLLM, vllm_qwen3_hermes) is False


# --- the store on (set qwen3-hermes-store) --------------------------------------------------------


async def test_probe_store_finds_the_store(vllm_qwen3_hermes_store: VllmServer) -> None:
    """With ``VLLM_ENABLE_RESPONSES_API_STORE=1`` the probe's response reads back."""
    vllm_qwen3_hermes_store.script("ok")
    assert await probe_store(VLLM, vllm_qwen3_hermes_store) is True


@STREAMING
@FIRST_TURNS
async def test_tool_loop_store_on_continues_by_id_and_the_model_still_sees_the_call(
    vllm_qwen3_hermes_store: VllmServer, first: str, streaming: bool
) -> None:
    """Store on, ``PREVIOUS_RESPONSE_ID``: turn 2 continues turn 1 by id and sends the call
    (which vLLM's replay drops) with its output; turn 3 continues turn 2 by id and sends only
    the question. The model's prompts are the chat client's, call included.

    One exception, asserted as such: a *streamed* reasoning-then-call turn is stored with a
    ``"\\n\\n"`` message item that vLLM would replay as an empty assistant turn, so the client
    sends turn 2 with the whole history instead (still stored) and chains again from there.

    One difference, also asserted: when thinking is on, vLLM replays turn 2's stored answer as
    ``"\n\nIt is…"`` (the newlines after ``</think>``), where chat's prompt has ``"It is…"``."""
    server = vllm_qwen3_hermes_store
    first_turn = SCENARIOS[first]
    conversation = await run_store_on_loop(VLLM, server, first_turn, streaming)
    prompts = list(conversation.prompts)
    if first_turn.expected_reasoning:  # the documented difference
        prompts[2] = trim_replayed_answer(prompts[2], conversation.responses[1].text)
    chat = await chat_prompts(VLLM, server, first_turn, streaming)
    assert_same_prompts(VLLM, prompts, chat)


async def test_store_on_vllm_replay_drops_the_call_when_trusted(
    vllm_qwen3_hermes_store: VllmServer,
) -> None:
    """The server quirk behind ``RESPONSES_QUIRKS["vllm"].replays_function_calls = False``:
    a client that trusts vLLM's replay (sends only the output) gets a prompt with the tool
    result and no call before it. If vLLM starts replaying calls, this fails and the quirk row
    can go."""
    server = vllm_qwen3_hermes_store
    sent = SentBodies()
    async with sent.http_client() as http:
        client = pipeline(
            VLLM,
            server,
            "responses",
            http_client=http,
            conversation_mode=ConversationMode.PREVIOUS_RESPONSE_ID,
            replays_function_calls=True,
        )
        async with aclosing(client):
            conversation = await converse(
                server, client, SCENARIOS["tool-call"], streaming=False, turns=2
            )
    assert input_types(sent.bodies[-1]) == ["function_call_output"]
    turns = turns_after_question(conversation.prompts[1])
    assert turns[0].startswith("user\n<tool_response>"), turns
    assert not any("<tool_call>" in turn for turn in turns)


# --- the qwen3_coder set -------------------------------------------------------------------------


@STREAMING
@pytest.mark.parametrize("name", ["coder-tool-call", "coder-text-then-tool-call"])
async def test_qwen3_coder_calls_are_the_same_through_both_apis(
    vllm_qwen3coder: VllmServer, name: str, streaming: bool
) -> None:
    """``--tool-call-parser qwen3_coder``: ``days`` typed from the schema (the integer 3) on
    both APIs, and the text before the call the same."""
    await assert_same_through_both_apis(VLLM, vllm_qwen3coder, SCENARIOS[name], streaming)


@STREAMING
async def test_qwen3_coder_call_cut_by_max_output_tokens(
    vllm_qwen3coder: VllmServer, streaming: bool
) -> None:
    await assert_vllm_cut_call(vllm_qwen3coder, "coder-tool-call-length-cut", streaming)

"""Chat completions and the Responses API against the same real SGLang server (issue #11).

The promises of ``tests/integration/vllm/test_vllm_responses.py``, on SGLang 0.5.23 (the shared
bodies are in ``tests/integration/rigs/responses_checks.py``):

* The same model text gives the same ``ChatResponse`` through ``create_chat_client(api="chat")``
  and ``api="responses"``, streamed and not: text, reasoning, tool calls, finish reason, usage.
* A tool loop (call → ``function_call_output`` → answer → follow-up) works with the response
  store off (whole history as input items) and on (``previous_response_id``), and the model's
  second prompt holds the call. SGLang's store replays the whole previous assistant turn, call
  included, so the client sends only the output (``RESPONSES_QUIRKS["sglang"]``).

Where SGLang answers the two APIs differently, the difference is asserted, not hidden
(:class:`SglangResponses`):

* ``max_output_tokens`` minus 2: the Responses route reserves two tokens, so the scheduler gets
  ``max_new_tokens = max_output_tokens - 2`` (chat passes ``max_tokens`` unchanged).
* The model name is checked on ``/v1/responses`` only (404), chat answers any name.
* A streamed context overflow is HTTP 200 then ``response.failed`` on the Responses route (chat
  answers 400 before streaming): the same ``ContextLengthExceededError``, with no HTTP status.
* Tools are rendered with extra fields (``strict``, ``defer_loading``…) on the Responses route,
  so with tools the prompt (and its token count) differs from chat's in the tool list only.

Server sets: ``plain``, ``qwen3-qwen25``, the store set ``qwen3-qwen25-store``
(``--enable-response-store``, the one extra server) and ``qwen3coder``; the rig pool runs the
tests grouped by server set, so each set starts once.
"""

from __future__ import annotations

import re
from contextlib import aclosing
from typing import ClassVar

import pytest

from providers import ChatOptions, ChatResponse, ModelNotFoundError
from tests.integration.rigs.responses_checks import (
    FIRST_TURNS,
    STREAMING,
    ResponsesRig,
    assert_cut_call_is_not_a_call,
    assert_falls_back_without_store,
    assert_same_prompts,
    assert_same_through_both_apis,
    assert_store_off_sends_the_whole_history,
    chat_prompts,
    context_overflow_errors,
    error_of,
    pipeline,
    probe_store,
    run_store_on_loop,
    through,
    trim_replayed_answer,
)
from tests.integration.rigs.scenarios import PROMPT, SCENARIOS, Scenario, assert_matches, run
from tests.integration.rigs.sglang.server import ReceivedPrompt, SglangServer

RESERVED_BY_RESPONSES = 2
"""SGLang's Responses route: ``max_new_tokens = max_output_tokens - 2`` (room for BOS/EOS)."""

_TOOLS_BLOCK = re.compile(r"<tools>\n.*?\n</tools>", re.DOTALL)


def without_tool_list(prompt: str) -> str:
    return _TOOLS_BLOCK.sub("<tools>…</tools>", prompt)


def expected_output_tokens(received: ReceivedPrompt, finish: object) -> int | None:
    """What SGLang counts: the emitted ids plus end-of-sequence on a stop, the limit on a cut."""
    if finish == "length":
        return received.max_new_tokens
    return received.script_token_count + 1


class SglangResponses(ResponsesRig[ReceivedPrompt]):
    """SGLang's differences between the routes (the module docstring lists them); its store
    replays a previous ``function_call``."""

    backend: ClassVar[str] = "sglang"
    reserved_output_tokens: ClassVar[int] = RESERVED_BY_RESPONSES
    replays_function_calls: ClassVar[bool] = True

    def comparable_prompt(self, prompt: str) -> str:
        return without_tool_list(prompt)

    def assert_same_request(
        self, scenario: Scenario, chat: ReceivedPrompt, responses: ReceivedPrompt
    ) -> None:
        """The same output limit at the scheduler once the reserved tokens are added, and the
        same prompt but for the tool list, which must differ (the documented difference)."""
        assert chat.max_new_tokens == responses.max_new_tokens == scenario.max_output_tokens
        if scenario.tools:
            assert responses.prompt != chat.prompt
        else:
            assert responses.prompt == chat.prompt
        super().assert_same_request(scenario, chat, responses)

    def assert_usage(
        self,
        chat: ChatResponse,
        chat_got: ReceivedPrompt,
        responses: ChatResponse,
        responses_got: ReceivedPrompt,
    ) -> None:
        """Each route's usage is what the scheduler did for it (prompts differ with tools)."""
        for response, received in ((chat, chat_got), (responses, responses_got)):
            usage = response.usage
            assert usage is not None, "no usage reported"
            assert usage.input_token_count == received.prompt_tokens
            output = expected_output_tokens(received, response.finish_reason)
            assert usage.output_token_count == output
            assert usage.total_token_count == received.prompt_tokens + (output or 0)
            assert not usage.reasoning_token_count  # the scripted scheduler reports none


SGLANG = SglangResponses()


# --- set plain: the same ChatResponse, and the errors --------------------------------------------


@STREAMING
async def test_plain_text_is_the_same_through_both_apis(
    sglang_plain: SglangServer, streaming: bool
) -> None:
    """No parsers: ``It is sunny in Paris.``, finish ``stop``, the same prompt and usage."""
    await assert_same_through_both_apis(SGLANG, sglang_plain, SCENARIOS["text"], streaming)


@STREAMING
async def test_length_cut_is_the_same_once_the_two_reserved_tokens_are_added(
    sglang_plain: SglangServer, streaming: bool
) -> None:
    """``max_output_tokens`` 3 + 2 on Responses cuts where ``max_tokens`` 3 cuts on chat:
    ``It is sunny``, finish ``length`` (``response.incomplete``)."""
    await assert_same_through_both_apis(SGLANG, sglang_plain, SCENARIOS["text-length"], streaming)


@STREAMING
async def test_the_same_max_output_tokens_cuts_two_tokens_earlier(
    sglang_plain: SglangServer, streaming: bool
) -> None:
    """The documented difference itself: the same limit of 3 gives chat ``It is sunny`` and
    Responses ``It`` (one token). The client passes the caller's limit on unchanged."""
    scenario = SCENARIOS["text-length"]
    sglang_plain.script(scenario.model_text)
    chat, chat_received = await through(SGLANG, sglang_plain, "chat", scenario, streaming)
    responses, responses_received = await through(
        SGLANG, sglang_plain, "responses", scenario, streaming
    )
    assert chat.text == "It is sunny"
    assert responses.text == "It"
    assert chat.finish_reason == responses.finish_reason == "length"
    assert chat_received.max_new_tokens == 3
    assert responses_received.max_new_tokens == 3 - RESERVED_BY_RESPONSES
    assert responses.usage is not None and responses.usage.output_token_count == 1


@STREAMING
async def test_unknown_model_is_model_not_found_on_responses_only(
    sglang_plain: SglangServer, streaming: bool
) -> None:
    """SGLang checks the model name on ``/v1/responses`` (404, plain JSON even for a stream)
    and not on chat, which answers any name: ``ModelNotFoundError`` on one route, the answer
    on the other."""
    scenario = SCENARIOS["text"]
    sglang_plain.script(scenario.model_text)
    async with aclosing(pipeline(SGLANG, sglang_plain, "chat", model_id="no-such-model")) as chat:
        answered = await run(chat, scenario, streaming=streaming)
    assert_matches(answered, scenario)
    before = len(sglang_plain.prompts())
    async with aclosing(
        pipeline(SGLANG, sglang_plain, "responses", model_id="no-such-model")
    ) as client:
        error = await error_of(client, PROMPT, scenario.options(), streaming)
    assert type(error) is ModelNotFoundError
    assert error.status == 404
    assert error.backend == "sglang"
    assert "no-such-model" in str(error)
    assert len(sglang_plain.prompts()) == before, "the scheduler must not have been reached"


@STREAMING
async def test_context_overflow_is_the_same_typed_error_on_both_apis(
    sglang_plain: SglangServer, streaming: bool
) -> None:
    """A 5000-word input in a 4096-token context: ``ContextLengthExceededError`` with the same
    sizes on both routes. Streamed, the Responses route answers HTTP 200 and then
    ``response.failed`` (so the error has no HTTP status); chat answers 400 before streaming."""
    chat, responses = await context_overflow_errors(
        SGLANG,
        sglang_plain,
        " ".join(["word"] * 5000),
        ChatOptions(max_output_tokens=8),
        context_window=sglang_plain.context_length,
        streaming=streaming,
    )
    assert chat.status == 400
    assert responses.status == (None if streaming else 400)


# --- set qwen3-qwen25: reasoning and hermes-style calls ------------------------------------------


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
async def test_qwen25_and_qwen3_reasoning_are_the_same_through_both_apis(
    sglang_qwen3_qwen25: SglangServer, name: str, streaming: bool
) -> None:
    """``--reasoning-parser qwen3 --tool-call-parser qwen25``: reasoning items and
    ``function_call`` items give what chat's ``reasoning_content`` and ``tool_calls`` give,
    finish ``tool_calls`` included; the streamed ``"\\n\\n"`` message item between reasoning
    and a call is not text."""
    await assert_same_through_both_apis(SGLANG, sglang_qwen3_qwen25, SCENARIOS[name], streaming)


async def assert_sglang_cut_call(server: SglangServer, name: str, streaming: bool) -> None:
    """The shared cut-call promise, the Responses request asking for 2 more tokens, so the
    scheduler stops where the scenario says."""
    scenario = SCENARIOS[name]
    received = await assert_cut_call_is_not_a_call(SGLANG, server, scenario, streaming)
    assert received.max_new_tokens == scenario.max_output_tokens


@STREAMING
async def test_qwen25_call_cut_by_max_output_tokens(
    sglang_qwen3_qwen25: SglangServer, streaming: bool
) -> None:
    await assert_sglang_cut_call(sglang_qwen3_qwen25, "tool-call-length-cut", streaming)


# --- the tool loop: call → function_call_output → answer → a follow-up ---------------------------


@STREAMING
async def test_tool_loop_store_off_sends_the_whole_history(
    sglang_qwen3_qwen25: SglangServer, streaming: bool
) -> None:
    """``ConversationMode.STATELESS`` (the default): every turn sends the whole history with
    ``store: false``, and the model sees the conversation the chat client's loop gives it."""
    await assert_store_off_sends_the_whole_history(
        SGLANG, sglang_qwen3_qwen25, SCENARIOS["reasoning-then-tool-call"], streaming
    )


async def test_tool_loop_previous_response_id_without_store_falls_back(
    sglang_qwen3_qwen25: SglangServer,
) -> None:
    """``PREVIOUS_RESPONSE_ID`` on a server without ``--enable-response-store``: SGLang
    refuses the id with 400 "Response store is disabled"; the client warns once, sends the
    whole history instead and stays stateless; the model still sees the call."""
    await assert_falls_back_without_store(
        SGLANG, sglang_qwen3_qwen25, SCENARIOS["tool-call"], refusal_status=400
    )


async def test_probe_store_is_off_by_default(sglang_qwen3_qwen25: SglangServer) -> None:
    """``probe_store()``: SGLang answers a read of any id with 400 "store is disabled"."""
    assert await probe_store(SGLANG, sglang_qwen3_qwen25) is False


# --- set qwen3-qwen25-store: the store on --------------------------------------------------------


async def test_probe_store_finds_the_store(sglang_qwen3_qwen25_store: SglangServer) -> None:
    """With ``--enable-response-store`` an unknown id is 404, and a stored response reads back."""
    sglang_qwen3_qwen25_store.script("ok")
    assert await probe_store(SGLANG, sglang_qwen3_qwen25_store) is True


@STREAMING
@FIRST_TURNS
async def test_tool_loop_store_on_continues_by_id_and_the_model_still_sees_the_call(
    sglang_qwen3_qwen25_store: SglangServer, first: str, streaming: bool
) -> None:
    """Store on, ``PREVIOUS_RESPONSE_ID``: turn 2 continues turn 1 by id and sends only the
    ``function_call_output`` (SGLang replays the whole assistant turn, call included); turn 3
    continues turn 2 by id with only the question. The model's second prompt holds the call.

    As on vLLM, a *streamed* reasoning-then-call turn is stored with a ``"\\n\\n"`` message
    item the history leaves out, so the client sends turn 2 statelessly and chains from there.

    The prompts are chat's but for what SGLang's replay keeps (asserted): a replayed answer's
    leading ``"\\n\\n"``, and the reasoning of the turn continued by id."""
    server = sglang_qwen3_qwen25_store
    first_turn = SCENARIOS[first]
    conversation = await run_store_on_loop(SGLANG, server, first_turn, streaming)
    first_response, second_response, _ = conversation.responses
    prompts = list(conversation.prompts)
    if first_turn.expected_reasoning:
        # Documented differences: SGLang replays a stored turn as it stored it. Turn 3 gets
        # turn 2's answer with the newlines the model wrote after </think> (chat: trimmed)…
        prompts[2] = trim_replayed_answer(prompts[2], second_response.text)
        if not streaming:
            # …and turn 2, continuing turn 1 by id, gets turn 1's reasoning before the call,
            # which chat (and the stateless path) do not send back (replay_reasoning off).
            thought = first_response.reasoning
            replayed = f"<|im_start|>assistant\n<think>\n{thought}\n</think>\n\n<tool_call>"
            assert replayed in prompts[1]
            prompts[1] = prompts[1].replace(replayed, "<|im_start|>assistant\n<tool_call>")
    chat = await chat_prompts(SGLANG, server, first_turn, streaming)
    assert_same_prompts(SGLANG, prompts, chat)


# --- set qwen3coder ------------------------------------------------------------------------------


@STREAMING
@pytest.mark.parametrize("name", ["coder-tool-call", "coder-text-then-tool-call"])
async def test_qwen3_coder_calls_are_the_same_through_both_apis(
    sglang_qwen3coder: SglangServer, name: str, streaming: bool
) -> None:
    """``--tool-call-parser qwen3_coder``: ``days`` typed from the schema (the integer 3) on
    both routes, and the text before the call the same."""
    await assert_same_through_both_apis(SGLANG, sglang_qwen3coder, SCENARIOS[name], streaming)


@STREAMING
async def test_qwen3_coder_call_cut_by_max_output_tokens(
    sglang_qwen3coder: SglangServer, streaming: bool
) -> None:
    await assert_sglang_cut_call(sglang_qwen3coder, "coder-tool-call-length-cut", streaming)

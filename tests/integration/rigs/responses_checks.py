"""Chat completions and the Responses API against the same real server: the shared checks.

``tests/integration/{vllm,sglang}/test_*_responses.py`` make two promises on each server:

* the same model text gives the same ``ChatResponse`` through ``create_chat_client(api="chat")``
  and ``api="responses"``, streamed and not (:func:`assert_same_through_both_apis`);
* a tool loop (call → ``function_call_output`` → answer → a follow-up question) works with the
  response store off and on, and the model's prompts are the ones the chat client's run of the
  same loop gives it (:func:`converse`, :func:`assert_same_prompts`).

The scenario bodies live here, once; each backend's test module subclasses
:class:`ResponsesRig` with what its server genuinely does differently (output tokens reserved
by the Responses route, tools rendered with extra fields, how usage is counted, whether the
store replays a previous ``function_call``), and keeps its tests, names and docstrings, which
say what each difference is.
"""

from __future__ import annotations

import json
from collections.abc import MutableMapping
from contextlib import aclosing
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Generic

import httpx
import pytest
from structlog.testing import capture_logs

from providers import (
    ChatClient,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ContextLengthExceededError,
    ProviderError,
    create_chat_client,
)
from providers.abstractions.chat_client import ChatInput
from providers.responses import (
    STORE_UNAVAILABLE_EVENT,
    ConversationMode,
    OpenAiCompatibleResponsesClient,
)
from tests.integration.rigs.scenarios import PROMPT, Scenario, assert_matches, run
from tests.integration.rigs.scripted import RecordT, ScriptedServer

__all__ = [
    "FIRST_TURNS",
    "FOLLOW_UP",
    "STREAMING",
    "TOOL_RESULT",
    "Conversation",
    "ResponsesRig",
    "SentBodies",
    "assert_cut_call_is_not_a_call",
    "assert_falls_back_without_store",
    "assert_same_prompts",
    "assert_same_through_both_apis",
    "assert_sees_call_then_result",
    "assert_store_off_sends_the_whole_history",
    "chat_prompts",
    "context_overflow_errors",
    "converse",
    "converse_by_id",
    "error_of",
    "input_types",
    "pipeline",
    "probe_store",
    "run_store_on_loop",
    "through",
    "trim_replayed_answer",
    "turns_after_question",
]

STREAMING = pytest.mark.parametrize("streaming", [True, False], ids=["stream", "nonstream"])
FIRST_TURNS = pytest.mark.parametrize("first", ["tool-call", "reasoning-then-tool-call"])

TOOL_RESULT = '{"temperature_c": 21, "condition": "sunny"}'
FOLLOW_UP = "And tomorrow?"


class ResponsesRig(Generic[RecordT]):
    """What one backend does differently on the two routes; the defaults are "nothing".

    ``reserved_output_tokens``: the Responses route gives the model that many fewer tokens
    than ``max_output_tokens`` says, so the Responses request of a comparison asks for that
    many more. ``replays_function_calls``: a stored response replays its ``function_call``
    items, so a turn continued by id sends only the output.
    """

    backend: ClassVar[str]
    reserved_output_tokens: ClassVar[int] = 0
    replays_function_calls: ClassVar[bool]

    def for_responses(self, scenario: Scenario) -> Scenario:
        """``scenario`` asking the Responses route for the same output limit as chat."""
        limit = scenario.max_output_tokens
        if limit is None or not self.reserved_output_tokens:
            return scenario
        return replace(scenario, max_output_tokens=limit + self.reserved_output_tokens)

    def comparable_prompt(self, prompt: str) -> str:
        """The part of a prompt both routes must render alike."""
        return prompt

    def assert_same_request(self, scenario: Scenario, chat: RecordT, responses: RecordT) -> None:
        """What the model was given for the chat request and for the Responses request."""
        assert self.comparable_prompt(responses.prompt) == self.comparable_prompt(chat.prompt), (
            "the two APIs rendered different prompts"
        )

    def assert_usage(
        self, chat: ChatResponse, chat_got: RecordT, responses: ChatResponse, responses_got: RecordT
    ) -> None:
        """Usage of each route against what the model did for it."""
        raise NotImplementedError


def pipeline(
    rig: ResponsesRig[Any],
    server: ScriptedServer[Any],
    api: str,
    model_id: str | None = None,
    **kwargs: Any,
) -> ChatClient:
    """The standard pipeline over one API, no retries (a retried error would hide the first,
    and a retried request would reach the model twice)."""
    return create_chat_client(
        server.base_url,
        model_id or server.model_id,
        backend=rig.backend,
        api=api,
        retry=None,
        **kwargs,
    )


async def through(
    rig: ResponsesRig[RecordT],
    server: ScriptedServer[RecordT],
    api: str,
    scenario: Scenario,
    streaming: bool,
) -> tuple[ChatResponse, RecordT]:
    """One scenario through one API: the response and the one request the model got."""
    before = len(server.prompts())
    async with aclosing(pipeline(rig, server, api)) as client:
        response = await run(client, scenario, streaming=streaming)
    received = server.prompts()[before:]
    assert len(received) == 1, f"expected one request at the model, got {received!r}"
    return response, received[0]


def calls_of(response: ChatResponse) -> list[tuple[str, Any, Any]]:
    return [(call.name, call.arguments, call.error) for call in response.tool_calls]


async def assert_same_through_both_apis(
    rig: ResponsesRig[RecordT],
    server: ScriptedServer[RecordT],
    scenario: Scenario,
    streaming: bool,
) -> tuple[ChatResponse, ChatResponse]:
    """Script the scenario, run it through chat and through Responses, and compare."""
    server.script(scenario.model_text)
    chat, chat_got = await through(rig, server, "chat", scenario, streaming)
    responses, responses_got = await through(
        rig, server, "responses", rig.for_responses(scenario), streaming
    )
    assert_matches(chat, scenario)
    assert_matches(responses, scenario)
    rig.assert_same_request(scenario, chat_got, responses_got)
    assert responses.text == chat.text
    assert responses.reasoning == chat.reasoning
    assert calls_of(responses) == calls_of(chat)
    assert responses.finish_reason == chat.finish_reason
    rig.assert_usage(chat, chat_got, responses, responses_got)
    assert responses.model_id == chat.model_id == server.model_id
    assert responses.response_id and responses.response_id.startswith("resp_")
    return chat, responses


async def assert_cut_call_is_not_a_call(
    rig: ResponsesRig[RecordT], server: ScriptedServer[RecordT], scenario: Scenario, streaming: bool
) -> RecordT:
    """``max_output_tokens`` stops inside the call (``Scenario.cut_inside_call``): finish
    ``length`` and no call that looks complete, through the Responses client. The two routes
    are not compared: servers hand over different stubs of a cut call on each (the promise is
    only that none looks complete). Returns what the model got, for the backend's checks."""
    server.script(scenario.model_text)
    response, got = await through(rig, server, "responses", rig.for_responses(scenario), streaming)
    assert_matches(response, scenario)
    return got


# --- errors --------------------------------------------------------------------------------------


async def error_of(
    client: ChatClient, messages: ChatInput, options: ChatOptions, streaming: bool
) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        if streaming:
            _ = [u async for u in client.get_streaming_response(messages, options)]
        else:
            await client.get_response(messages, options)
    return caught.value


async def context_overflow_errors(
    rig: ResponsesRig[Any],
    server: ScriptedServer[Any],
    prompt: str,
    options: ChatOptions,
    *,
    context_window: int,
    streaming: bool,
) -> tuple[ContextLengthExceededError, ContextLengthExceededError]:
    """An input over the context on both routes: the same ``ContextLengthExceededError``, with
    the same sizes; the HTTP statuses are left to the backend's test."""
    errors = {}
    for api in ("chat", "responses"):
        async with aclosing(pipeline(rig, server, api)) as client:
            errors[api] = await error_of(client, prompt, options, streaming)
    chat, responses = errors["chat"], errors["responses"]
    assert isinstance(chat, ContextLengthExceededError)
    assert isinstance(responses, ContextLengthExceededError)
    assert type(chat) is type(responses) is ContextLengthExceededError
    assert responses.context_window == chat.context_window == context_window
    assert responses.prompt_tokens is not None
    assert responses.prompt_tokens == chat.prompt_tokens
    assert responses.prompt_tokens > context_window
    return chat, responses


async def probe_store(rig: ResponsesRig[Any], server: ScriptedServer[Any]) -> bool:
    """``probe_store()`` of a Responses client on ``server``."""
    async with OpenAiCompatibleResponsesClient(
        server.base_url, server.model_id, backend=rig.backend
    ) as client:
        return await client.probe_store()


# --- the tool loop: call → function_call_output → answer → a follow-up ---------------------------


class SentBodies:
    """The JSON bodies an ``httpx.AsyncClient`` sends, by an event hook: what really went out."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []

    async def hook(self, request: httpx.Request) -> None:
        if request.method == "POST" and request.url.path.endswith("/responses"):
            self.bodies.append(json.loads(request.content))

    def http_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(timeout=60.0, event_hooks={"request": [self.hook]})


@dataclass(frozen=True)
class Turn:
    """A scripted model text and what the caller must get from it."""

    model_text: str
    text: str
    reasoning: str = ""


def later_turns(thinking: bool) -> tuple[Turn, Turn]:
    """Turn 2 (the answer from the tool result) and turn 3 (the answer to a follow-up); with
    thinking on, the qwen3 parser takes untagged text for reasoning, so those think first."""
    answers = (
        ("The tool says 21 degrees and sunny.", "It is 21 degrees Celsius and sunny in Paris."),
        ("There is no forecast tool.", "I only know today's weather."),
    )
    if not thinking:
        return Turn(answers[0][1], answers[0][1]), Turn(answers[1][1], answers[1][1])
    second, third = (
        Turn(f"<think>\n{thought}\n</think>\n\n{answer}", answer, thought)
        for thought, answer in answers
    )
    return second, third


@dataclass
class Conversation:
    """The turns of one agent loop: each response, and the prompt the model got for it."""

    responses: list[ChatResponse]
    prompts: list[str]


async def ask(
    client: ChatClient, messages: ChatInput, options: ChatOptions, streaming: bool
) -> ChatResponse:
    if not streaming:
        return await client.get_response(messages, options)
    return ChatResponse.from_updates(
        [update async for update in client.get_streaming_response(messages, options)]
    )


async def converse(
    server: ScriptedServer[Any],
    client: ChatClient,
    first_turn: Scenario,
    streaming: bool,
    turns: int = 3,
) -> Conversation:
    """Turn 1: ``first_turn`` (a ``get_weather`` call); the caller appends the assistant message
    and a tool message with the result, as an agent loop does. Turn 2: the answer. Turn 3: the
    answer to a follow-up question (``turns=2`` stops before it)."""
    options = first_turn.options()
    thinking = first_turn.template_kwargs is None
    server.script(first_turn.model_text)
    first = await ask(client, PROMPT, options, streaming)
    assert_matches(first, first_turn)
    (call,) = first.tool_calls
    history = [
        ChatMessage.user(PROMPT),
        *first.messages,
        ChatMessage.tool(call.call_id, TOOL_RESULT),
    ]
    conversation = Conversation([first], [server.prompts()[-1].prompt])
    for turn in later_turns(thinking)[: turns - 1]:
        server.script(turn.model_text)
        response = await ask(client, history, options, streaming)
        assert (response.text, response.reasoning) == (turn.text, turn.reasoning)
        assert response.finish_reason == "stop"
        assert response.tool_calls == []
        conversation.responses.append(response)
        conversation.prompts.append(server.prompts()[-1].prompt)
        history = [*history, *response.messages, ChatMessage.user(FOLLOW_UP)]
    return conversation


async def chat_prompts(
    rig: ResponsesRig[Any],
    server: ScriptedServer[Any],
    first_turn: Scenario,
    streaming: bool,
    turns: int = 3,
) -> list[str]:
    """The prompts the chat client's run of the same conversation gives the model: what the
    Responses client must give it too, whatever its conversation mode."""
    async with aclosing(pipeline(rig, server, "chat")) as chat:
        return (await converse(server, chat, first_turn, streaming, turns)).prompts


def turns_after_question(prompt: str) -> list[str]:
    """The prompt's turns after the user's question (ChatML ``<|im_start|>`` blocks)."""
    turns = prompt.split("<|im_start|>")[1:]
    asks = [i for i, turn in enumerate(turns) if turn.startswith(f"user\n{PROMPT}")]
    assert asks, f"the question is not in the prompt: {prompt!r}"
    return turns[asks[0] + 1 :]


def assert_sees_call_then_result(prompt: str) -> None:
    """After the question: the assistant turn with the call, then the tool result."""
    turns = turns_after_question(prompt)
    assert len(turns) >= 3, f"no call and result turns after the question: {turns!r}"
    call_turn, result_turn = turns[0], turns[1]
    assert call_turn.startswith("assistant\n"), call_turn
    assert "<tool_call>" in call_turn and '"get_weather"' in call_turn and "Paris" in call_turn
    assert result_turn.startswith("user\n<tool_response>"), result_turn
    assert TOOL_RESULT in result_turn
    assert turns[-1].startswith("assistant\n"), "the prompt must end with the generation turn"


def assert_same_prompts(rig: ResponsesRig[Any], responses: list[str], chat: list[str]) -> None:
    """Each turn's prompt equals the chat client's (as far as the backend renders both alike);
    a difference is shown turn by turn."""
    assert len(responses) == len(chat)
    for turn, (got, expected) in enumerate(zip(responses, chat, strict=True), start=1):
        assert turns_after_question(got) == turns_after_question(expected), f"turn {turn}"
        assert rig.comparable_prompt(got) == rig.comparable_prompt(expected), f"turn {turn}"


def input_types(body: dict[str, Any]) -> list[str]:
    return [item["type"] for item in body["input"]]


def responses_client(
    rig: ResponsesRig[Any], server: ScriptedServer[Any], http: httpx.AsyncClient, **options: Any
) -> ChatClient:
    """The Responses pipeline sending through ``http`` (a :class:`SentBodies` client)."""
    return pipeline(rig, server, "responses", http_client=http, **options)


async def assert_store_off_sends_the_whole_history(
    rig: ResponsesRig[Any], server: ScriptedServer[Any], first_turn: Scenario, streaming: bool
) -> None:
    """``ConversationMode.STATELESS`` (the default): every turn sends the whole history as
    message, function_call and function_call_output items with ``store: false``, and the model
    sees the prompts the chat client's run of the same loop gives it."""
    sent = SentBodies()
    async with (
        sent.http_client() as http,
        aclosing(responses_client(rig, server, http)) as client,
    ):
        conversation = await converse(server, client, first_turn, streaming)
    assert_sees_call_then_result(conversation.prompts[1])
    assert_sees_call_then_result(conversation.prompts[2])
    for body in sent.bodies:
        assert "previous_response_id" not in body
        assert body["store"] is False
    assert input_types(sent.bodies[1]) == ["message", "function_call", "function_call_output"]
    assert input_types(sent.bodies[2])[-2:] == ["message", "message"]  # the answer, the question
    chat = await chat_prompts(rig, server, first_turn, streaming)
    assert_same_prompts(rig, conversation.prompts, chat)


async def converse_by_id(
    rig: ResponsesRig[Any], server: ScriptedServer[Any], first_turn: Scenario, streaming: bool
) -> tuple[Conversation, list[dict[str, Any]], list[MutableMapping[str, Any]]]:
    """The conversation through a Responses client in ``PREVIOUS_RESPONSE_ID`` mode, with the
    bodies it sent and the log events it wrote."""
    sent = SentBodies()
    with capture_logs() as logs:
        async with (
            sent.http_client() as http,
            aclosing(
                responses_client(
                    rig, server, http, conversation_mode=ConversationMode.PREVIOUS_RESPONSE_ID
                )
            ) as client,
        ):
            conversation = await converse(server, client, first_turn, streaming)
    return conversation, sent.bodies, logs


async def assert_falls_back_without_store(
    rig: ResponsesRig[Any], server: ScriptedServer[Any], first_turn: Scenario, refusal_status: int
) -> None:
    """``PREVIOUS_RESPONSE_ID`` configured on a server whose store is off: the server refuses
    the id on turn 2 with ``refusal_status``; the client warns once, sends the whole history
    instead and stays stateless; the model still sees the call."""
    conversation, bodies, logs = await converse_by_id(rig, server, first_turn, streaming=False)
    assert_sees_call_then_result(conversation.prompts[1])
    turn1, tried, resent, turn3 = bodies
    assert turn1["store"] is True
    assert tried["previous_response_id"] == conversation.responses[0].response_id
    assert "previous_response_id" not in resent
    assert "previous_response_id" not in turn3  # one refusal is enough
    warnings = [log for log in logs if log["event"] == STORE_UNAVAILABLE_EVENT]
    assert [warning["status"] for warning in warnings] == [refusal_status]


async def run_store_on_loop(
    rig: ResponsesRig[Any], server: ScriptedServer[Any], first_turn: Scenario, streaming: bool
) -> Conversation:
    """Store on, ``PREVIOUS_RESPONSE_ID``: turn 2 continues turn 1 by id, sending the call
    again unless the server's store replays it (``rig.replays_function_calls``) and then its
    output; turn 3 continues turn 2 by id and sends only the question. The model sees the call
    both times.

    The exception, asserted as such: a *streamed* reasoning-then-call turn is stored with a
    ``"\\n\\n"`` message item the history leaves out (a server would replay it as an empty
    assistant turn), so the client sends turn 2 with the whole history instead (still stored)
    and chains again from there. Returns the conversation for the prompt comparison, which
    depends on what the server's replay keeps."""
    conversation, bodies, logs = await converse_by_id(rig, server, first_turn, streaming)
    assert_sees_call_then_result(conversation.prompts[1])
    assert_sees_call_then_result(conversation.prompts[2])
    turn1, turn2, turn3 = bodies
    assert all(body["store"] is True for body in bodies)
    assert "previous_response_id" not in turn1
    first_response, second_response, _ = conversation.responses
    if streaming and first_turn.expected_reasoning:
        assert "previous_response_id" not in turn2
        assert input_types(turn2) == ["message", "function_call", "function_call_output"]
    elif rig.replays_function_calls:
        assert turn2["previous_response_id"] == first_response.response_id
        assert input_types(turn2) == ["function_call_output"]
    else:
        assert turn2["previous_response_id"] == first_response.response_id
        assert input_types(turn2) == ["function_call", "function_call_output"]
        assert turn2["input"][0]["name"] == "get_weather"
    assert turn3["previous_response_id"] == second_response.response_id
    assert turn3["input"] == [{"type": "message", "role": "user", "content": FOLLOW_UP}]
    assert not [log for log in logs if log["event"] == STORE_UNAVAILABLE_EVENT]
    return conversation


def trim_replayed_answer(prompt: str, answer: str) -> str:
    """A stored answer replayed with the newlines the model wrote after ``</think>`` (as both
    servers do), rewritten as the history (and chat) send it, trimmed; asserts it was there."""
    replayed = f"<|im_start|>assistant\n\n\n{answer}<|im_end|>"
    assert replayed in prompt
    return prompt.replace(replayed, f"<|im_start|>assistant\n{answer}<|im_end|>")

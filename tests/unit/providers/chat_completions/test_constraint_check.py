"""The answer checked against its constraint, whole and streamed: what passes, what is a
violation, what is not checked, and that the error keeps the whole response."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from providers import (
    ChatResponse,
    ChatResponseFormat,
    ChatResponseUpdate,
    ConstraintViolationError,
    FunctionCallContent,
    TextContent,
    TextReasoningContent,
    UsageContent,
    UsageDetails,
)
from providers.abstractions.chat_client import ChatInput
from providers.abstractions.messages import ChatMessage
from providers.abstractions.open_values import ChatFinishReason, ChatRole
from providers.abstractions.options import ChatOptions
from providers.abstractions.structured_output import get_response_as
from providers.abstractions.typed_reading import read_as_type
from providers.backends import PROFILES
from providers.chat_completions.constraint_check import check_response, check_runs, violation
from providers.chat_completions.option_enforcement import (
    Enforcement,
    enforce_response,
    enforce_runs,
    enforcement_for,
)

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "n": {"type": "integer", "minimum": 0}},
    "required": ["city", "n"],
    "additionalProperties": False,
}
REGEX = ChatResponseFormat.regex("[0-9]{3}-[a-z]+")
CHOICE = ChatResponseFormat.choice(["yes", "no"])
JSON_SCHEMA = ChatResponseFormat.json_schema(SCHEMA)


def answer(text: str, finish: str = "stop", *, usage: int | None = 7) -> ChatResponse:
    contents: list[Any] = [TextContent(text)]
    message = ChatMessage(ChatRole.ASSISTANT, contents)
    details = UsageDetails(output_token_count=usage) if usage is not None else None
    return ChatResponse([message], finish_reason=ChatFinishReason(finish), usage=details)


CASES = [
    (REGEX, "123-abc", True),
    (REGEX, "123-abc\n", False),  # whitespace is part of the pattern's answer
    (REGEX, "x123-abc", False),
    (REGEX, "123-", False),
    (CHOICE, "yes", True),
    (CHOICE, " no\n", True),  # whitespace around a choice is tolerated
    (CHOICE, "Yes", False),
    (CHOICE, "yes no", False),
    (ChatResponseFormat.JSON, '{"a": 1}', True),
    (ChatResponseFormat.JSON, "[1]", False),
    (ChatResponseFormat.JSON, "{'a': 1}", False),
    (JSON_SCHEMA, ' {"city": "Paris", "n": 2} ', True),
    (JSON_SCHEMA, '{"city": "Paris", "n": -1}', False),
    (JSON_SCHEMA, '{"city": "Paris"}', False),
    (JSON_SCHEMA, '{"city": "Paris", "n": 2, "x": 0}', False),
    (JSON_SCHEMA, "", False),
    (ChatResponseFormat.grammar('root ::= "a"'), "anything at all", True),  # not checked
    (ChatResponseFormat.TEXT, "anything", True),
]


@pytest.mark.parametrize(("fmt", "text", "obeys"), CASES)
def test_what_obeys_and_what_violates(fmt: ChatResponseFormat, text: str, obeys: bool) -> None:
    error = violation(answer(text), fmt, "vllm")
    assert (error is None) == obeys
    if error is not None:
        assert error.constraint == fmt.kind and error.backend == "vllm"
        assert error.problem in str(error)
        if text.strip():
            assert text.strip() not in error.problem  # the answer is kept, not quoted


def test_the_error_keeps_the_whole_response_with_its_usage() -> None:
    response = answer("maybe")
    with pytest.raises(ConstraintViolationError) as info:
        check_response(response, Enforcement("sglang", response_format=CHOICE))
    assert info.value.response is response and info.value.partial_response is response
    assert info.value.response.usage is not None
    assert info.value.response.usage.output_token_count == 7


def test_a_cut_answer_is_still_a_violation_and_says_so() -> None:
    error = violation(answer('{"city": "Pa', "length"), JSON_SCHEMA, "llamacpp")
    assert error is not None and "cut short" in error.problem and "not JSON" in error.problem
    assert violation(answer("123-ab", "length"), REGEX, "vllm") is None  # what came obeys


def test_a_schema_problem_names_where_not_what() -> None:
    error = violation(answer('{"city": 5, "n": 1}'), JSON_SCHEMA, "vllm")
    assert error is not None and error.problem == "city: expected string, got integer"


def test_a_think_block_left_in_the_text_is_not_the_answer() -> None:
    assert violation(answer("<think>hmm, 42?</think>123-abc"), REGEX, "vllm") is None


def test_reasoning_contents_are_not_the_answer() -> None:
    message = ChatMessage(
        ChatRole.ASSISTANT, [TextReasoningContent("long thought"), TextContent("no")]
    )
    assert violation(ChatResponse([message]), CHOICE, "vllm") is None


def test_a_tool_call_turn_is_not_checked() -> None:
    call = FunctionCallContent("c1", "get_weather", {"city": "Paris"})
    message = ChatMessage(ChatRole.ASSISTANT, [TextContent("calling"), call])
    assert violation(ChatResponse([message]), JSON_SCHEMA, "vllm") is None


def test_the_format_get_response_as_reads_itself_is_left_to_it() -> None:
    with read_as_type(JSON_SCHEMA):
        assert violation(answer("not json"), JSON_SCHEMA, "vllm") is None
        other = ChatResponseFormat.json_schema({"type": "object"}, "other")
        assert violation(answer("not json"), other, "vllm") is not None  # another format is
    assert violation(answer("not json"), JSON_SCHEMA, "vllm") is not None


# --- streamed ---------------------------------------------------------------------------------


def runs_of(*texts: str, finish: str = "stop") -> AsyncIterator[list[ChatResponseUpdate]]:
    async def gen() -> AsyncIterator[list[ChatResponseUpdate]]:
        yield [ChatResponseUpdate([TextContent("")], role=ChatRole.ASSISTANT)]
        for text in texts:
            yield [ChatResponseUpdate([TextContent(text)])]
        yield [ChatResponseUpdate([], finish_reason=ChatFinishReason(finish))]
        yield [ChatResponseUpdate([UsageContent(UsageDetails(output_token_count=3))])]

    return gen()


async def drain(
    runs: AsyncIterator[list[ChatResponseUpdate]],
) -> tuple[list[ChatResponseUpdate], Exception | None]:
    seen: list[ChatResponseUpdate] = []
    try:
        async for run in runs:
            seen.extend(run)
    except ConstraintViolationError as error:
        return seen, error
    return seen, None


def test_a_stream_that_obeys_passes_through_untouched() -> None:
    plan = Enforcement("vllm", response_format=REGEX)
    seen, error = asyncio.run(drain(check_runs(runs_of("123", "-", "abc"), plan)))
    assert error is None and "".join(u.text for u in seen) == "123-abc" and len(seen) == 6


def test_a_stream_that_violates_raises_after_the_last_update_reached_the_caller() -> None:
    plan = Enforcement("sglang", response_format=CHOICE)
    seen, error = asyncio.run(drain(enforce_runs(runs_of("may", "be"), plan)))
    assert isinstance(error, ConstraintViolationError)
    assert len(seen) == 5  # every update, usage included, came first
    assert error.response.text == "maybe" and error.response.usage is not None
    assert error.response.usage.output_token_count == 3


def test_a_cut_stream_says_so() -> None:
    plan = Enforcement("llamacpp", response_format=JSON_SCHEMA)
    _, error = asyncio.run(drain(check_runs(runs_of('{"city"', finish="length"), plan)))
    assert isinstance(error, ConstraintViolationError) and "cut short" in error.problem


# --- the plan ---------------------------------------------------------------------------------


def test_the_plan_is_none_for_a_request_that_asks_for_nothing() -> None:
    assert enforcement_for(None, PROFILES["vllm"]) is None
    assert enforcement_for(ChatOptions(temperature=0.1), PROFILES["vllm"]) is None
    assert (
        enforcement_for(ChatOptions(response_format=ChatResponseFormat.TEXT), PROFILES["vllm"])
        is None
    )


def test_the_plan_checks_what_was_sent() -> None:
    plan = enforcement_for(ChatOptions(response_format=REGEX), PROFILES["vllm"])
    assert plan is not None and plan.response_format == REGEX and plan.backend == "vllm"
    # a guided key translated is checked too
    plan = enforcement_for(
        ChatOptions(additional_properties={"guided_choice": ["a"]}), PROFILES["vllm"]
    )
    assert plan is not None and plan.response_format == ChatResponseFormat.choice(["a"])
    # a refused format (sent without it under warn or ignore) and a grammar are not
    assert enforcement_for(ChatOptions(response_format=REGEX), PROFILES["llamacpp"]) is None
    grammar = ChatResponseFormat.grammar('root ::= "a"')
    assert enforcement_for(ChatOptions(response_format=grammar), PROFILES["llamacpp"]) is None


def test_enforce_response_runs_the_check() -> None:
    plan = Enforcement("vllm", response_format=CHOICE)
    assert enforce_response(answer("yes"), plan).text == "yes"
    with pytest.raises(ConstraintViolationError):
        enforce_response(answer("perhaps"), plan)


# --- with get_response_as: one typed error -----------------------------------------------------


class _Answering:
    """A client whose answer runs the wire check, as the wire client's does."""

    def __init__(self, text: str) -> None:
        self.text = text

    async def get_response(
        self, messages: ChatInput, options: ChatOptions | None = None
    ) -> ChatResponse:
        assert options is not None and options.response_format is not None
        plan = Enforcement("vllm", response_format=options.response_format)
        return check_response(answer(self.text), plan)


def test_get_response_as_raises_its_own_error_not_a_violation() -> None:
    from pydantic import BaseModel

    from providers import StructuredOutputError

    class Weather(BaseModel):
        celsius: int

    client: Any = _Answering('{"celsius": "warm"}')
    with pytest.raises(StructuredOutputError) as info:
        asyncio.run(get_response_as(client, Weather, "hi"))
    assert not isinstance(info.value, ConstraintViolationError)
    assert info.value.reason == "schema_mismatch"
    right: Any = _Answering('{"celsius": 3}')
    assert asyncio.run(get_response_as(right, Weather, "hi")).value.celsius == 3

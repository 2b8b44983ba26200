"""The honours probes of ``oaicompat check``: what each server answer means.

The probes run on a scripted client here, so each decision (honoured, enforced here, not
honoured, not probed, refused) is tested on the answer alone, whatever the mappings send; the
report as the command prints it is in ``test_check_honours_report.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from capabilities.option_verdicts import OptionVerdict, refusal
from providers.abstractions.chat_response import ChatResponse
from providers.abstractions.contents import FunctionCallContent, TextContent, TextReasoningContent
from providers.abstractions.errors import ConstraintViolationError, InvalidRequestError
from providers.abstractions.messages import ChatMessage
from providers.abstractions.open_values import ChatFinishReason, ChatRole
from providers.abstractions.options import ChatOptions
from providers.abstractions.response_update import ChatResponseUpdate
from providers.backends import PROFILES, Backend
from providers.cli.check_honours import (
    HONOURS_PROBES,
    HonoursContext,
    client_settings,
    run_probe,
)

CONTEXT = HonoursContext(PROFILES[Backend.VLLM], "qwen3")
PROBES = dict(HONOURS_PROBES)


class _Answers:
    """A ``ChatClient`` giving one scripted answer (or error) per call, in order."""

    def __init__(self, *answers: ChatResponse | BaseException) -> None:
        self.answers = list(answers)
        self.options: list[ChatOptions | None] = []

    def _next(self, options: ChatOptions | None) -> ChatResponse:
        self.options.append(options)
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    async def get_response(self, messages: Any, options: ChatOptions | None = None) -> ChatResponse:
        return self._next(options)

    async def get_streaming_response(
        self, messages: Any, options: ChatOptions | None = None
    ) -> AsyncIterator[ChatResponseUpdate]:
        answer = self._next(options)
        message = answer.messages[0]
        yield ChatResponseUpdate(
            list(message.contents),
            ChatRole.ASSISTANT,
            answer.finish_reason,
            additional_properties=dict(answer.additional_properties) or None,
        )

    async def aclose(self) -> None:
        pass


def _answer(
    text: str = "",
    reasoning: str = "",
    calls: int = 0,
    finish: ChatFinishReason = ChatFinishReason.STOP,
    raw: Any = None,
    **properties: Any,
) -> ChatResponse:
    contents: list[Any] = []
    if reasoning:
        contents.append(TextReasoningContent(reasoning))
    if text:
        contents.append(TextContent(text))
    for n in range(calls):
        contents.append(FunctionCallContent(f"c{n}", "get_weather", {"city": "Paris"}))
    response = ChatResponse(
        messages=[ChatMessage(ChatRole.ASSISTANT, contents)], finish_reason=finish, raw=raw
    )
    response.additional_properties.update(properties)
    return response


def _raw_calls(count: int) -> dict[str, Any]:
    calls = [{"id": f"c{n}", "type": "function"} for n in range(count)]
    return {"choices": [{"index": 0, "message": {"role": "assistant", "tool_calls": calls}}]}


def _obeyed(option: str) -> str:
    """The verdict of an option the answer shows obeyed: the table's when it is enforced here
    (the client checks it too), else honoured."""
    table = CONTEXT.table_row(option)
    return "enforced here" if table.verdict == "enforced here" else "honoured"


async def _probe(option: str, client: _Answers) -> OptionVerdict:
    return await run_probe(option, PROBES[option], client, CONTEXT)


# --- reasoning switched off ---------------------------------------------------------------------


async def test_reasoning_gone_with_effort_none_is_honoured_as_probed() -> None:
    client = _Answers(_answer("51"), _answer("51", reasoning="17 * 3 is 51"))
    row = await _probe("reasoning.effort=none", client)
    assert (row.verdict, row.provenance) == (_obeyed("reasoning.effort=none"), "probed")
    assert "12 chars of reasoning by default" in row.note
    off, default = client.options
    assert off is not None and off.reasoning is not None and off.reasoning.effort == "none"
    assert default is not None and default.reasoning is None


async def test_reasoning_kept_with_effort_none_is_not_honoured() -> None:
    client = _Answers(_answer("51", reasoning="still"), _answer("51", reasoning="thinking"))
    row = await _probe("reasoning.effort=none", client)
    assert (row.verdict, row.provenance) == ("not honoured", "probed")


async def test_a_model_that_never_reasons_cannot_show_it() -> None:
    row = await _probe("reasoning.effort=none", _Answers(_answer("51"), _answer("51")))
    table = CONTEXT.table_row("reasoning.effort=none")
    assert (row.verdict, row.provenance) == (table.verdict, "table")
    assert row.note.startswith("not probed: the model gave no reasoning by default")


async def test_a_refusal_sends_nothing_and_is_the_table_s() -> None:
    error = refusal("reasoning.effort", "vllm", "QwQ always thinks", family="qwq")
    client = _Answers(error)
    row = await _probe("reasoning.effort=none", client)
    assert (row.verdict, row.provenance, row.note) == ("refused", "table", "QwQ always thinks")
    assert len(client.options) == 1  # the refused request was the first, and the only one


# --- a choice constraint ------------------------------------------------------------------------


async def test_an_answer_in_the_choice_is_honoured() -> None:
    client = _Answers(_answer("yes"))
    row = await _probe("response_format=choice", client)
    expected = (_obeyed("response_format=choice"), "probed", "answered 'yes'")
    assert (row.verdict, row.provenance, row.note) == expected
    sent = client.options[0]
    assert sent is not None and sent.response_format is not None
    assert sent.response_format.choices == ("yes", "no")


async def test_an_answer_outside_the_choice_is_not_honoured() -> None:
    row = await _probe("response_format=choice", _Answers(_answer("The sky is blue.")))
    assert (row.verdict, row.provenance) == ("not honoured", "probed")
    assert "not one of yes, no" in row.note


async def test_a_broken_constraint_caught_here_is_enforced_here() -> None:
    caught = ConstraintViolationError(
        "the answer is not one of the choices",
        constraint="choice",
        problem="not a choice",
        response=_answer("maybe"),
    )
    row = await _probe("response_format=choice", _Answers(caught))
    assert (row.verdict, row.provenance) == ("enforced here", "probed")
    assert "ConstraintViolationError" in row.note


async def test_a_server_error_means_the_option_was_not_taken() -> None:
    error = InvalidRequestError("response_format type must be text or json_object", status=400)
    row = await _probe("response_format=choice", _Answers(error))
    assert (row.verdict, row.provenance) == ("not honoured", "probed")
    assert "InvalidRequestError" in row.note


# --- one tool call ------------------------------------------------------------------------------


async def test_two_calls_sent_and_one_kept_is_enforced_here() -> None:
    client = _Answers(_answer(calls=1, raw=_raw_calls(2)))
    row = await _probe("allow_multiple_tool_calls=false", client)
    assert (row.verdict, row.provenance) == ("enforced here", "probed")
    assert row.note == "the server sent 2 calls; the first kept here"
    sent = client.options[0]
    assert sent is not None and sent.allow_multiple_tool_calls is False
    assert len(sent.tool_declarations()) == 2


async def test_one_call_sent_is_the_server_s_doing() -> None:
    row = await _probe(
        "allow_multiple_tool_calls=false", _Answers(_answer(calls=1, raw=_raw_calls(1)))
    )
    assert (row.verdict, row.provenance) == ("honoured", "probed")
    assert row.note == "the server sent one call"


async def test_two_calls_kept_is_not_honoured() -> None:
    row = await _probe(
        "allow_multiple_tool_calls=false", _Answers(_answer(calls=2, raw=_raw_calls(2)))
    )
    assert (row.verdict, row.note) == ("not honoured", "2 calls came back")


async def test_no_call_at_all_is_not_a_failure() -> None:
    row = await _probe("allow_multiple_tool_calls=false", _Answers(_answer("It is sunny.")))
    assert row.provenance == "table"
    assert row.verdict == CONTEXT.table_row("allow_multiple_tool_calls=false").verdict
    assert row.note.startswith("not probed: the model made no tool call")


# --- stop sequences -----------------------------------------------------------------------------


async def test_a_reported_stop_is_applied() -> None:
    client = _Answers(_answer("one two three four ", stop_sequence="five"))
    row = await _probe("stop_sequences", client)
    assert (row.verdict, row.provenance) == (_obeyed("stop_sequences"), "probed")
    assert "matched stop is reported" in row.note
    sent = client.options[0]
    assert sent is not None and sent.stop_sequences == ["five"]


async def test_text_past_the_stop_is_not_honoured() -> None:
    row = await _probe("stop_sequences", _Answers(_answer("one two three four five six")))
    assert (row.verdict, row.provenance) == ("not honoured", "probed")


async def test_a_stop_before_the_stop_string_without_a_report_is_still_applied() -> None:
    row = await _probe("stop_sequences", _Answers(_answer("one two three four")))
    assert (row.provenance, row.note) == (
        "probed",
        "stopped before 'five'; no matched stop reported",
    )


async def test_an_answer_that_never_reaches_the_stop_cannot_show_it() -> None:
    row = await _probe(
        "stop_sequences", _Answers(_answer("one two", finish=ChatFinishReason.LENGTH))
    )
    assert row.provenance == "table"
    assert row.note.startswith("not probed: the answer never reached 'five'")


# --- the client ---------------------------------------------------------------------------------


def test_the_family_goes_to_a_client_that_takes_one() -> None:
    assert client_settings("chat", "qwen3") == {
        "model_family": "qwen3",
        "unsupported_options": "raise",
    }
    assert client_settings("responses", None) == {"unsupported_options": "raise"}


@pytest.mark.parametrize("option", [name for name, _ in HONOURS_PROBES])
def test_every_probe_has_a_table_row(option: str) -> None:
    row = CONTEXT.table_row(option)
    assert (row.option, row.backend, row.provenance) == (option, "vllm", "table")

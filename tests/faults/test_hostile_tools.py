"""Issue 32 item 14: a tool never crashes the tool loop, whatever it raises or returns.

A tool's exception is formatted for the model (with ``include_detailed_errors``) and an
``InvalidArgumentsError``'s message always is; a return value is written as the next request's
``tool`` message. Each of those called ``str()`` (or ``repr()``) on the tool's object, and an
object whose ``__str__`` raises ended the loop with that object's untyped error: at once for an
exception, on the next request for a value (where a circular value also ended it, typed but
fatal). Now the model gets a safe text in its place, the loop goes on, the log event is
written, and the caller finds the object's error on the result.

Through the real wire client over a real socket, streamed and not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, cast

import pytest
from structlog.testing import capture_logs

from providers import (
    AIFunction,
    ChatOptions,
    ChatResponse,
    FunctionCallContent,
    FunctionInvokingChatClient,
    FunctionResultContent,
    InvalidArgumentsError,
    OpenAiCompatibleChatClient,
    create_chat_client,
)
from providers.layers.function_invocation import FUNCTION_EXCEPTION
from tests.faults.helpers import FAST, PROMPT, consume, whole
from tests.faults.server import FaultServer, Reply


class Unprintable:
    """An object neither ``str`` nor ``repr`` can show, nor JSON or pydantic write."""

    def __str__(self) -> str:
        raise RuntimeError("no str for you")

    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")


class UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str for you")

    def __repr__(self) -> str:
        raise RuntimeError("no repr for you")


class NonStrStr(Exception):
    def __str__(self) -> Any:  # returns a non-str: str() raises TypeError
        return 42  # noqa: PLE0307  # (the point: str() of it raises TypeError)


def _circular() -> Any:
    value: list[Any] = []
    value.append(value)
    return value


class Tool(AIFunction):
    """A hand-written tool returning or raising whatever the test gives it."""

    def __init__(self, outcome: Any) -> None:
        super().__init__("probe", "A tool.", {"type": "object", "properties": {}})
        object.__setattr__(self, "_outcome", outcome)

    async def invoke(self, arguments: Mapping[str, Any]) -> Any:
        outcome = object.__getattribute__(self, "_outcome")
        if callable(outcome):
            outcome = outcome()
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def _completion(message: dict[str, Any], finish: str) -> Reply:
    choice = {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
    body = {"id": "c", "object": "chat.completion", "model": "m", "choices": [choice]}
    return whole(json.dumps(body).encode())


CALL = _completion(
    {
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "probe", "arguments": "{}"}}
        ],
    },
    "tool_calls",
)
DONE = _completion({"content": "done"}, "stop")

HOSTILE = {
    "raises-unprintable": UnprintableError(),
    "raises-str-not-a-str": NonStrStr(),
    "invalid-arguments-unprintable": InvalidArgumentsError(Unprintable()),
    "returns-unprintable": Unprintable(),
    "returns-unprintable-inside": lambda: {"rows": [Unprintable()]},
    "returns-circular": _circular,
}


@pytest.mark.parametrize("detailed", [True, False], ids=["detailed", "plain"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("outcome", HOSTILE.values(), ids=HOSTILE.keys())
async def test_a_hostile_tool_gives_the_model_a_safe_text_and_the_loop_goes_on(
    outcome: Any, stream: bool, detailed: bool
) -> None:
    options = ChatOptions(tools=[Tool(outcome)])
    async with FaultServer([CALL, DONE]) as server:
        # the standard pipeline (retry, text recovery, telemetry) under the loop: the next
        # request carries the result through every layer
        pipeline = create_chat_client(server.base_url, "m", timeouts=FAST)
        loop = FunctionInvokingChatClient(pipeline, include_detailed_errors=detailed)
        with capture_logs() as logs:
            if stream:
                updates, error = await consume(loop.get_streaming_response(PROMPT, options))
                assert error is None
                response = ChatResponse.from_updates(updates)
            else:
                response = await loop.get_response(PROMPT, options)
        await pipeline.aclose()
        assert response.text.endswith("done")  # the loop reached the model's answer
        assert server.attempts == 2
        # what the model was sent in place of the object: a text it can read
        sent = server.requests[1].json()["messages"]
        [tool_message] = [m for m in sent if m["role"] == "tool"]
        assert tool_message["content"].startswith("Error: ")
        assert "no str for you" not in tool_message["content"]
    # (a streamed loop coalesced by from_updates is one message with the result inline)
    [result] = [
        c for m in response.messages for c in m.contents if isinstance(c, FunctionResultContent)
    ]
    assert result.result == tool_message["content"]
    # the caller still finds what went wrong: the tool's exception, or the one writing raised
    assert isinstance((result.additional_properties or {}).get(FUNCTION_EXCEPTION), Exception)
    # the failure was logged (arguments the model got wrong are its own business, not a
    # warning), and every event can be rendered: none holds the tool's object
    prefix = "oaicompat.function_invocation."
    warned = [event for event in logs if event["event"].startswith(prefix)]
    assert len(warned) == (0 if isinstance(outcome, InvalidArgumentsError) else 1)
    for event in logs:
        repr(event)


async def test_a_printable_value_is_still_sent_as_written() -> None:
    options = ChatOptions(tools=[Tool({"temp": 21, "unit": "C"})])
    async with (
        FaultServer([CALL, DONE]) as server,
        OpenAiCompatibleChatClient(server.base_url, "m", timeouts=FAST) as wire,
    ):
        response = await FunctionInvokingChatClient(wire).get_response(PROMPT, options)
        [tool_message] = [m for m in server.requests[1].json()["messages"] if m["role"] == "tool"]
    assert json.loads(tool_message["content"]) == {"temp": 21, "unit": "C"}
    assert response.text == "done"


class Undecidable:
    def __bool__(self) -> bool:
        raise RuntimeError("neither yes nor no")


def undecidable_verdict(call: FunctionCallContent) -> bool:
    # Deliberately not a bool, against ``approve``'s signature: a hostile caller's check whose
    # truth raises. The cast only lets the checker accept the wrong type this test is about.
    return cast(bool, Undecidable())


async def test_an_approval_whose_verdict_cannot_be_read_is_a_failed_check() -> None:
    """``approve`` is the caller's code beside the tools: a verdict whose truth raises is the
    check failing (the call is not run), not the loop."""
    ran: list[bool] = []
    options = ChatOptions(tools=[Tool(lambda: ran.append(True))])
    async with FaultServer([CALL, DONE]) as server:
        pipeline = create_chat_client(server.base_url, "m", timeouts=FAST)
        loop = FunctionInvokingChatClient(pipeline, approve=undecidable_verdict)
        response = await loop.get_response(PROMPT, options)
        await pipeline.aclose()
        [tool_message] = [m for m in server.requests[1].json()["messages"] if m["role"] == "tool"]
    assert tool_message["content"] == "Error: the approval check failed."
    assert ran == [] and response.text == "done"

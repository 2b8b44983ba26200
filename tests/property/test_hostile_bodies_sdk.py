"""Issue 32's done-bar: the hostile answers of ``test_hostile_bodies`` through the OpenAI SDK.

The same pieces (random bytes, JSON nested past any limit, lines past ``max_event_bytes``, a
wrong type in any field, floods, gzip bombs, under any status, type and encoding), with tool
calls a server could send that the pipeline must flag (a tool the request never offered,
arguments that do not parse or nest too deep, ``<tool_call>`` text naming an unoffered tool, a
lone surrogate escape), reach an unmodified ``AsyncOpenAI`` through ``OaicompatTransport``
(httpx) and ``OaicompatHttpx2Transport`` (httpx2), streamed and whole. Whatever the answer:

* only the SDK's own typed errors escape (``openai.APIError``), and never its
  ``APIConnectionError``: the SDK wraps any exception a transport raises in that one, so it
  would hide a crash of the pipeline (the pipeline's own connection failures are statuses);
* every tool call the SDK delivers is executable: an offered tool, arguments a JSON object
  within the depth limit. A flagged call is never in ``tool_calls``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from providers import create_chat_client
from providers.transport.json_guard import nests_deeper
from tests.integrations.frameworks import require
from tests.integrations.test_openai_transport import openai_client
from tests.property.test_hostile_bodies import (
    _PIECES,
    LIMITS,
    RETRY,
    TIMEOUTS,
    Answer,
    _Cut,
    _event,
    _nested,
    answers,
)

openai = require("openai")

OFFERED = ("f", "get_weather")
TOOLS = [{"type": "function", "function": {"name": name, "parameters": {}}} for name in OFFERED]
SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _call(name: str, arguments: str, index: int = 0) -> bytes:
    entry = {"index": index, "id": f"c{index}", "function": {"name": name, "arguments": arguments}}
    return _event({"choices": [{"index": 0, "delta": {"tool_calls": [entry]}}]})


def _text(text: str) -> bytes:
    return _event({"choices": [{"index": 0, "delta": {"content": text}}]})


_TOO_DEEP = '{"a": ' + _nested(LIMITS.max_json_depth) + "}"
_ARGUMENTS = st.sampled_from(
    ['{"city": "Paris"}', "{}", "", '{"city": "Par', "[1, 2]", "null", '"x"', "{broken", _TOO_DEEP]
)
_CALL_PIECES = st.one_of(
    st.builds(_call, st.sampled_from([*OFFERED, "delete_all", ""]), _ARGUMENTS, st.integers(0, 2)),
    st.builds(
        lambda name, arguments: _text(
            f'<tool_call>\n{{"name": "{name}", "arguments": {arguments or "{}"}}}\n</tool_call>'
        ),
        st.sampled_from(["get_weather", "delete_all"]),
        _ARGUMENTS,
    ),
    st.just(_text("<tool_call>\n")),  # a block split over chunks, or never closed
    st.just(_text('{"name": "delete_all", "arguments": {}}\n</tool_call>')),
    st.just(b'data: {"choices": [{"index": 0, "delta": {"content": "a\\ud800b"}}]}\n\n'),
    st.just(_event({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})),
    st.just(_event({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]})),
)


@st.composite
def sdk_answers(draw: st.DrawFn) -> Answer:
    """``answers()``, or (three times in four) a stream of call pieces and the other pieces
    under 200, usually ended properly."""
    if draw(st.integers(0, 3)) == 0:
        return draw(answers())
    pieces = st.one_of(_CALL_PIECES, _CALL_PIECES, _PIECES)
    body = b"".join(draw(st.lists(pieces, min_size=1, max_size=8)))
    # Usually a proper end, so that the calls are finished and reach the SDK.
    finish = draw(st.sampled_from(["tool_calls", "stop", "length", None]))
    if finish is not None:
        body += _event({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    if draw(st.integers(0, 3)) > 0:
        body += _event("[DONE]")
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=6)))
    headers = {"content-type": "text/event-stream"}
    return Answer(200, headers, body, cuts, draw(st.booleans()))


def _executable(name: Any, arguments: Any) -> bool:
    if name not in OFFERED or not isinstance(arguments, str):
        return False
    if not arguments.strip():
        return True
    try:
        value = json.loads(arguments)
    except ValueError:
        return False
    return isinstance(value, dict) and not nests_deeper(value, arguments, LIMITS.max_json_depth)


async def _run(answer: Answer, flavour: str) -> tuple[list[tuple[Any, Any]], BaseException | None]:
    """The calls the SDK delivered (``(name, arguments)``) and the error that ended the call."""

    def handler(request: httpx.Request) -> httpx.Response:
        stream = _Cut(answer.body, answer.cuts)
        return httpx.Response(answer.status, headers=answer.headers, stream=stream)

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    pipeline = create_chat_client(
        "http://llm.test",
        "m",
        limits=LIMITS,
        retry=RETRY,
        timeouts=TIMEOUTS,
        http_client=http,
        telemetry=False,
    )
    client = openai_client(pipeline, flavour)
    calls: list[tuple[Any, Any]] = []
    messages = [{"role": "user", "content": "hi"}]
    try:
        if answer.streaming:
            chunks = await client.chat.completions.create(
                model="x", messages=messages, tools=TOOLS, stream=True
            )
            async for chunk in chunks:
                for choice in chunk.choices:
                    for call in choice.delta.tool_calls or ():
                        function = call.function
                        calls.append((function and function.name, function and function.arguments))
        else:
            completion = await client.chat.completions.create(
                model="x", messages=messages, tools=TOOLS
            )
            for choice in completion.choices:
                for call in choice.message.tool_calls or ():
                    calls.append((call.function.name, call.function.arguments))
    except BaseException as error:  # (judged by the test)
        return calls, error
    finally:
        await client.close()
        await pipeline.aclose()
        await http.aclose()
    return calls, None


@pytest.mark.parametrize("flavour", ["httpx", "httpx2"])
@SETTINGS
@given(answer=sdk_answers())
def test_a_hostile_answer_reaches_the_sdk_as_its_typed_error_and_no_flagged_call(
    flavour: str, answer: Answer
) -> None:
    calls, error = asyncio.run(_run(answer, flavour))
    assert error is None or isinstance(error, openai.APIError), repr(error)
    assert not isinstance(error, openai.APIConnectionError), repr(error.__cause__)
    for name, arguments in calls:
        assert _executable(name, arguments), (name, arguments)

"""Issue 33: a server that ignores a constraint yields the typed error, never a silent
unconstrained answer; an option the server cannot honour is refused before anything is sent.

A real HTTP server on 127.0.0.1 (``FaultServer``) plays a server that accepts the constraint key
and answers without obeying it (vLLM >= 0.12 with ``guided_*``, a proxy that strips the key):
through the real wire client, streamed and whole, the answer ends in a
``ConstraintViolationError`` that keeps the whole response, usage included, once the caller has
had every update. The request that reached it proves the mapping.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers import (
    ChatOptions,
    ChatResponseFormat,
    ConstraintViolationError,
    OpenAiCompatibleChatClient,
)
from providers.abstractions.errors import UnsupportedOptionError
from tests.faults.helpers import DONE, FAST, PROMPT, ROLE, consume, seen_text, stream_reply, whole
from tests.faults.server import FaultServer, Reply, chunk, sse

USAGE = {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}


def _completion(text: str, finish: str = "stop") -> Reply:
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": text},
        "finish_reason": finish,
    }
    body = {
        "id": "c",
        "object": "chat.completion",
        "model": "m",
        "choices": [choice],
        "usage": USAGE,
    }
    return whole(json.dumps(body).encode())


def _stream(*texts: str, finish: str = "stop") -> Reply:
    usage = sse(
        {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [], "usage": USAGE}
    )
    pieces = [sse(chunk({"content": text})) for text in texts]
    return stream_reply(ROLE, *pieces, sse(chunk({}, finish)), usage, DONE)


GUIDED = ChatOptions(additional_properties={"guided_regex": "[0-9]{3}"})


async def test_a_whole_answer_that_ignores_the_constraint_is_the_typed_error() -> None:
    async with (
        FaultServer([_completion("I think it is 42.")]) as server,
        OpenAiCompatibleChatClient(server.base_url, "m", backend="vllm", timeouts=FAST) as client,
    ):
        with pytest.raises(ConstraintViolationError) as info:
            await client.get_response(PROMPT, GUIDED)
        sent = server.requests[-1].json()
    assert sent["structured_outputs"] == {"regex": "[0-9]{3}"} and "guided_regex" not in sent
    error = info.value
    assert error.constraint == "regex" and error.backend == "vllm"
    assert error.response.text == "I think it is 42."
    assert error.response.usage is not None and error.response.usage.output_token_count == 4
    assert "I think" not in str(error) and "secret-prompt" not in str(error)


async def test_a_stream_that_ignores_the_constraint_ends_in_the_typed_error() -> None:
    options = ChatOptions(response_format=ChatResponseFormat.choice(["yes", "no"]))
    async with (
        FaultServer([_stream("Well, ", "maybe")]) as server,
        OpenAiCompatibleChatClient(server.base_url, "m", backend="sglang", timeouts=FAST) as client,
    ):
        updates, error = await consume(client.get_streaming_response(PROMPT, options))
        sent = server.requests[-1].json()
    assert sent["regex"] == "(?:yes|no)"  # SGLang has no choice key
    assert seen_text(updates) == "Well, maybe"  # the caller had every update first
    assert isinstance(error, ConstraintViolationError)
    assert error.constraint == "choice" and error.response.text == "Well, maybe"
    assert error.response.usage is not None and error.response.usage.total_token_count == 13


@pytest.mark.parametrize("stream", [False, True])
async def test_a_cut_json_answer_is_a_violation_that_says_so(stream: bool) -> None:
    fmt = ChatResponseFormat.json_schema({"type": "object", "required": ["n"]})
    reply = _stream('{"n": ', finish="length") if stream else _completion('{"n": ', "length")
    async with (
        FaultServer([reply]) as server,
        OpenAiCompatibleChatClient(
            server.base_url, "m", backend="llamacpp", timeouts=FAST
        ) as client,
    ):
        if stream:
            _, error = await consume(
                client.get_streaming_response(PROMPT, ChatOptions(response_format=fmt))
            )
        else:
            with pytest.raises(ConstraintViolationError) as info:
                await client.get_response(PROMPT, ChatOptions(response_format=fmt))
            error = info.value
    assert isinstance(error, ConstraintViolationError) and "cut short" in error.problem


@pytest.mark.parametrize("stream", [False, True])
async def test_an_answer_that_obeys_passes(stream: bool) -> None:
    reply = _stream("12", "3") if stream else _completion("123")
    async with (
        FaultServer([reply]) as server,
        OpenAiCompatibleChatClient(server.base_url, "m", backend="vllm", timeouts=FAST) as client,
    ):
        if stream:
            updates, error = await consume(client.get_streaming_response(PROMPT, GUIDED))
            assert error is None and seen_text(updates) == "123"
        else:
            assert (await client.get_response(PROMPT, GUIDED)).text == "123"


@pytest.mark.parametrize("stream", [False, True])
async def test_a_refused_option_sends_nothing(stream: bool) -> None:
    options = ChatOptions(response_format=ChatResponseFormat.regex("[0-9]+"))
    async with (
        FaultServer([_completion("1")]) as server,
        OpenAiCompatibleChatClient(
            server.base_url, "m", backend="llamacpp", timeouts=FAST
        ) as client,
    ):
        if stream:
            _, error = await consume(client.get_streaming_response(PROMPT, options))
        else:
            with pytest.raises(UnsupportedOptionError) as info:
                await client.get_response(PROMPT, options)
            error = info.value
        assert server.attempts == 0
    assert isinstance(error, UnsupportedOptionError) and error.option == "response_format.regex"


async def test_under_warn_the_request_goes_out_without_it_and_nothing_is_checked() -> None:
    options = ChatOptions(response_format=ChatResponseFormat.regex("[0-9]+"))
    async with (
        FaultServer([_completion("no digits")]) as server,
        OpenAiCompatibleChatClient(
            server.base_url, "m", backend="llamacpp", timeouts=FAST, unsupported_options="warn"
        ) as client,
    ):
        response = await client.get_response(PROMPT, options)
        sent: dict[str, Any] = server.requests[-1].json()
    assert response.text == "no digits"
    assert not {"grammar", "regex", "response_format"} & set(sent)

"""Issue #22: every captured request, and every answer, survives the OpenAI-dict conversions.

Requests: each message through ``ChatMessage.from_openai`` and ``.to_openai()``, the options
through ``ChatOptions.from_openai`` and ``.to_openai()``, give back the request as captured
(equal JSON). Answers: what the client made of a recorded body, written with
``ChatResponseUpdate.to_openai_chunk()`` (or ``ChatResponse.to_openai()``) and read by a fresh
``ChunkNormalizer``, is the same ``ChatResponse``, except that a flagged call (a call cut off
by the token limit) reads back as its text: OpenAI's format carries no flag (issue 32). A new
transcript adds cases here with no new test code.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from providers import (
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    FunctionCallContent,
    OpenAiCompatibleChatClient,
    ProviderError,
)
from providers.abstractions.openai_answers import flagged_call_text
from providers.chat_completions.normalize import ChunkNormalizer
from providers.replay.transcripts import Transcript, iter_transcripts, recorded_offer, summarize
from tests.transcripts.replaying import BASE_URL, Pieces, is_streaming_request

TRANSCRIPTS = list(iter_transcripts())
REQUESTS = [t for t in TRANSCRIPTS if isinstance(t.sidecar.get("request"), dict)]
CHAT_REQUESTS = [t for t in REQUESTS if "messages" in t.sidecar["request"]]


def as_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def test_the_transcripts_hold_chat_requests_to_check() -> None:
    assert len(CHAT_REQUESTS) >= 90
    assert {t.backend for t in CHAT_REQUESTS} == {"llamacpp", "llama-cpp-python", "vllm", "sglang"}


@pytest.mark.parametrize("transcript", CHAT_REQUESTS, ids=lambda t: t.id)
def test_captured_request_round_trips(transcript: Transcript) -> None:
    request = transcript.sidecar["request"]
    messages = [ChatMessage.from_openai(message) for message in request["messages"]]
    options = ChatOptions.from_openai(request)
    rebuilt = {"messages": [message.to_openai() for message in messages], **options.to_openai()}
    if "stream" in request:  # the call made, not an option
        rebuilt["stream"] = request["stream"]
    assert as_json(rebuilt) == as_json(request)


async def replayed_updates(
    transcript: Transcript,
) -> tuple[list[ChatResponseUpdate], ChatResponse | None]:
    """The updates the client yielded (up to an error), and for a non-streamed call its
    response."""
    headers = {"content-type": transcript.sidecar["response"].get("content_type", "")}

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(transcript.status, headers=headers, stream=Pieces([transcript.body]))

    updates: list[ChatResponseUpdate] = []
    response: ChatResponse | None = None
    offer = recorded_offer(transcript.sidecar.get("request"))  # the tools the calls were made with
    async with OpenAiCompatibleChatClient(
        BASE_URL,
        backend=transcript.backend,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(answer)),
    ) as client:
        try:
            if is_streaming_request(transcript):
                async for update in client.get_streaming_response("hello", offer):
                    updates.append(update)
            else:
                response = await client.get_response("hello", offer)
        except ProviderError as error:
            response = error.partial_response
    return updates, response


def read_back_chunks(updates: list[ChatResponseUpdate]) -> ChatResponse:
    """Each update as a chunk, calls numbered on per choice as an adapter would, read by a
    normaliser that knows no backend."""
    normalizer = ChunkNormalizer()
    numbered: dict[int, int] = {}
    read: list[ChatResponseUpdate] = []
    for update in updates:
        first = numbered.get(update.choice_index, 0)
        chunk = json.loads(json.dumps(update.to_openai_chunk(tool_call_index=first)))
        numbered[update.choice_index] = first + sum(
            isinstance(content, FunctionCallContent) for content in update.contents
        )
        read.extend(normalizer.feed(chunk))
    read.extend(normalizer.finish())
    return ChatResponse.from_updates(read)


def read_back_completion(response: ChatResponse) -> ChatResponse:
    body = json.loads(json.dumps(response.to_openai()))
    return ChatResponse.from_updates(ChunkNormalizer().normalize_completion(body))


def assert_same_response(got: ChatResponse, want: ChatResponse) -> None:
    flagged = [flagged_call_text(call) for call in want.tool_calls if call.error is not None]
    if flagged:
        # Issue 32: a flagged call is written as its text, never as a tool call.
        assert got.tool_calls == [call for call in want.tool_calls if call.error is None]
        rest = got.text
        for text in flagged:
            assert text in rest
            rest = rest.replace(text, "", 1)
        assert rest == want.text
        assert got.usage == want.usage
        return
    assert summarize(got) == summarize(want)
    assert got.usage == want.usage
    if want.messages:
        assert got == want
    else:
        # An error before any output: `choices: []` reads back as one empty message (a body
        # always gives an update), which says the same.
        assert [message.contents for message in got.messages] in ([], [[]])


@pytest.mark.parametrize("transcript", [t for t in TRANSCRIPTS if t.is_stream], ids=lambda t: t.id)
async def test_streamed_updates_written_as_chunks_read_back_the_same(
    transcript: Transcript,
) -> None:
    updates, _ = await replayed_updates(transcript)
    # llama-cpp-python ends a stream it failed to start with no byte at all (docs/wire.md §7)
    assert updates or transcript.status != 200 or not transcript.body
    want = ChatResponse.from_updates(updates)
    assert_same_response(read_back_chunks(updates), want)
    assert_same_response(read_back_completion(want), want)


@pytest.mark.parametrize(
    "transcript", [t for t in TRANSCRIPTS if not t.is_stream], ids=lambda t: t.id
)
async def test_response_written_as_a_completion_reads_back_the_same(
    transcript: Transcript,
) -> None:
    _, response = await replayed_updates(transcript)
    if response is None:
        assert transcript.expected["error"] is not None  # an error body: nothing to write
        return
    assert_same_response(read_back_completion(response), response)

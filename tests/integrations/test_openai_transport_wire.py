"""What ``OaicompatTransport`` puts on the wire, read by the OpenAI SDK itself and byte by byte.

Errors: a failure before any output is an HTTP status with OpenAI's envelope (the SDK raises
its status-typed exception, ``BadRequestError``…; LangChain's ``ChatOpenAI`` turns a context
overflow into its ``ContextOverflowError``), a failure mid-stream is an ``error`` event (the SDK
raises ``APIError`` after the text that came). Closing the SDK's stream hangs up on the server.
Other paths pass through to the real network; the stream itself is clean OpenAI SSE.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from contextlib import aclosing
from pathlib import Path
from typing import Any

import httpx
import pytest

from providers import DelegatingChatClient, create_chat_client
from providers.integrations.openai import OaicompatTransport
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from tests.integrations.frameworks import require
from tests.integrations.replay_turns import QUESTION, SCENARIOS, TRANSCRIPTS, TwoTurnServer
from tests.integrations.servers import InThread, StallingServer, serve_recording
from tests.integrations.test_openai_transport import ANSWERS, openai_client

openai = require("openai")
FLAVOURS = ["httpx", "httpx2"]
MESSAGES = [{"role": "user", "content": QUESTION}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]


def pipeline(base_url: str, backend: str = "vllm") -> Any:
    return create_chat_client(f"{base_url}/v1", "served", backend=backend, telemetry=False)


@pytest.mark.parametrize("flavour", FLAVOURS)
async def test_context_overflow_is_the_sdks_bad_request(flavour: str) -> None:
    async with serve_recording("vllm", "captured--plain--error-context-exceeded") as server:
        client = openai_client(pipeline(server.base_url), flavour)
        with pytest.raises(openai.BadRequestError) as caught:
            await client.chat.completions.create(model="x", messages=MESSAGES)
        await client.close()
    error = caught.value
    assert error.status_code == 400
    assert error.code == "context_length_exceeded"
    assert "maximum context length is 4096" in error.message
    # The pipeline retries on its own, so the SDK is told not to repeat the request.
    assert error.response.headers["x-should-retry"] == "false"
    assert len(server.requests) == 1


async def test_langchains_chat_openai_sees_an_invalid_request() -> None:
    """``ChatOpenAI`` raises its ``ContextOverflowError`` only when the SDK's message holds
    one of OpenAI's phrases, which vLLM's does not; the status still makes it LangChain's
    ``ModelInvalidRequestError`` (and the SDK's ``BadRequestError``)."""
    langchain_openai = require("langchain_openai")
    from langchain_core.exceptions import ModelInvalidRequestError

    async with serve_recording("vllm", "captured--plain--error-context-exceeded") as server:
        transport = OaicompatTransport(pipeline(server.base_url))
        llm = langchain_openai.ChatOpenAI(
            model="x",
            api_key="unused",
            base_url="http://oaicompat.invalid/v1",
            http_async_client=httpx.AsyncClient(transport=transport),
        )
        with pytest.raises(ModelInvalidRequestError) as caught:
            await llm.ainvoke(QUESTION)
        assert isinstance(caught.value, openai.BadRequestError)
        await transport.aclose()


@pytest.mark.parametrize("flavour", FLAVOURS)
async def test_a_mid_stream_error_is_an_error_event_after_the_text(flavour: str) -> None:
    async with serve_recording("vllm", "reconstructed--error-midstream") as server:
        client = openai_client(pipeline(server.base_url), flavour)
        stream = await client.chat.completions.create(model="x", messages=MESSAGES, stream=True)
        text: list[str] = []
        with pytest.raises(openai.APIError) as caught:
            async for chunk in stream:
                text += [c.delta.content or "" for c in chunk.choices]
        await client.close()
    assert "".join(text) == "Hello!"
    assert not isinstance(caught.value, openai.APIStatusError)
    assert "Internal server error" in caught.value.message


@pytest.mark.parametrize("flavour", FLAVOURS)
async def test_closing_the_sdks_stream_hangs_up_on_the_server(flavour: str) -> None:
    recording = TRANSCRIPTS / "vllm" / "captured--qwen3-hermes--stream-reasoning.sse"
    async with StallingServer(recording) as server:
        client = openai_client(pipeline(server.base_url), flavour)
        stream = await client.chat.completions.create(model="x", messages=MESSAGES, stream=True)
        first = await anext(aiter(stream))
        assert first.choices[0].delta.role == "assistant"
        await stream.close()
        await asyncio.wait_for(server.hung_up.wait(), 10)
        await client.close()


async def sse_lines(transport: Any, body: dict[str, Any]) -> list[Any]:
    async with httpx.AsyncClient(transport=transport) as http:
        reply = await http.post("http://oaicompat.invalid/v1/chat/completions", json=body)
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "text/event-stream"
    events = [line for line in reply.text.split("\n\n") if line]
    assert all(event.startswith("data: ") for event in events)
    return [json.loads(e[6:]) if e != "data: [DONE]" else "[DONE]" for e in events]


async def test_the_stream_is_clean_openai_sse() -> None:
    scenario = SCENARIOS["llamacpp"]
    body = {"model": "x", "messages": MESSAGES, "tools": TOOLS, "stream": True}
    recording = "captured--qwen25-plain--stream-text-tool-call-in-content"
    async with serve_recording("llamacpp", recording) as server:
        pipe = pipeline(server.base_url, "llamacpp")
        async with aclosing(pipe):
            plain = await sse_lines(OaicompatTransport(pipe), body)
            usage_body = {**body, "stream_options": {"include_usage": True}}
            with_usage = await sse_lines(OaicompatTransport(pipe), usage_body)
    # llama.cpp's `<tool_call>` text: one whole call, with an id, no text left over.
    for events in (plain, with_usage):
        assert events[-1] == "[DONE]"
        chunks = events[:-1]
        assert all(c["object"] == "chat.completion.chunk" and c["id"] for c in chunks)
        deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
        assert deltas[0]["role"] == "assistant"
        assert not any(d.get("content") for d in deltas)
        (calls,) = [d["tool_calls"] for d in deltas if "tool_calls" in d]
        (call,) = calls
        assert call["id"] and call["index"] == 0
        assert json.loads(call["function"]["arguments"]) == {"city": "Paris", "unit": "celsius"}
        finishes = [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]]
        assert finishes[-1] == "tool_calls"
        assert all("usage" not in c for c in chunks if c["choices"])
        assert all("transport_timestamps" not in json.dumps(c) for c in chunks)
    # Usage only when asked for: one chunk with no choices, just before [DONE].
    assert not any("usage" in c for c in plain[:-1])
    usage_chunk = with_usage[-2]
    assert usage_chunk["choices"] == []
    assert usage_chunk["usage"]["prompt_tokens"] == scenario.call_stream.count("input_token_count")
    assert usage_chunk["usage"]["completion_tokens"] == 52


async def test_a_body_that_is_not_a_chat_request_is_a_400() -> None:
    transport = OaicompatTransport(pipeline("http://127.0.0.1:9"))
    async with httpx.AsyncClient(transport=transport) as http:
        reply = await http.post("http://x/v1/chat/completions", content=b"{not json")
    assert reply.status_code == 400
    assert reply.json()["error"]["type"] == "invalid_request_error"


async def test_other_paths_pass_through_to_the_network() -> None:
    models = (TRANSCRIPTS / "vllm" / "discovery" / "plain--get-v1-models.raw").read_bytes()

    def reply(request: ReceivedRequest) -> RecordedReply:
        return RecordedReply(200 if request.path == "/v1/models" else 404, models)

    async with ReplayServer(reply) as server:
        transport = OaicompatTransport(pipeline("http://127.0.0.1:9"))
        client = openai.AsyncOpenAI(
            api_key="unused",
            base_url=f"{server.base_url}/v1",
            http_client=httpx.AsyncClient(transport=transport),
        )
        listed = [model.id async for model in client.models.list()]
        await client.close()
    assert listed == [m["id"] for m in json.loads(models)["data"]]


def write_config(path: Path, base_url: str) -> Path:
    path.write_text(
        "backends:\n"
        f'  replay: {{base_url: "{base_url}/v1", model_id: served, backend: llamacpp}}\n'
        "roles: {main: replay}\n"
    )
    return path


@pytest.mark.parametrize("request_model", [False, True])
async def test_from_config_and_whose_model_is_sent(tmp_path: Path, request_model: bool) -> None:
    async with TwoTurnServer(SCENARIOS["llamacpp"]) as server:
        config = write_config(tmp_path / "oaicompat.yaml", server.base_url)
        transport = OaicompatTransport.from_config(config, request_model=request_model)
        client = openai.AsyncOpenAI(
            api_key="unused",
            base_url="http://oaicompat.invalid/v1",
            http_client=httpx.AsyncClient(transport=transport),
        )
        answer = await client.chat.completions.create(
            model="sdk-model", messages=MESSAGES, tools=TOOLS
        )
        await client.close()
    assert answer.choices[0].finish_reason == "tool_calls"
    assert server.chat_requests[0]["model"] == ("sdk-model" if request_model else "served")


def test_the_sync_transport_serves_a_blocking_sdk_client() -> None:
    from providers.integrations.openai import OaicompatSyncTransport

    scenario = SCENARIOS["llamacpp"]
    with InThread(TwoTurnServer(scenario)) as server:
        transport = OaicompatSyncTransport(pipeline(server.base_url, "llamacpp"), owns_client=True)
        client = openai.OpenAI(
            api_key="unused",
            base_url="http://oaicompat.invalid/v1",
            http_client=httpx.Client(transport=transport),
        )
        stream = client.chat.completions.create(
            model="x", messages=MESSAGES, tools=TOOLS, stream=True
        )
        calls = [c for chunk in stream for d in chunk.choices for c in d.delta.tool_calls or ()]
        answer = client.chat.completions.create(model="x", messages=MESSAGES, tools=TOOLS)
        client.close()
        transport.close()
    assert [c.function.name for c in calls] == ["get_weather"]
    assert answer.choices[0].message.content == ANSWERS["llamacpp"]


def test_leaving_a_blocking_stream_early_hangs_up_on_the_server() -> None:
    from providers.integrations.openai import OaicompatSyncTransport

    recording = TRANSCRIPTS / "vllm" / "captured--qwen3-hermes--stream-reasoning.sse"
    with InThread(StallingServer(recording)) as server:
        transport = OaicompatSyncTransport(pipeline(server.base_url), owns_client=True)
        client = openai.OpenAI(
            api_key="unused",
            base_url="http://oaicompat.invalid/v1",
            http_client=httpx.Client(transport=transport),
        )
        stream = client.chat.completions.create(model="x", messages=MESSAGES, stream=True)
        next(iter(stream))
        stream.close()
        deadline = time.monotonic() + 10
        while not server.hung_up.is_set() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.hung_up.is_set()
        client.close()
        transport.close()


class _RecordsClose(DelegatingChatClient):
    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.closed_on: list[threading.Thread] = []

    async def aclose(self) -> None:
        self.closed_on.append(threading.current_thread())
        await super().aclose()


async def test_closing_an_unused_sync_transport_inside_a_running_loop_closes_the_pipeline() -> None:
    """Issue 34 item 5: an async application that built a blocking client and closes it from a
    coroutine, before any request; ``asyncio.run`` refused there and left the pipeline open."""
    from providers.integrations.openai import OaicompatSyncTransport

    client = _RecordsClose(pipeline("http://127.0.0.1:9"))
    transport = OaicompatSyncTransport(client, owns_client=True)
    transport.close()
    assert len(client.closed_on) == 1
    assert client.closed_on[0] is not threading.current_thread()  # on the transport's loop
    assert not any(t.name == "oaicompat-transport" for t in threading.enumerate())


def test_closing_an_unused_sync_transport_from_blocking_code_closes_the_pipeline() -> None:
    from providers.integrations.openai import OaicompatSyncTransport

    client = _RecordsClose(pipeline("http://127.0.0.1:9"))
    OaicompatSyncTransport(client, owns_client=True).close()
    borrowed = _RecordsClose(pipeline("http://127.0.0.1:9"))
    OaicompatSyncTransport(borrowed).close()
    assert len(client.closed_on) == 1
    assert borrowed.closed_on == []  # not the transport's to close


HEADERS = {"X-Session-ID": "thread-9", "X-Padded": " value "}


@pytest.mark.parametrize("flavour", [*FLAVOURS, "sync"])
def test_each_transport_forwards_the_callers_headers_not_the_sdks_own(flavour: str) -> None:
    """Issue 34 item 2, on the three transports (the matrix runs httpx2)."""
    from providers.integrations.openai import OaicompatSyncTransport

    async def ask(base_url: str) -> None:
        client = openai_client(pipeline(base_url), flavour)
        await client.chat.completions.create(model="x", messages=MESSAGES, extra_headers=HEADERS)
        await client.close()

    with InThread(TwoTurnServer(SCENARIOS["vllm"])) as server:
        if flavour == "sync":
            transport = OaicompatSyncTransport(pipeline(server.base_url), owns_client=True)
            client = openai.OpenAI(
                api_key="sk-the-sdks-own",
                organization="org-the-sdks-own",
                base_url="http://oaicompat.invalid/v1",
                http_client=httpx.Client(transport=transport),
            )
            client.chat.completions.create(model="x", messages=MESSAGES, extra_headers=HEADERS)
            client.close()
            transport.close()
        else:
            asyncio.run(ask(server.base_url))
        (request,) = server.requests
    headers = {name.lower(): value for name, value in request.headers.items()}
    assert headers["x-session-id"] == "thread-9"
    assert headers["x-padded"] == "value"  # HTTP's optional whitespace is not the value
    assert headers["user-agent"].startswith("OpenAI/Python" if flavour == "sync" else "Async")
    for name in ("authorization", "openai-organization", "x-stainless-retry-count"):
        assert name not in headers
    assert headers.get("accept") != "application/json"

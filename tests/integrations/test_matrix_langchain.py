"""The scenario matrix for LangChain: ``ChatOaicompat`` in ``create_agent`` (or alone), replayed.

Each scenario runs LangChain's own user-facing API over the loopback replay server, whole
(``ainvoke``) and streamed (a ``streaming=True`` model, or the agent's ``astream``), and checks
what a LangChain user sees. Per scenario, what the user gets:

- text_call_in_content: llama.cpp's ``<tool_call>`` text is a real ``tool_calls`` entry; the agent runs the tool and answers.
- structured_call: the server's own call (after reasoning) is run once, with its id and arguments, and the answer follows.
- reasoning_field: reasoning in ``additional_kwargs["reasoning_content"]``, never in ``content``.
- think_tags: ``<think>…</think>`` in the content moves to ``reasoning_content``; ``content`` is the answer only.
- harmony: gpt-oss harmony text (analysis, commentary call, final) is reasoning, a run tool call and the answer.
- unoffered_call: a call to a tool not offered is an ``invalid_tool_call`` (never run); the answer is the call's text, not empty.
- structured_output: ``ProviderStrategy`` sends ``response_format`` (json_schema) and ``structured_response`` is the parsed value.
- mid_stream_error: LangChain's ``ModelAPIError`` (also oaicompat's ``ServerError``) with ``partial_response``; streamed text arrives first.
- per_request_header: ``default_headers`` and a request's ``extra_headers`` (``model_settings`` in middleware) are HTTP headers, never body keys.
- session_id: ``config["configurable"]["thread_id"]`` is the conversation id: two threads that open alike get their own session keys.
"""  # noqa: E501

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from pydantic import BaseModel

from providers import ChatClient, ServerError, create_chat_client
from providers.layers.session_affinity import SessionAffinity
from providers.replay.server import ReceivedRequest, RecordedReply, ReplayServer
from providers.replay.transcripts import Transcript
from tests.integrations.exchanges import BY_ID
from tests.integrations.frameworks import require
from tests.integrations.replay_turns import QUESTION, SCENARIOS
from tests.integrations.test_langchain import run_agent
from tests.integrations.test_openai_transport import ANSWERS

langchain_core = require("langchain_core")
agents = require("langchain.agents")

from langchain.agents.middleware import wrap_model_call  # noqa: E402
from langchain.agents.structured_output import ProviderStrategy  # noqa: E402
from langchain_core import exceptions as lc_errors  # noqa: E402
from langchain_core.messages import AIMessage, AIMessageChunk  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

from providers.integrations.langchain import ChatOaicompat  # noqa: E402

MODES = ["whole", "streamed"]
SUNNY = "It is sunny in Paris."
HARMONY_CALL = (
    "<|channel|>analysis<|message|>Need the weather tool.<|end|>"
    "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json"
    '<|message|>{"city": "Paris", "unit": "celsius"}<|call|>'
)
HARMONY_ANSWER = (
    "<|channel|>analysis<|message|>The tool said sunny.<|end|>"
    f"<|start|>assistant<|channel|>final<|message|>{SUNNY}<|return|>"
)


# --- replies: recorded bodies, or the same answer in the other shape -------------------------


def answer_id(text: str) -> str:
    """One id per answer, as servers give (LangGraph replaces a message with the same id)."""
    return f"chatcmpl-{zlib.crc32(text.encode()):08x}"


def completion(text: str, finish: str = "stop") -> bytes:
    """A ``chat.completion`` whose message content is ``text``."""
    message = {"role": "assistant", "content": text}
    choice = {"index": 0, "message": message, "finish_reason": finish}
    usage = {"prompt_tokens": 15, "completion_tokens": 20, "total_tokens": 35}
    body = {"id": answer_id(text), "object": "chat.completion", "created": 1, "model": "served"}
    return json.dumps({**body, "choices": [choice], "usage": usage}).encode()


def chunks(text: str, finish: str = "stop") -> bytes:
    """The same content streamed, seven characters a chunk (markers cut mid-way)."""

    def event(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        body = {"id": answer_id(text), "object": "chat.completion.chunk", "created": 1}
        return f"data: {json.dumps({**body, 'model': 'served', 'choices': [choice]})}\n\n"

    pieces = [event({"role": "assistant", "content": ""})]
    pieces += [event({"content": text[i : i + 7]}) for i in range(0, len(text), 7)]
    pieces.append(event({}, finish))
    return ("".join(pieces) + "data: [DONE]\n\n").encode()


Reply = tuple[bytes, bytes]
"""A turn's whole body and streamed body: the server answers in the shape asked for."""


def recorded(whole: str, streamed: str) -> Reply:
    return BY_ID[whole].body, BY_ID[streamed].body


def recorded_text(transcript: Transcript) -> Reply:
    """A text-only recording (streamed) and the same content as one ``chat.completion``."""
    expected = transcript.expected
    return completion(expected["text"], expected["finish_reason"]), transcript.body


def synthesized(text: str) -> Reply:
    return completion(text), chunks(text)


class Turns(ReplayServer):
    """Answers the n-th chat request with the n-th reply (the last one after that); keeps
    every request's headers and body."""

    def __init__(self, *replies: Reply) -> None:
        super().__init__(self._reply)
        self.replies = replies
        self.bodies: list[dict[str, Any]] = []

    async def __aenter__(self) -> Turns:
        await super().__aenter__()
        return self

    def _reply(self, request: ReceivedRequest) -> RecordedReply:
        body = json.loads(request.body)
        self.bodies.append(body)
        whole, streamed = self.replies[min(len(self.bodies), len(self.replies)) - 1]
        if body.get("stream"):
            return RecordedReply(200, streamed, {"Content-Type": "text/event-stream"})
        return RecordedReply(200, whole, {"Content-Type": "application/json"})


def pipeline(server: ReplayServer, backend: str = "vllm", **kwargs: Any) -> ChatClient:
    url = f"{server.base_url}/v1"
    return create_chat_client(url, "served", backend=backend, telemetry=False, **kwargs)


def model_for(client: ChatClient, mode: str, **fields: Any) -> ChatOaicompat:
    # `streaming` only when set: LangChain reads an explicit False as "never stream".
    if mode == "streamed":
        fields["streaming"] = True
    return ChatOaicompat(client=client, **fields)


class Weather:
    def __init__(self) -> None:
        self.ran: list[dict[str, Any]] = []

    def tools(self) -> list[Any]:
        @tool
        def get_weather(city: str, unit: str = "celsius") -> str:
            """The current weather in a city."""
            self.ran.append({"city": city, "unit": unit})
            return "sunny, 21 degrees"

        return [get_weather]


async def ask(agent: Any, mode: str, config: Any = None) -> list[Any]:
    """The agent's messages after one question (``streamed``: through its token stream)."""
    request = {"messages": [{"role": "user", "content": QUESTION}]}
    if mode == "whole":
        state = await agent.ainvoke(request, config=config)
        return list(state["messages"])
    async for kind, item in agent.astream(request, config, stream_mode=["messages", "values"]):
        if kind == "values":
            state = item
    return list(state["messages"])


# --- the ten scenarios -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_text_call_in_content(mode: str) -> None:
    messages, ran, _ = await run_agent(SCENARIOS["llamacpp"], mode)
    assert ran == [SCENARIOS["llamacpp"].arguments()]
    call_message = messages[1]
    assert isinstance(call_message, AIMessage)
    assert [c["name"] for c in call_message.tool_calls] == ["get_weather"]
    assert "<tool_call>" not in call_message.text
    assert messages[-1].content == ANSWERS["llamacpp"]


@pytest.mark.parametrize("mode", MODES)
async def test_structured_call(mode: str) -> None:
    scenario = SCENARIOS["vllm"]
    messages, ran, server = await run_agent(scenario, mode)
    assert ran == [scenario.arguments()]
    (call,) = messages[1].tool_calls
    assert server.chat_requests[1]["messages"][1]["tool_calls"][0]["id"] == call["id"]
    assert messages[-1].content == ANSWERS["vllm"]


@pytest.mark.parametrize("mode", MODES)
async def test_reasoning_field(mode: str) -> None:
    reply = recorded(
        "vllm/captured--qwen3-hermes--nonstream-reasoning",
        "vllm/captured--qwen3-hermes--stream-reasoning",
    )
    async with Turns(reply) as server:
        model = model_for(pipeline(server), mode)
        if mode == "whole":
            message = await model.ainvoke(QUESTION)
        else:
            parts = [chunk async for chunk in model.astream(QUESTION)]
            message = sum(parts[1:], parts[0])
        await model.aclose()
    assert message.text.strip() == SUNNY
    reasoning = message.additional_kwargs["reasoning_content"]
    assert reasoning.strip() == "The user asks for the weather in Paris."
    assert "The user asks" not in message.text


@pytest.mark.parametrize("mode", MODES)
async def test_think_tags(mode: str) -> None:
    reply = recorded_text(BY_ID["llamacpp/captured--qwen3-reasoning-none--stream-think-in-content"])
    async with Turns(reply) as server:
        model = model_for(pipeline(server, "llamacpp"), mode)
        messages = await ask(agents.create_agent(model, []), mode)
        await model.aclose()
    answer = messages[-1]
    assert answer.text.strip() == SUNNY
    assert "<think>" not in answer.text
    reasoning = answer.additional_kwargs["reasoning_content"]
    assert reasoning.strip() == "The user asks for the weather in Paris."


@pytest.mark.parametrize("mode", MODES)
async def test_harmony(mode: str) -> None:
    weather = Weather()
    async with Turns(synthesized(HARMONY_CALL), synthesized(HARMONY_ANSWER)) as server:
        model = model_for(pipeline(server), mode)
        messages = await ask(agents.create_agent(model, weather.tools()), mode)
        await model.aclose()
    assert weather.ran == [{"city": "Paris", "unit": "celsius"}]
    call_message, answer = messages[1], messages[-1]
    assert call_message.additional_kwargs["reasoning_content"] == "Need the weather tool."
    assert answer.text == SUNNY
    assert answer.additional_kwargs["reasoning_content"] == "The tool said sunny."
    assert "<|" not in call_message.text + answer.text


@tool
def get_time(city: str) -> str:
    """The local time in a city."""
    return "noon"


@pytest.mark.parametrize("mode", [*MODES, "text"])
async def test_unoffered_call(mode: str) -> None:
    """The model calls ``get_weather``; only ``get_time`` is offered. ``text``: the call
    written in the content (recovered from text), streamed."""
    if mode == "text":
        transcript = BY_ID["vllm/captured--qwen3-hermes--stream-tool-call-no-tools-in-request"]
        reply, written = recorded_text(transcript), transcript.expected["text"]
    else:
        reply = recorded(
            "vllm/captured--qwen3-hermes--nonstream-tool-call",
            "vllm/captured--qwen3-hermes--stream-tool-call",
        )
        written = (
            '<tool_call>\n{"name": "get_weather", "arguments": '
            '{"city": "Paris", "unit": "celsius"}}\n</tool_call>'
        )
    async with Turns(reply) as server:
        model = model_for(pipeline(server), "whole" if mode == "whole" else "streamed")
        messages = await ask(agents.create_agent(model, [get_time]), "whole")
        await model.aclose()
    answer = messages[-1]
    assert isinstance(answer, AIMessage)
    assert answer.tool_calls == []
    assert [call["name"] for call in answer.invalid_tool_calls] == ["get_weather"]
    assert answer.text == written
    assert len(server.bodies) == 1


class Thing(BaseModel):
    name: str
    n: int


@pytest.mark.parametrize("mode", MODES)
async def test_structured_output(mode: str) -> None:
    reply = recorded(
        "llamacpp/captured--qwen25-plain--nonstream-json-schema",
        "llamacpp/captured--qwen25-plain--stream-json-schema",
    )
    async with Turns(reply) as server:
        model = model_for(pipeline(server, "llamacpp"), mode)
        agent = agents.create_agent(model, [], response_format=ProviderStrategy(Thing))
        request = {"messages": [{"role": "user", "content": "Answer the question."}]}
        state = await agent.ainvoke(request)
        await model.aclose()
    assert state["structured_response"] == Thing(name="+ phiên斟", n=64)
    (body,) = server.bodies
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["name", "n"]


@pytest.mark.parametrize("mode", MODES)
async def test_mid_stream_error(mode: str) -> None:
    broken = BY_ID["vllm/reconstructed--error-midstream"].body
    async with Turns((broken, broken)) as server:
        model = model_for(pipeline(server), "streamed")
        tokens: list[str] = []
        with pytest.raises(lc_errors.ModelAPIError) as caught:
            if mode == "whole":
                await model.ainvoke(QUESTION)
            else:
                agent = agents.create_agent(model, [])
                request = {"messages": [{"role": "user", "content": QUESTION}]}
                async for token, _ in agent.astream(request, stream_mode="messages"):
                    assert isinstance(token, AIMessageChunk)
                    tokens.append(token.text)
        await model.aclose()
    assert isinstance(caught.value, ServerError)
    partial = caught.value.partial_response
    assert partial is not None and partial.text == "Hello!"
    assert "".join(tokens) == ("" if mode == "whole" else "Hello!")


def with_headers(headers: dict[str, str]) -> Any:
    """Middleware setting this request's ``extra_headers`` (LangChain's per-request way)."""

    @wrap_model_call
    async def add(request: Any, handler: Callable[[Any], Any]) -> Any:
        settings = {**request.model_settings, "extra_headers": headers}
        return await handler(request.override(model_settings=settings))

    return add


@pytest.mark.parametrize("mode", MODES)
async def test_per_request_header(mode: str) -> None:
    async with Turns(synthesized(SUNNY)) as server:
        model = model_for(pipeline(server), mode, default_headers={"X-App": "every-request"})
        middleware: Sequence[Any] = [with_headers({"X-Request": "this-one"})]
        agent = agents.create_agent(model, [get_time], middleware=middleware)
        messages = await ask(agent, mode)
        await model.aclose()
    assert messages[-1].text == SUNNY
    (request,) = server.requests
    assert (request.headers["x-app"], request.headers["x-request"]) == ("every-request", "this-one")
    body = request.body.decode()
    assert "headers" not in body and "every-request" not in body and "this-one" not in body


@pytest.mark.parametrize("mode", MODES)
async def test_session_id(mode: str) -> None:
    async with Turns(synthesized(SUNNY)) as server:
        client = pipeline(server, session_affinity=SessionAffinity())
        model = model_for(client, mode)
        agent = agents.create_agent(model, [get_time])
        for name in ("thread-1", "thread-2", "thread-1"):
            messages = await ask(agent, mode, {"configurable": {"thread_id": name}})
            assert messages[-1].text == SUNNY
        await model.aclose()
    keys = [request.headers["x-session-id"] for request in server.requests]
    assert keys == ["thread-1", "thread-2", "thread-1"]
    # Both threads opened with the same message: without thread_id they would share a key.
    assert server.bodies[0]["messages"] == server.bodies[1]["messages"]

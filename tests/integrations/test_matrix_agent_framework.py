"""The issue-34 scenario matrix for Microsoft Agent Framework: an ``Agent`` over
``OaicompatChatClient``, run whole (``agent.run``) and streamed (``agent.run(stream=True)``),
against the loopback replay server with recorded transcripts (made-up vLLM answers where no
recording has the shape: harmony, and the whole forms of answers recorded streamed only).

What the framework's user gets, per scenario:

- text_call_in_content: llama.cpp's ``<tool_call>`` left in the text is a real call; the tool
  runs once and the answer has no markup.
- structured_call: the server's own ``tool_calls`` run through the framework's function layer;
  call and result are in the history, usage summed over both requests.
- reasoning_field: ``reasoning_content`` is a ``text_reasoning`` content, never in ``text``.
- think_tags: ``<think>…</think>`` in the content is a ``text_reasoning`` content; ``text`` is
  the answer only.
- harmony: gpt-oss channels in the content: analysis is reasoning, the call addressed to
  ``functions.get_weather`` runs, the final channel is the answer; no markup shows.
- unoffered_call: nothing runs; the framework's function layer answers the model "function not
  found" and the model's next answer is the run's answer.
- structured_output: ``response_format=Model`` is sent as its JSON Schema and ``response.value``
  is the parsed model.
- mid_stream_error: the text streamed before the error reaches the user, then a
  ``ChatClientException`` naming the HTTP status.
- per_request_header: ``extra_headers`` (an option or ``client_kwargs``) are HTTP headers of each
  request, never body keys.
- session_id: the ``AgentSession`` id is the routing key (``X-Session-ID`` with session
  affinity): two sessions that open alike get different keys.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from providers import create_chat_client
from providers.layers.session_affinity import SessionAffinity
from providers.replay.server import RecordedReply, ReplayServer
from providers.replay.transcripts import Transcript
from tests.integrations.agent_framework_support import STREAMED, Heard, made_up, run
from tests.integrations.exchanges import BY_ID, SCENARIOS, Weather, require, tool_result

require("agent_framework", "agent-framework")

from agent_framework import AgentSession  # noqa: E402
from agent_framework.exceptions import ChatClientException  # noqa: E402

from providers.integrations.agent_framework import OaicompatChatClient  # noqa: E402

QUESTION = "What is the weather in Paris?"
MARKUP = ("<tool_call", "<think>", "</think>", "<|channel|>", "<|message|>", "<|call|>")


def recorded(transcript_id: str, streamed: bool) -> Transcript | RecordedReply:
    """The recording, streamed; its whole form made up from the recorded text where only the
    stream was recorded."""
    transcript = BY_ID[transcript_id]
    return transcript if streamed else made_up(transcript.expected["text"], streamed=False)


async def weather_run(
    replies: list[Transcript | RecordedReply], backend: str, streamed: bool, **agent: Any
) -> tuple[Any, Heard, Weather]:
    exchange, weather = Heard(replies), Weather()
    async with ReplayServer(exchange.answer) as server:
        client = create_chat_client(server.base_url, backend=backend, telemetry=False, retry=None)
        chat = OaicompatChatClient(client)
        tools = agent.pop("tools", [weather.get_weather])
        response = await run(chat.as_agent(tools=tools, **agent), streamed, QUESTION)
    return response, exchange, weather


def reasoning_of(response: Any) -> str:
    return "".join(
        c.text or "" for m in response.messages for c in m.contents if c.type == "text_reasoning"
    )


@STREAMED
async def test_text_call_in_content(streamed: bool) -> None:
    call = "llamacpp/captured--qwen25-plain--stream-text-tool-call-in-content"
    answer = "llamacpp/captured--qwen3-reasoning-deepseek--{}-reasoning"
    answer = answer.format("stream" if streamed else "nonstream")
    replies = [recorded(call, streamed), BY_ID[answer]]
    response, exchange, weather = await weather_run(replies, "llamacpp", streamed)
    assert weather.ran == [{"city": "Paris", "unit": "celsius"}]
    assert response.text.strip() == BY_ID[answer].expected["text"].strip()
    assert not any(tag in response.text for tag in MARKUP)
    (wire_call,) = exchange.bodies[1]["messages"][-2]["tool_calls"]
    assert wire_call["function"]["name"] == "get_weather"


@STREAMED
async def test_structured_call(streamed: bool) -> None:
    scenario = SCENARIOS[0] if streamed else SCENARIOS[1]
    response, exchange, weather = await weather_run(
        [scenario.first, scenario.second], "vllm", streamed
    )
    _, arguments, call_id = scenario.recorded_call()
    assert weather.ran == [arguments]
    assert response.text.strip() == scenario.second.expected["text"].strip()
    usage = response.usage_details
    assert (usage["input_token_count"], usage["output_token_count"]) == scenario.usage()
    result = exchange.bodies[1]["messages"][-1]
    assert result == {"role": "tool", "tool_call_id": call_id, "content": tool_result(arguments)}


@STREAMED
async def test_reasoning_field(streamed: bool) -> None:
    transcript = BY_ID[
        f"vllm/captured--qwen3-hermes--{'stream' if streamed else 'nonstream'}-reasoning"
    ]
    response, _, _ = await weather_run([transcript], "vllm", streamed)
    assert reasoning_of(response).strip() == transcript.expected["reasoning"].strip()
    assert response.text.strip() == transcript.expected["text"].strip()
    assert transcript.expected["reasoning"].strip() not in response.text


@STREAMED
async def test_think_tags(streamed: bool) -> None:
    think = "llamacpp/captured--qwen3-reasoning-none--stream-think-in-content"
    response, _, _ = await weather_run([recorded(think, streamed)], "llamacpp", streamed)
    recorded_text = BY_ID[think].expected["text"]
    thought, answer = recorded_text.split("</think>")
    assert reasoning_of(response).strip() == thought.replace("<think>", "").strip()
    assert response.text.strip() == answer.strip()
    assert not any(tag in response.text for tag in MARKUP)


HARMONY_CALL = (
    "<|channel|>analysis<|message|>Need the weather.<|end|>"
    "<|start|>assistant to=functions.get_weather<|channel|>commentary<|constrain|>json"
    '<|message|>{"city": "Paris", "unit": "celsius"}<|call|>'
)
HARMONY_ANSWER = (
    "<|channel|>analysis<|message|>The tool says sunny.<|end|>"
    "<|start|>assistant<|channel|>final<|message|>It is sunny in Paris.<|return|>"
)


@STREAMED
async def test_harmony(streamed: bool) -> None:
    replies: list[Transcript | RecordedReply] = [
        made_up(HARMONY_CALL, streamed),
        made_up(HARMONY_ANSWER, streamed),
    ]
    response, exchange, weather = await weather_run(replies, "vllm", streamed)
    assert weather.ran == [{"city": "Paris", "unit": "celsius"}]
    assert response.text == "It is sunny in Paris."
    assert reasoning_of(response) == "Need the weather.The tool says sunny."
    assert not any(tag in json.dumps(exchange.bodies[1]) for tag in MARKUP)


def get_time(tz: str) -> str:
    """The time in a time zone."""
    raise AssertionError("the model never called get_time")


@STREAMED
async def test_unoffered_call(streamed: bool) -> None:
    call, backend = (
        ("llamacpp/captured--qwen25-plain--stream-text-tool-call-in-content", "llamacpp")
        if streamed
        else ("vllm/captured--qwen3-hermes--nonstream-tool-call", "vllm")
    )
    answer = BY_ID[f"vllm/captured--plain--{'stream' if streamed else 'nonstream'}-text"]
    response, exchange, weather = await weather_run(
        [BY_ID[call], answer], backend, streamed, tools=[get_time]
    )
    assert weather.ran == []
    assert response.text.strip() == answer.expected["text"].strip()
    assert len(exchange.bodies) == 2
    result = exchange.bodies[1]["messages"][-1]
    assert result["role"] == "tool" and "not found" in result["content"]


class Thing(BaseModel):
    """The schema of the recorded JSON-Schema answers."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(max_length=8)
    n: int = Field(ge=0, le=99)


@STREAMED
async def test_structured_output(streamed: bool) -> None:
    kind = "stream" if streamed else "nonstream"
    transcript = BY_ID[f"llamacpp/captured--qwen25-plain--{kind}-json-schema"]
    exchange = Heard([transcript])
    async with ReplayServer(exchange.answer) as server:
        client = create_chat_client(server.base_url, backend="llamacpp", telemetry=False)
        agent = OaicompatChatClient(client).as_agent()
        response = await run(
            agent, streamed, "Answer the question.", options={"response_format": Thing}
        )
    assert response.value == Thing.model_validate_json(transcript.expected["text"])
    sent = exchange.bodies[0]["response_format"]["json_schema"]
    assert (sent["name"], sent["schema"]) == ("Thing", Thing.model_json_schema())


async def test_mid_stream_error() -> None:
    transcript = BY_ID["vllm/reconstructed--error-midstream"]
    exchange, seen = Heard([transcript]), []
    async with ReplayServer(exchange.answer) as server:
        client = create_chat_client(server.base_url, backend="vllm", telemetry=False, retry=None)
        stream = OaicompatChatClient(client).as_agent().run("hi", stream=True)
        with pytest.raises(ChatClientException, match="HTTP 500") as caught:
            async for update in stream:
                seen.append(update.text)
    assert "".join(seen) == transcript.expected["text"]
    assert "ServerError" in str(caught.value)


@STREAMED
async def test_per_request_header(streamed: bool) -> None:
    exchange = Heard([BY_ID[f"vllm/captured--plain--{'stream' if streamed else 'nonstream'}-text"]])
    async with ReplayServer(exchange.answer) as server:
        client = create_chat_client(server.base_url, backend="vllm", telemetry=False)
        agent = OaicompatChatClient(client).as_agent()
        await run(
            agent,
            streamed,
            "hi",
            options={"extra_headers": {"X-Tenant": "acme"}},
            client_kwargs={"extra_headers": {"X-Request-Tag": "r-1"}},
        )
    (headers,) = exchange.headers
    assert (headers["x-tenant"], headers["x-request-tag"]) == ("acme", "r-1")
    body = json.dumps(exchange.bodies[0])
    assert "acme" not in body and "r-1" not in body and "extra_headers" not in body


@STREAMED
async def test_session_id(streamed: bool) -> None:
    exchange = Heard([BY_ID[f"vllm/captured--plain--{'stream' if streamed else 'nonstream'}-text"]])
    async with ReplayServer(exchange.answer) as server:
        client = create_chat_client(
            server.base_url, backend="vllm", telemetry=False, session_affinity=SessionAffinity()
        )
        agent = OaicompatChatClient(client).as_agent()
        first, second = AgentSession(), AgentSession()
        for session in (first, second):
            await run(agent, streamed, QUESTION, session=session)
    keys = [h["x-session-id"] for h in exchange.headers]
    assert keys == [first.session_id, second.session_id]

"""What an Agent Framework run puts on the wire through ``OaicompatChatClient`` (issue 34): the
per-request headers the stock OpenAI client carries, ``tool_choice`` only with tools, the
session as the routing key, reasoning options, a call to a tool that was not offered, and the
adapter's entry points (``from_config``'s signature, the error without the extra installed).
Each runs the framework's own agent over the loopback replay server and reads what it received.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from providers import ReasoningEffort, ReasoningOptions, ReasoningOutput, create_chat_client
from providers.layers.session_affinity import SessionAffinity
from providers.replay.server import ReplayServer
from tests.integrations.agent_framework_support import STREAMED, Heard, run
from tests.integrations.exchanges import BY_ID, SCENARIOS, Weather, require

require("agent_framework", "agent-framework")

from agent_framework import AgentSession, ChatContext, chat_middleware  # noqa: E402
from agent_framework.exceptions import ChatClientInvalidRequestException  # noqa: E402

from providers.integrations.agent_framework import OaicompatChatClient  # noqa: E402
from providers.integrations.agent_framework.options import to_chat_options  # noqa: E402

TEXT = "vllm/captured--plain--nonstream-text"
TEXT_STREAM = "vllm/captured--plain--stream-text"


def chat(server: ReplayServer, **kwargs: Any) -> OaicompatChatClient[Any]:
    return OaicompatChatClient(
        create_chat_client(server.base_url, backend="vllm", telemetry=False, retry=None, **kwargs)
    )


@STREAMED
async def test_extra_headers_are_headers_not_body_keys(streamed: bool) -> None:
    """Both ways the stock client takes them: the ``extra_headers`` option, and the call's
    ``client_kwargs`` (which win over the option for the same name)."""
    exchange = Heard([BY_ID[TEXT_STREAM if streamed else TEXT]])
    async with ReplayServer(exchange.answer) as server:
        agent = chat(server).as_agent()
        await run(
            agent,
            streamed,
            "hi",
            options={"extra_headers": {"X-Tenant": "acme", "X-Trace": "from-options"}},
            client_kwargs={"extra_headers": {"X-Trace": "from-call"}},
        )
    (headers,) = exchange.headers
    assert (headers["x-tenant"], headers["x-trace"]) == ("acme", "from-call")
    (body,) = exchange.bodies
    assert "extra_headers" not in body
    assert not {"acme", "from-call", "from-options"} & set(json.dumps(body).split('"'))


async def test_a_header_value_that_is_not_a_string_is_refused_before_sending() -> None:
    exchange = Heard([BY_ID[TEXT]])
    async with ReplayServer(exchange.answer) as server:
        agent = chat(server).as_agent()
        with pytest.raises(ChatClientInvalidRequestException, match="X-Count"):
            await agent.run("hi", options={"extra_headers": {"X-Count": 3}})
    assert exchange.bodies == []


@STREAMED
async def test_without_tools_no_tool_choice_is_sent(streamed: bool) -> None:
    """An ``Agent`` always sets ``tool_choice: "auto"``; vLLM answers 400 to it without tools."""
    exchange = Heard([BY_ID[TEXT_STREAM if streamed else TEXT]])
    async with ReplayServer(exchange.answer) as server:
        await run(chat(server).as_agent(), streamed, "hi", options={"allow_multiple_tool_calls": 1})
    (body,) = exchange.bodies
    assert "tools" not in body
    assert "tool_choice" not in body
    assert "parallel_tool_calls" not in body


async def test_with_tools_the_tool_choice_is_sent() -> None:
    exchange = Heard([BY_ID[TEXT]])
    async with ReplayServer(exchange.answer) as server:
        agent = chat(server).as_agent(tools=[Weather().get_weather])
        await agent.run("hi", options={"tool_choice": "none"})
    (body,) = exchange.bodies
    assert body["tool_choice"] == "none"
    assert [t["function"]["name"] for t in body["tools"]] == ["get_weather"]


def test_a_required_tool_choice_without_tools_is_refused() -> None:
    with pytest.raises(ChatClientInvalidRequestException, match="offers no tools"):
        to_chat_options({"tool_choice": "required"})


@STREAMED
async def test_two_sessions_that_open_alike_get_different_routing_keys(streamed: bool) -> None:
    exchange = Heard([BY_ID[TEXT_STREAM if streamed else TEXT]])
    async with ReplayServer(exchange.answer) as server:
        agent = chat(server, session_affinity=SessionAffinity()).as_agent()
        first, second = AgentSession(), AgentSession()
        for session in (first, second, first):
            await run(agent, streamed, "What is the weather in Paris?", session=session)
        await run(agent, streamed, "What is the weather in Paris?")
        await run(agent, streamed, "What is the weather in Paris?")
    keys = [h["x-session-id"] for h in exchange.headers]
    assert keys[:3] == [first.session_id, second.session_id, first.session_id]
    # Without a session the key is the opening's hash, as before: the same for both.
    assert keys[3] == keys[4] and keys[3] not in keys[:3]


async def test_a_conversation_id_option_is_the_routing_key() -> None:
    exchange = Heard([BY_ID[TEXT]])
    async with ReplayServer(exchange.answer) as server:
        agent = chat(server, session_affinity=SessionAffinity()).as_agent()
        await agent.run("hi", options={"conversation_id": "ticket-42"})
    assert exchange.headers[0]["x-session-id"] == "ticket-42"
    assert "conversation_id" not in exchange.bodies[0]


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"reasoning_effort": "low"}, ReasoningOptions(effort=ReasoningEffort.LOW)),
        ({"reasoning_effort": "xhigh"}, ReasoningOptions(effort=ReasoningEffort.EXTRA_HIGH)),
        (
            {"reasoning": {"effort": "none", "summary": "auto"}},
            ReasoningOptions(effort=ReasoningEffort.NONE, output=ReasoningOutput.SUMMARY),
        ),
        ({}, None),
    ],
)
def test_the_reasoning_options_are_oaicompats(
    options: dict[str, Any], expected: ReasoningOptions | None
) -> None:
    chat_options = to_chat_options(options)
    assert chat_options.reasoning == expected
    assert not {"reasoning", "reasoning_effort"} & set(chat_options.additional_properties)


@pytest.mark.parametrize(
    "options",
    [
        {"reasoning_effort": "hard"},
        {"reasoning": {"effort": "low", "budget": 9}},
        {"reasoning_effort": "low", "reasoning": {"effort": "high"}},
        {"reasoning": {"summary": "long"}},
    ],
    ids=["unknown-effort", "unknown-key", "disagree", "unknown-summary"],
)
def test_a_reasoning_option_oaicompat_cannot_honour_is_refused(options: dict[str, Any]) -> None:
    with pytest.raises(ChatClientInvalidRequestException, match="reasoning"):
        to_chat_options(options)


async def test_reasoning_effort_is_mapped_for_the_model_family() -> None:
    """Qwen3 on vLLM thinks or not by ``chat_template_kwargs.enable_thinking``: ``none``
    becomes that, not a ``reasoning_effort`` key the template never reads."""
    exchange = Heard([BY_ID[TEXT]])
    async with ReplayServer(exchange.answer) as server:
        agent = chat(server, model_id="Qwen/Qwen3-8B").as_agent()
        await agent.run("hi", options={"reasoning_effort": "none"})
    (body,) = exchange.bodies
    assert body["chat_template_kwargs"]["enable_thinking"] is False
    assert "reasoning_effort" not in body


UNOFFERED = {
    False: ("vllm/captured--qwen3-hermes--nonstream-tool-call", "vllm", TEXT),
    True: (
        "llamacpp/captured--qwen25-plain--stream-text-tool-call-in-content",
        "llamacpp",
        TEXT_STREAM,
    ),
}
"""A call to ``get_weather`` (the server's own, whole; llama.cpp's left in the text, streamed),
then a plain answer."""


def get_time(tz: str) -> str:
    """The time in a time zone."""
    raise AssertionError("never offered a call")


@STREAMED
async def test_a_call_to_a_tool_not_offered_is_answered_with_not_found(streamed: bool) -> None:
    """The agent offers ``get_time``; the model calls ``get_weather``. Nothing runs, the
    framework's function layer tells the model the function was not found, and the model's
    next answer is the run's answer (today: an empty answer after one request, no error)."""
    call, backend, answer = UNOFFERED[streamed]
    exchange, weather = Heard([BY_ID[call], BY_ID[answer]]), Weather()
    async with ReplayServer(exchange.answer) as server:
        client = create_chat_client(server.base_url, backend=backend, telemetry=False, retry=None)
        agent = OaicompatChatClient(client).as_agent(tools=[get_time])
        response = await run(agent, streamed, "What is the weather in Paris?")
    assert weather.ran == []
    assert response.text.strip() == BY_ID[answer].expected["text"].strip()
    assert len(exchange.bodies) == 2
    assistant, result = exchange.bodies[1]["messages"][-2:]
    (sent_call,) = assistant["tool_calls"]
    assert sent_call["function"]["name"] == "get_weather"
    assert result["role"] == "tool" and result["tool_call_id"] == sent_call["id"]
    assert "not found" in result["content"]


def test_from_config_takes_path_and_role_by_position_and_the_rest_by_keyword() -> None:
    parameters = inspect.signature(OaicompatChatClient.from_config).parameters
    path, role, telemetry = parameters["path"], parameters["role"], parameters["telemetry"]
    assert (path.default, role.default, telemetry.default) == ("oaicompat.yaml", "main", False)
    assert path.kind is role.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert telemetry.kind is inspect.Parameter.KEYWORD_ONLY


def test_without_the_framework_the_error_names_the_extra() -> None:
    code = (
        "import sys\n"
        "sys.modules['agent_framework'] = None\n"
        "try:\n"
        "    import providers.integrations.agent_framework\n"
        "except ModuleNotFoundError as error:\n"
        "    print(type(error).__name__, error.name, '|', error)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert "ModuleNotFoundError agent_framework |" in done.stdout
    assert "pip install 'oaicompat[agent-framework]'" in done.stdout


@pytest.mark.parametrize("key", ["timeout", "extra_query"])
def test_the_sdks_own_request_arguments_are_refused_not_sent_as_body_keys(key: str) -> None:
    with pytest.raises(ChatClientInvalidRequestException, match=key):
        to_chat_options({key: {"a": "b"}})


@STREAMED
async def test_a_chat_middleware_sees_each_model_call_as_with_the_stock_client(
    streamed: bool,
) -> None:
    """The stock OpenAI clients put the function-invocation layer outside the chat middleware:
    a tool run's two model calls are two middleware calls (one, when the middleware wrapped the
    whole loop)."""
    seen: list[int] = []

    @chat_middleware
    async def count(context: ChatContext, call_next: Callable[[], Awaitable[None]]) -> None:
        seen.append(len(context.messages))
        await call_next()

    scenario = SCENARIOS[0] if streamed else SCENARIOS[1]
    exchange = Heard([scenario.first, scenario.second])
    async with ReplayServer(exchange.answer) as server:
        client = OaicompatChatClient(
            create_chat_client(server.base_url, backend="vllm", telemetry=False),
            middleware=[count],
        )
        await run(client.as_agent(tools=[Weather().get_weather]), streamed, "Weather in Paris?")
    assert len(exchange.bodies) == 2
    assert seen == [1, 3]

"""What a pydantic-ai user sets reaches the server through ``OaicompatModel``, or is refused.

Issue 34: the adapter dropped what pydantic-ai's own ``OpenAIChatModel`` carries. Each test runs
pydantic-ai's agent over a loopback server and checks the request that arrived: the three
structured output modes (``NativeOutput`` was refused for want of a profile), ``extra_headers``
(in the headers, never the body), the run's conversation id (the session-affinity key, so two
runs that open alike are two conversations), ``thinking`` (the reasoning option, mapped per
model family or refused before sending), and the settings the model declares it ignores.
"""

from __future__ import annotations

import warnings
from typing import Any, cast

import pytest
from pydantic import BaseModel

from providers import (
    ChatClient,
    InvalidRequestError,
    SessionAffinity,
    UnsupportedOptionError,
    create_chat_client,
)
from providers.replay.server import ReplayServer
from tests.integrations.exchanges import require
from tests.integrations.pydantic_ai_replies import Call, Reply, Script

require("pydantic_ai", "pydantic-ai")

from pydantic_ai import Agent, NativeOutput, PromptedOutput, ToolOutput  # noqa: E402
from pydantic_ai.direct import model_request  # noqa: E402
from pydantic_ai.exceptions import (  # noqa: E402
    ModelAPIError,
    UnsupportedSettingWarning,
    UserError,
)
from pydantic_ai.messages import ModelRequest  # noqa: E402
from pydantic_ai.models import ModelRequestParameters  # noqa: E402
from pydantic_ai.settings import ModelSettings  # noqa: E402
from pydantic_ai.tools import ToolDefinition  # noqa: E402

from providers.integrations.pydantic_ai import OaicompatModel  # noqa: E402

STREAMED = pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])


class Forecast(BaseModel):
    city: str
    degrees: int


FORECAST = Forecast(city="Paris", degrees=21)


def model(server: ReplayServer, backend: str = "vllm", **kwargs: Any) -> OaicompatModel:
    return OaicompatModel(wire(server, backend, **kwargs))


def wire(server: ReplayServer, backend: str, **kwargs: Any) -> ChatClient:
    return create_chat_client(
        server.base_url, backend=backend, telemetry=False, retry=None, **kwargs
    )


async def ask(agent: Agent[None, Any], streamed: bool, **kwargs: Any) -> Any:
    """The run's output, through ``run_stream`` (every partial value checked to be one the
    output type allows) or ``run``."""
    if not streamed:
        return (await agent.run("What is the weather in Paris?", **kwargs)).output
    async with agent.run_stream("What is the weather in Paris?", **kwargs) as result:
        async for partial in result.stream_output(debounce_by=None):
            assert isinstance(partial, Forecast | str)
        return await result.get_output()


@STREAMED
async def test_native_output_is_a_json_schema_response_format(streamed: bool) -> None:
    script = Script([Reply(text=FORECAST.model_dump_json())])
    async with ReplayServer(script.answer) as server:
        agent = Agent(model(server), output_type=NativeOutput(Forecast))
        output = await ask(agent, streamed)
    assert output == FORECAST
    (body,) = script.bodies
    response_format = body["response_format"]
    assert response_format["type"] == "json_schema"
    assert response_format["json_schema"]["name"] == "Forecast"
    assert response_format["json_schema"]["schema"]["required"] == ["city", "degrees"]
    assert "tools" not in body


@STREAMED
async def test_tool_output_is_a_required_call_of_the_output_tool(streamed: bool) -> None:
    script = Script([Reply(calls=(Call("final_result", FORECAST.model_dump()),))])
    async with ReplayServer(script.answer) as server:
        agent = Agent(model(server), output_type=ToolOutput(Forecast))
        output = await ask(agent, streamed)
    assert output == FORECAST
    (body,) = script.bodies
    assert [t["function"]["name"] for t in body["tools"]] == ["final_result"]
    assert body["tool_choice"] == "required"
    assert "response_format" not in body


@STREAMED
async def test_prompted_output_asks_for_the_schema_in_the_instructions(streamed: bool) -> None:
    script = Script([Reply(text=FORECAST.model_dump_json())])
    async with ReplayServer(script.answer) as server:
        agent = Agent(model(server), output_type=PromptedOutput(Forecast))
        output = await ask(agent, streamed)
    assert output == FORECAST
    (body,) = script.bodies
    assert "response_format" not in body and "tools" not in body
    system = body["messages"][0]
    assert system["role"] == "system" and '"degrees"' in system["content"]


async def test_native_output_is_refused_where_the_backend_enforces_no_schema() -> None:
    """A server of unknown kind is not trusted to constrain decoding: pydantic-ai refuses
    ``NativeOutput`` before sending (``ToolOutput`` and ``PromptedOutput`` still serve), unless
    the caller's ``profile=`` says the server does enforce it."""
    script = Script([Reply(text=FORECAST.model_dump_json())])
    async with ReplayServer(script.answer) as server:
        refused = Agent(model(server, backend="generic"), output_type=NativeOutput(Forecast))
        with pytest.raises(UserError, match="Native structured output is not supported"):
            await refused.run("What is the weather in Paris?")
        assert script.bodies == []
        told = OaicompatModel(
            wire(server, "generic"), profile={"supports_json_schema_output": True}
        )
        output = await ask(Agent(told, output_type=NativeOutput(Forecast)), streamed=False)
    assert output == FORECAST
    assert script.bodies[0]["response_format"]["type"] == "json_schema"


@STREAMED
async def test_extra_headers_are_request_headers_and_never_body_keys(streamed: bool) -> None:
    script = Script([Reply(text="Sunny.")])
    settings = ModelSettings(extra_headers={"X-Tenant": "acme-7", "X-Request-Tag": "t-42"})
    async with ReplayServer(script.answer) as server:
        agent = Agent(model(server), model_settings=settings)
        assert await ask(agent, streamed) == "Sunny."
        (request,) = server.requests
    assert request.headers["x-tenant"] == "acme-7"
    assert request.headers["x-request-tag"] == "t-42"
    body = request.body.decode()
    assert "acme-7" not in body and "t-42" not in body and "extra_headers" not in body


async def test_an_invalid_header_value_is_refused_without_quoting_it() -> None:
    script = Script([Reply(text="Sunny.")])
    settings = ModelSettings(extra_headers={"X-Tenant": "secret-value\r\nX-Evil: 1"})
    async with ReplayServer(script.answer) as server:
        agent = Agent(model(server), model_settings=settings)
        with pytest.raises(ModelAPIError) as caught:
            await agent.run("hi")
    assert isinstance(caught.value.__cause__, InvalidRequestError)
    assert "secret-value" not in str(caught.value)
    assert script.bodies == []


@STREAMED
async def test_each_run_is_its_own_conversation_for_session_affinity(streamed: bool) -> None:
    """Two runs that open with the same question used to share a routing key (a hash of the
    opening); each run is now its own conversation, pydantic-ai's ``conversation_id``, and a
    run continuing another's history keeps that one's key."""
    script = Script([Reply(text="Sunny.")])
    affinity = SessionAffinity("vllm-router")
    async with ReplayServer(script.answer) as server:
        agent = Agent(model(server, session_affinity=affinity))
        first = await agent.run("What is the weather in Paris?")
        second = await agent.run("What is the weather in Paris?")
        history = first.all_messages()
        if streamed:
            async with agent.run_stream("And tomorrow?", message_history=history) as result:
                await result.get_output()
            continued = result.conversation_id
        else:
            continued = (await agent.run("And tomorrow?", message_history=history)).conversation_id
        keys = [request.headers["x-session-id"] for request in server.requests]
    assert keys == [first.conversation_id, second.conversation_id, first.conversation_id]
    assert keys[0] != keys[1]
    assert continued == first.conversation_id


async def test_a_conversation_id_given_to_the_run_is_the_key() -> None:
    script = Script([Reply(text="Sunny.")])
    async with ReplayServer(script.answer) as server:
        agent = Agent(model(server, session_affinity=SessionAffinity("vllm-router")))
        await agent.run("hi", conversation_id="ticket-8812")
        (request,) = server.requests
    assert request.headers["x-session-id"] == "ticket-8812"


@pytest.mark.parametrize(
    ("model_id", "thinking", "expected"),
    [
        ("Qwen/Qwen3-8B", False, {"chat_template_kwargs": {"enable_thinking": False}}),
        ("Qwen/Qwen3-8B", "high", {"chat_template_kwargs": {"enable_thinking": True}}),
        ("openai/gpt-oss-20b", "xhigh", {"reasoning_effort": "high"}),
        ("openai/gpt-oss-20b", True, {"reasoning_effort": "medium"}),
        # gpt-oss cannot stop thinking: pydantic-ai's False is "as little as it allows".
        ("openai/gpt-oss-20b", False, {"reasoning_effort": "low"}),
    ],
)
async def test_thinking_is_the_reasoning_option_of_the_model_family(
    model_id: str, thinking: bool | str, expected: dict[str, Any]
) -> None:
    script = Script([Reply(text="Sunny.")])
    async with ReplayServer(script.answer) as server:
        agent = Agent(model(server, model_id=model_id))
        await agent.run("hi", model_settings=ModelSettings(thinking=thinking))  # type: ignore[typeddict-item]
    (body,) = script.bodies
    assert {key: body.get(key) for key in expected} == expected


async def test_openai_reasoning_effort_wins_over_thinking_as_on_openai_chat_model() -> None:
    """A model that was an ``OpenAIChatModel`` may carry ``openai_reasoning_effort``; it is
    sent (not dropped), and wins over ``thinking``, with pydantic-ai's warning when it comes from
    the model's settings while ``thinking`` comes from the run."""
    script = Script([Reply(text="Sunny.")])
    effort = cast(ModelSettings, {"openai_reasoning_effort": "low"})
    async with ReplayServer(script.answer) as server:
        chosen = OaicompatModel(
            wire(server, "vllm", model_id="openai/gpt-oss-20b"), settings=effort
        )
        with pytest.warns(UserWarning, match="openai_reasoning_effort"):
            await Agent(chosen).run("hi", model_settings=ModelSettings(thinking="high"))
    (body,) = script.bodies
    assert body["reasoning_effort"] == "low"


async def test_thinking_a_model_cannot_do_is_refused_before_sending() -> None:
    script = Script([Reply(text="Sunny.")])
    async with ReplayServer(script.answer) as server:
        agent = Agent(model(server, model_id="Qwen/Qwen3-Coder-30B-A3B-Instruct"))
        with pytest.raises(ModelAPIError) as caught:
            await agent.run("hi", model_settings=ModelSettings(thinking="high"))
        with pytest.raises(UserError, match="thinking level 'extreme'"):
            await agent.run("hi", model_settings=cast(ModelSettings, {"thinking": "extreme"}))
    assert isinstance(caught.value.__cause__, UnsupportedOptionError)
    assert script.bodies == []


async def test_a_setting_the_pipeline_does_not_send_is_warned_about() -> None:
    script = Script([Reply(text="Sunny.")])
    async with ReplayServer(script.answer) as server:
        agent = Agent(model(server))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            await agent.run("hi", model_settings=ModelSettings(timeout=3, max_retries=0))
    named = sorted(
        str(w.message).split("`")[1] for w in caught if w.category is UnsupportedSettingWarning
    )
    assert named == ["max_retries", "timeout"]


def get_time(city: str) -> str:
    """The local time in a city."""
    return "noon"


def get_weather(city: str) -> str:
    """The weather in a city."""
    return "sunny"


@pytest.mark.parametrize(
    ("choice", "tools", "tool_choice"),
    [
        (None, ["get_time", "get_weather"], None),
        ("none", ["get_time", "get_weather"], "none"),
        ("required", ["get_time", "get_weather"], "required"),
        (
            ["get_weather"],
            ["get_weather"],
            {"type": "function", "function": {"name": "get_weather"}},
        ),
    ],
    ids=["unset", "none", "required", "one-named"],
)
async def test_tool_choice_is_the_tool_mode_and_the_tools_declared(
    choice: Any, tools: list[str], tool_choice: Any
) -> None:
    """pydantic-ai's ``tool_choice`` was dropped; it is now sent as ``OpenAIChatModel`` sends
    it to a server without ``allowed_tools`` (a subset by declaring only those tools). An agent
    takes a forcing choice only per step (from a capability); here it is one direct request."""
    script = Script([Reply(text="Sunny.")])
    definitions = [
        ToolDefinition(name=f.__name__, description=f.__doc__, parameters_json_schema={})
        for f in (get_time, get_weather)
    ]
    async with ReplayServer(script.answer) as server:
        await model_request(
            model(server),
            [ModelRequest.user_text_prompt("hi")],
            model_settings=ModelSettings(tool_choice=choice),
            model_request_parameters=ModelRequestParameters(function_tools=definitions),
        )
    (body,) = script.bodies
    assert [t["function"]["name"] for t in body["tools"]] == tools
    assert body.get("tool_choice") == tool_choice

"""``OaicompatModel`` under pydantic-ai's agent loop against a real ``llama-server``: the
server's grammar forces a call to the agent's tool (``framework_steering``), pydantic-ai runs it
and asks again, and the second request carries the call and its result; and ``NativeOutput``,
whole and streamed, comes back as the JSON the server's schema grammar allowed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from providers import (
    ChatInput,
    ChatOptions,
    ChatResponse,
    ChatResponseUpdate,
    ChatRole,
    DelegatingChatClient,
    FunctionCallContent,
    create_chat_client,
)
from tests.integration.framework_steering import Steering
from tests.integration.test_llamacpp_server_tool_calls import WEATHER_SCHEMA, schema_violations
from tests.integrations.exchanges import require

require("pydantic_ai", "pydantic-ai")

from pydantic_ai import Agent, NativeOutput, ToolOutput  # noqa: E402
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.settings import ModelSettings  # noqa: E402

from providers.integrations.pydantic_ai import OaicompatModel  # noqa: E402


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
async def test_the_agent_runs_the_servers_tool_call(plain_server: Any, streamed: bool) -> None:
    ran: list[dict[str, str]] = []

    def get_weather(
        city: Literal["Paris", "London", "Tokyo"], unit: Literal["celsius", "fahrenheit"]
    ) -> str:
        """Current weather in a city."""
        ran.append({"city": city, "unit": unit})
        return f"Sunny in {city}, 21 degrees {unit}"

    steering = Steering(create_chat_client(plain_server.base_url, backend="llamacpp"))
    model = OaicompatModel(steering)
    agent = Agent(model, tools=[get_weather], output_type=str)
    if streamed:
        async with agent.run_stream("What is the weather in Paris?") as result:
            await result.get_output()
        messages = result.all_messages()
    else:
        messages = (await agent.run("What is the weather in Paris?")).all_messages()
    await model.aclose()

    responses = [m for m in messages if isinstance(m, ModelResponse)]
    calls = [p for p in responses[0].parts if isinstance(p, ToolCallPart)]
    assert [c.tool_name for c in calls] == ["get_weather"]
    assert schema_violations(calls[0].args_as_dict(), WEATHER_SCHEMA) == []
    assert ran == [calls[0].args_as_dict()]
    assert responses[0].usage.output_tokens > 0
    # The second request: the call as the server made it, then its result.
    history, _ = steering.sent[1]
    (sent_call,) = [c for c in history[-2].contents if isinstance(c, FunctionCallContent)]
    assert (sent_call.call_id, sent_call.arguments) == (calls[0].tool_call_id, ran[0])
    assert history[-1].role == ChatRole.TOOL


Word = Annotated[str, Field(max_length=12)]


class Tally(BaseModel):
    """The tiny schema the random model must fill: every value bounded (an unbounded string
    lets a random model write until the token limit)."""

    name: Word
    n: int = Field(ge=0, le=99)


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
async def test_native_output_is_the_servers_json_of_the_schema(
    plain_server: Any, streamed: bool
) -> None:
    """``NativeOutput`` is sent as ``response_format``; llama-server compiles it into a grammar,
    so the random model's noise is JSON of the schema, and pydantic-ai validates it. Streamed,
    pydantic-ai shows partial values as the JSON arrives, then the validated one."""
    sent: list[ChatOptions] = []

    class Keeps(DelegatingChatClient):
        def get_streaming_response(
            self, messages: ChatInput, options: ChatOptions | None = None
        ) -> AsyncIterator[ChatResponseUpdate]:
            sent.append(options or ChatOptions())
            return super().get_streaming_response(messages, options)

        async def get_response(
            self, messages: ChatInput, options: ChatOptions | None = None
        ) -> ChatResponse:
            sent.append(options or ChatOptions())
            return await super().get_response(messages, options)

    model = OaicompatModel(Keeps(create_chat_client(plain_server.base_url, backend="llamacpp")))
    agent = Agent(model, output_type=NativeOutput(Tally))
    settings = ModelSettings(max_tokens=400, seed=7)
    partial: list[Tally] = []
    if streamed:
        async with agent.run_stream("Count something.", model_settings=settings) as result:
            partial = [value async for value in result.stream_output(debounce_by=None)]
            output = await result.get_output()
        messages = result.all_messages()
    else:
        done = await agent.run("Count something.", model_settings=settings)
        output, messages = done.output, done.all_messages()
    await model.aclose()

    assert isinstance(output, Tally)
    (options,) = sent
    assert options.response_format is not None
    assert options.response_format.kind == "json_schema"
    (response,) = [m for m in messages if isinstance(m, ModelResponse)]
    text = "".join(p.content for p in response.parts if isinstance(p, TextPart))
    assert Tally.model_validate_json(text) == output
    if streamed:
        assert partial and partial[-1] == output


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "run_stream"])
async def test_tool_output_is_the_servers_call_of_the_output_tool(
    plain_server: Any, streamed: bool
) -> None:
    """``ToolOutput``: pydantic-ai offers only its ``final_result`` tool and requires a call;
    the server's own tool-call grammar (steered into the call as ``framework_steering`` does)
    makes the random model's arguments fit the schema, and pydantic-ai validates them."""
    steering = Steering(create_chat_client(plain_server.base_url, backend="llamacpp"))
    model = OaicompatModel(steering)
    agent = Agent(model, output_type=ToolOutput(Tally))
    if streamed:
        async with agent.run_stream("Count something.") as result:
            output = await result.get_output()
        messages = result.all_messages()
    else:
        done = await agent.run("Count something.")
        output, messages = done.output, done.all_messages()
    await model.aclose()

    assert isinstance(output, Tally)
    (_, options), *_ = steering.sent
    assert [t.name for t in options.tool_declarations()] == ["final_result"]
    call = next(
        p
        for m in messages
        if isinstance(m, ModelResponse)
        for p in m.parts
        if isinstance(p, ToolCallPart)
    )
    assert call.tool_name == "final_result"
    assert Tally.model_validate(call.args_as_dict()) == output

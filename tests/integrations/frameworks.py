"""Each framework's own agent loop over an OpenAI-SDK client, as its users write it.

A runner takes an ``AsyncOpenAI`` (or, for LangChain, the httpx client its ``ChatOpenAI``
builds one from), offers ``get_weather``, asks the question and returns what the framework
says happened: the final answer, the reasoning it kept in its own slot (``None`` when the
class has no slot for it), the token usage it summed, and the calls the tool received.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import httpx
import pytest

from tests.integrations.replay_turns import QUESTION, TOOL_RESULT

__all__ = ["RUNNERS", "AgentRun", "require"]


def require(module: str) -> ModuleType:
    """The framework module; outside CI a missing one skips the test with the extra to
    install, in CI it fails (the CI installs every extra, so a missing one is a broken
    install, not an optional feature)."""
    if os.environ.get("CI"):
        return importlib.import_module(module)
    reason = f"{module} not installed: pip install -e '.[frameworks]'"
    found: ModuleType = pytest.importorskip(module, reason=reason)
    return found


@dataclass
class AgentRun:
    answer: str
    reasoning: str | None
    """The first turn's reasoning as the framework holds it; ``None``: the class drops it."""
    input_tokens: int
    output_tokens: int
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


def _weather_tool(calls: list[dict[str, Any]]) -> Callable[[str, str], str]:
    def get_weather(city: str, unit: str = "celsius") -> str:
        """The current weather in a city."""
        calls.append({"city": city, "unit": unit})
        return TOOL_RESULT

    return get_weather


async def run_pydantic_ai(openai_client: Any, stream: bool) -> AgentRun:
    pydantic_ai = require("pydantic_ai")
    from pydantic_ai.messages import ModelResponse, ThinkingPart
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    calls: list[dict[str, Any]] = []
    model = OpenAIChatModel("served", provider=OpenAIProvider(openai_client=openai_client))
    agent = pydantic_ai.Agent(model, tools=[_weather_tool(calls)])
    if stream:
        async with agent.run_stream(QUESTION) as result:
            answer = await result.get_output()
            messages, usage = result.all_messages(), result.usage
    else:
        finished = await agent.run(QUESTION)
        answer, messages, usage = finished.output, finished.all_messages(), finished.usage
    responses = [m for m in messages if isinstance(m, ModelResponse)]
    thinking = "".join(p.content for p in responses[0].parts if isinstance(p, ThinkingPart))
    return AgentRun(answer, thinking, usage.input_tokens, usage.output_tokens, calls)


async def run_langchain_openai(http_client: httpx.AsyncClient, stream: bool) -> AgentRun:
    agents = require("langchain.agents")
    langchain_openai = require("langchain_openai")
    from langchain_core.messages import AIMessage

    calls: list[dict[str, Any]] = []
    llm = langchain_openai.ChatOpenAI(
        model="served",
        api_key="unused",
        base_url="http://oaicompat.invalid/v1",
        http_async_client=http_client,
        streaming=stream,
        stream_usage=True,
        max_retries=0,
    )
    agent = agents.create_agent(llm, [_weather_tool(calls)])
    state = await agent.ainvoke({"messages": [{"role": "user", "content": QUESTION}]})
    answers = [m for m in state["messages"] if isinstance(m, AIMessage)]
    reasoning = answers[0].additional_kwargs.get("reasoning_content")
    used = [m.usage_metadata for m in answers if m.usage_metadata]
    return AgentRun(
        answers[-1].text,
        reasoning,
        sum(u["input_tokens"] for u in used),
        sum(u["output_tokens"] for u in used),
        calls,
    )


async def run_agent_framework(openai_client: Any, stream: bool) -> AgentRun:
    af_openai = require("agent_framework.openai")
    agent_framework = require("agent_framework")

    calls: list[dict[str, Any]] = []
    client = af_openai.OpenAIChatCompletionClient(model="served", async_client=openai_client)
    agent = client.as_agent(tools=[_weather_tool(calls)])
    if stream:
        updates = [update async for update in agent.run(QUESTION, stream=True)]
        response = agent_framework.AgentResponse.from_updates(updates)
    else:
        response = await agent.run(QUESTION)
    reasoning = "".join(
        content.text or ""
        for message in response.messages
        for content in message.contents
        if content.type == "text_reasoning"
    )
    usage = response.usage_details or {}
    return AgentRun(
        response.text,
        reasoning,
        usage.get("input_token_count") or 0,
        usage.get("output_token_count") or 0,
        calls,
    )


async def run_openai_agents(openai_client: Any, stream: bool) -> AgentRun:
    agents = require("agents")
    agents.set_tracing_disabled(True)  # the SDK would export traces to OpenAI's servers

    calls: list[dict[str, Any]] = []
    model = agents.OpenAIChatCompletionsModel(model="served", openai_client=openai_client)
    agent = agents.Agent(
        name="weather",
        model=model,
        tools=[agents.function_tool(_weather_tool(calls))],
        # Without it the SDK sends no stream_options, and a streamed answer has no usage.
        model_settings=agents.ModelSettings(include_usage=True),
    )
    if stream:
        result = agents.Runner.run_streamed(agent, QUESTION)
        async for _ in result.stream_events():
            pass
    else:
        result = await agents.Runner.run(agent, QUESTION)
    first_turn: list[Any] = []
    for item in result.new_items:
        if isinstance(item, agents.ToolCallItem):
            break
        if isinstance(item, agents.ReasoningItem):
            first_turn += item.raw_item.content or item.raw_item.summary or []
    reasoning = "".join(part.text for part in first_turn)
    usage = result.context_wrapper.usage
    return AgentRun(
        str(result.final_output), reasoning, usage.input_tokens, usage.output_tokens, calls
    )


Runner = Callable[[Any, bool], Awaitable[AgentRun]]
RUNNERS: dict[str, tuple[str, Runner]] = {
    # name: (which client the runner takes: "openai" an AsyncOpenAI, "httpx" an httpx client)
    "pydantic-ai": ("openai", run_pydantic_ai),
    "langchain-openai": ("httpx", run_langchain_openai),
    "agent-framework": ("openai", run_agent_framework),
    "openai-agents": ("openai", run_openai_agents),
}

"""``OaicompatModel`` under pydantic-ai's real agent loop, over recorded two-turn exchanges.

The first request is answered with a recorded tool call (vLLM and SGLang: reasoning, then a
hermes call; llama.cpp: the call left in the text, which only the oaicompat pipeline turns into
a call), the second with a recorded answer. pydantic-ai runs the tool and builds the second
request; the tests check what pydantic-ai saw (parts, output, usage) and what went on the wire.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from providers import (
    BackendUnavailableError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    create_chat_client,
)
from providers.abstractions.services import service_of
from providers.layers.retry import RetryingChatClient
from providers.replay.server import ReplayServer
from telemetry.telemetry_client import TelemetryChatClient
from tests.integrations.exchanges import (
    BY_ID,
    SCENARIOS,
    Exchange,
    KeepsStreams,
    Scenario,
    StallingServer,
    Weather,
    require,
    tool_result,
)

require("pydantic_ai", "pydantic-ai")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.exceptions import (  # noqa: E402
    ModelConnectionError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelServerError,
    ModelTimeoutError,
    ModelUnavailableError,
    UnexpectedModelBehavior,
)
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
)

from providers.integrations.pydantic_ai import OaicompatModel  # noqa: E402
from providers.integrations.pydantic_ai.convert import to_model_error  # noqa: E402


def client(server: ReplayServer | StallingServer, backend: str) -> KeepsStreams:
    return KeepsStreams(
        create_chat_client(server.base_url, backend=backend, telemetry=False, retry=None)
    )


async def run(
    scenario: Scenario, model: OaicompatModel, weather: Weather
) -> tuple[str, Any, list[ModelMessage]]:
    agent = Agent(model, tools=[weather.get_weather])
    if scenario.streamed:
        async with agent.run_stream("What is the weather in Paris?") as result:
            output = await result.get_output()
        return output, result.usage, result.all_messages()
    done = await agent.run("What is the weather in Paris?")
    return done.output, done.usage, done.all_messages()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.call for s in SCENARIOS])
async def test_the_agent_runs_the_recorded_call_once_and_returns_the_recorded_answer(
    scenario: Scenario,
) -> None:
    exchange, weather = scenario.exchange(), Weather()
    async with ReplayServer(exchange.answer) as server:
        output, usage, messages = await run(
            scenario, OaicompatModel(client(server, scenario.first.backend)), weather
        )
    name, arguments, call_id = scenario.recorded_call()
    assert weather.ran == [arguments]
    # pydantic-ai strips the whitespace around a text output; the words are the recording's.
    assert output == scenario.second.expected["text"].strip()
    responses = [m for m in messages if isinstance(m, ModelResponse)]
    assert len(responses) == 2
    (call,) = [p for p in responses[0].parts if isinstance(p, ToolCallPart)]
    assert (call.tool_name, call.args_as_dict()) == (name, arguments)
    # llama.cpp said "stop" for the call it left in the text; recovered, it is a tool call.
    assert responses[0].finish_reason == "tool_call"
    assert responses[1].finish_reason == "stop"
    # Reasoning is in pydantic-ai's slot for it, never in the answer.
    thinking = [p.content for p in responses[1].parts if isinstance(p, ThinkingPart)]
    assert thinking == [scenario.second.expected["reasoning"].strip()]
    texts = [p.content for p in responses[1].parts if isinstance(p, TextPart)]
    assert [t.strip() for t in texts] == [output]
    assert (usage.input_tokens, usage.output_tokens) == scenario.usage()
    assert usage.requests == 2 and usage.tool_calls == 1
    check_the_second_request(exchange, call.tool_call_id, call_id, arguments, name)


def check_the_second_request(
    exchange: Exchange, sent_id: str, recorded_id: str, arguments: dict[str, Any], name: str
) -> None:
    assert len(exchange.bodies) == 2
    first, second = exchange.bodies
    assert [t["function"]["name"] for t in first["tools"]] == ["get_weather"]
    assert second["messages"][: len(first["messages"])] == first["messages"]
    assistant, result = second["messages"][len(first["messages"]) :]
    (wire_call,) = assistant["tool_calls"]
    assert wire_call["id"] == sent_id and recorded_id in ("", sent_id)
    assert wire_call["function"]["name"] == name
    assert result == {"role": "tool", "tool_call_id": sent_id, "content": tool_result(arguments)}


def test_from_config_has_the_signature_every_adapter_has() -> None:
    """Issue 34 item 10: ``from_config(path="oaicompat.yaml", role="main", *, telemetry=False,
    **kwargs)`` in every integration, ``role`` positional or keyword."""
    parameters = inspect.signature(OaicompatModel.from_config).parameters
    positional = inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert [(n, p.kind, p.default) for n, p in list(parameters.items())[:2]] == [
        ("path", positional, "oaicompat.yaml"),
        ("role", positional, "main"),
    ]
    assert parameters["telemetry"].kind == inspect.Parameter.KEYWORD_ONLY
    assert parameters["telemetry"].default is False
    assert list(parameters.values())[-1].kind == inspect.Parameter.VAR_KEYWORD


def test_without_pydantic_ai_the_import_error_names_the_extra() -> None:
    """Issue 34 item 11: a bare ``No module named 'pydantic_ai'`` names a package the user never
    asked for; the error says which oaicompat extra brings it, and stays a
    ``ModuleNotFoundError`` for code that probes for the adapter."""
    script = textwrap.dedent(
        """\
        import sys
        sys.modules["pydantic_ai"] = None  # as if the extra were not installed
        try:
            import providers.integrations.pydantic_ai
        except ModuleNotFoundError as error:
            print(error.name)
            print(error)
        """
    )
    ran = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
        check=True,
    )
    name, message = ran.stdout.splitlines()
    assert name.split(".")[0] == "pydantic_ai"
    assert "pip install 'oaicompat[pydantic-ai]'" in message
    assert "providers.integrations.pydantic_ai" in message


async def test_from_config_builds_the_configured_pipeline(tmp_path: Path) -> None:
    scenario = SCENARIOS[0]
    exchange, weather = scenario.exchange(), Weather()
    async with ReplayServer(exchange.answer) as server:
        config = tmp_path / "oaicompat.yaml"
        config.write_text(
            textwrap.dedent(
                f"""\
                backends:
                  gpu: {{base_url: "{server.base_url}", model_id: qwen3, backend: vllm}}
                roles: {{main: gpu}}
                """
            )
        )
        model = OaicompatModel.from_config(config, "main")
        # The framework instruments the call; oaicompat's own telemetry layer is left out.
        assert service_of(model.client, TelemetryChatClient) is None
        assert service_of(model.client, RetryingChatClient) is not None
        assert (model.model_name, model.system, model.base_url) == (
            "qwen3",
            "vllm",
            server.base_url + "/v1",
        )
        output, _, _ = await run(scenario, model, weather)
        await model.aclose()
    assert output == scenario.second.expected["text"].strip()
    assert exchange.bodies[0]["model"] == "qwen3"


@pytest.mark.parametrize(
    "transcript",
    [
        "vllm/captured--plain--error-context-exceeded",
        "vllm/captured--plain--error-context-exceeded-stream",
    ],
)
async def test_an_error_answer_is_pydantic_ais_http_error_of_its_category(transcript: str) -> None:
    recorded = BY_ID[transcript]
    exchange = Exchange([recorded])
    async with ReplayServer(exchange.answer) as server:
        agent = Agent(OaicompatModel(client(server, "vllm")))
        with pytest.raises(ModelHTTPError) as caught:
            if recorded.request.get("stream"):
                async with agent.run_stream("hi") as result:
                    await result.get_output()
            else:
                await agent.run("hi")
    assert isinstance(caught.value, ModelContextWindowExceededError)
    assert caught.value.status_code == 400
    assert caught.value.model_name == "default"


async def test_an_error_inside_the_stream_is_reported_in_stream() -> None:
    exchange = Exchange([BY_ID["vllm/reconstructed--error-midstream"]])
    async with ReplayServer(exchange.answer) as server:
        agent = Agent(OaicompatModel(client(server, "vllm")))
        with pytest.raises(ModelServerError) as caught:
            async with agent.run_stream("hi") as result:
                await result.get_output()
    assert isinstance(caught.value, ModelHTTPError)
    assert caught.value.status_code == 500 and caught.value.in_stream


async def test_leaving_the_stream_early_closes_the_upstream_request() -> None:
    async with StallingServer(BY_ID["vllm/captured--plain--stream-text"]) as server:
        agent = Agent(OaicompatModel(client(server, "vllm")))
        async with agent.run_stream("hi") as result:
            async for _ in result.stream_text(delta=True):
                break
        await asyncio.wait_for(server.closed.wait(), 5)
    assert server.requests == 1


async def test_a_response_without_usage_is_marked_unmeasured_not_zero() -> None:
    exchange = Exchange([BY_ID["vllm/captured--plain--stream-text-no-usage"]])
    async with ReplayServer(exchange.answer) as server:
        agent = Agent(OaicompatModel(client(server, "vllm")))
        async with agent.run_stream("hi") as result:
            await result.get_output()
        (response,) = [m for m in result.all_messages() if isinstance(m, ModelResponse)]
    assert response.usage.unmeasured_requests == 1
    assert result.usage.unmeasured_requests == 1


async def test_the_context_window_comes_from_what_the_caller_or_the_server_says() -> None:
    async with ReplayServer(
        Exchange([BY_ID["vllm/captured--plain--stream-text"]]).answer
    ) as server:
        assert OaicompatModel(client(server, "vllm"), context_window=4096).context_window == 4096
        assert OaicompatModel(client(server, "vllm")).context_window is None


async def test_a_call_the_server_cut_off_never_runs() -> None:
    """vLLM cut the call at ``max_tokens``: its arguments are no JSON object. The part keeps the
    text the server sent (here none), so pydantic-ai's own argument validation rejects it; the
    tool must not run with made-up empty arguments."""
    ran: list[dict[str, str]] = []

    def get_weather(city: str = "Paris", unit: str = "celsius") -> str:
        """Current weather in a city (every argument optional: empty arguments would run)."""
        ran.append({"city": city, "unit": unit})
        return "Sunny"

    exchange = Exchange(
        [
            BY_ID["vllm/captured--qwen3-hermes--stream-tool-call-length-cut"],
            BY_ID["vllm/captured--plain--stream-text"],
        ]
    )
    async with ReplayServer(exchange.answer) as server:
        agent = Agent(OaicompatModel(client(server, "vllm")), tools=[get_weather])
        with contextlib.suppress(UnexpectedModelBehavior):
            async with agent.run_stream("What is the weather in Paris?") as result:
                await result.get_output()
    assert ran == []


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (RateLimitError("slow down", status=429, retry_after=2.0), ModelRateLimitError),
        (BackendUnavailableError("loading", status=503), ModelUnavailableError),
        (ProviderConnectionError("refused"), ModelConnectionError),
        (ProviderTimeoutError("no first token", phase="first_token"), ModelTimeoutError),
    ],
    ids=["429", "503", "connection", "timeout"],
)
def test_each_failure_is_the_category_pydantic_ai_retries_and_falls_back_on(
    error: ProviderError, expected: type[Exception]
) -> None:
    translated = to_model_error(error, "m")
    assert translated.retry_after == error.retry_after
    assert isinstance(translated, ModelHTTPError) == (error.status is not None)
    assert isinstance(translated, expected)

"""Backend-neutral scenarios: a model text, the request around it, and what the caller must get.

A scripted engine (vLLM, SGLang) or a grammar (llama.cpp) makes the model emit ``model_text``
exactly; the server's own parsers then split it, or leave it in content for our recovery layer.
Whichever server ran it, a user of this library must see the same ``ChatResponse``: the
``expected_*`` fields. That is the promise of issue #10 ("the same model text yields the same
ChatResponse on llama.cpp, vLLM and SGLang"), so these are data, shared by every backend's suite
and the cross-backend test; nothing here knows a server.

Token counts are not expected values here: they depend on the server's tokenisation of the text
(and on whether it counts the end-of-sequence token). Each backend's test compares usage with
what its engine really emitted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from providers import ChatClient, ChatOptions, ChatResponse, ChatToolMode

__all__ = [
    "CODER_TOOLS",
    "PROMPT",
    "SCENARIOS",
    "WEATHER_TOOLS",
    "ExpectedCall",
    "Scenario",
    "assert_matches",
    "run",
]

PROMPT = "What is the weather in Paris?"

WEATHER_TOOLS: tuple[Mapping[str, Any], ...] = (
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_time",
            "description": "Get the time",
            "parameters": {
                "type": "object",
                "properties": {"tz": {"type": "string"}},
                "required": ["tz"],
            },
        },
    },
)
"""The tools of the hermes scenarios (as in the captured vLLM and SGLang traffic)."""

CODER_TOOLS: tuple[Mapping[str, Any], ...] = (
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
    },
)
"""The qwen3_coder tool: an integer parameter, which the XML format carries as bare text."""

HERMES_WEATHER = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}'
    "\n</tool_call>"
)
HERMES_TIME = '<tool_call>\n{"name": "get_time", "arguments": {"tz": "Europe/Paris"}}\n</tool_call>'
CODER_WEATHER = (
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
    "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
)
ANSWER = "It is sunny in Paris."
THOUGHT = "The user asks for the weather in Paris."
NO_THINKING: Mapping[str, Any] = MappingProxyType({"enable_thinking": False})


@dataclass(frozen=True)
class ExpectedCall:
    """A tool call as the caller must see it: name and parsed arguments (ids are the server's)."""

    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True)
class Scenario:
    """One model text and the normalised result a user must get from it.

    ``template_kwargs`` go out as ``chat_template_kwargs``: Qwen3 templates leave thinking on
    by default, and a model in thinking mode always opens with ``<think>``, so scenarios whose
    text has no think block turn thinking off, as a real caller would. ``tool_mode`` is
    ``"auto"``, ``"none"`` or ``None`` (not sent).

    ``cut_inside_call`` marks a text that ``max_output_tokens`` cuts inside a tool call. Servers
    differ there (vLLM 0.33 streams the call's name, with hermes nothing more, with qwen3_coder
    the first argument fragments; not streaming, hermes returns the raw partial markup as
    content and qwen3_coder a call ``get_weather({})``), so the promise is weaker and the same
    everywhere:
    finish ``length``, text that is a prefix of the model text (nothing invented), and no call
    that looks complete: any call surfaced must carry ``error``, so a caller never runs a tool
    on half its arguments.
    """

    name: str
    model_text: str
    expected_text: str = ""
    expected_reasoning: str = ""
    expected_calls: tuple[ExpectedCall, ...] = ()
    expected_finish: str = "stop"
    max_output_tokens: int | None = 120
    tools: tuple[Mapping[str, Any], ...] = ()
    tool_mode: str | None = None
    template_kwargs: Mapping[str, Any] | None = None
    prompt: str = PROMPT
    cut_inside_call: bool = False
    notes: str = field(default="", compare=False)

    def options(self, **extra: Any) -> ChatOptions:
        """The request options; ``extra`` adds top-level body keys (``model_id`` is a field)."""
        body: dict[str, Any] = {}
        if self.template_kwargs is not None:
            body["chat_template_kwargs"] = dict(self.template_kwargs)
        model_id = extra.pop("model_id", None)
        body.update(extra)
        return ChatOptions(
            model_id=model_id,
            max_output_tokens=self.max_output_tokens,
            tools=[dict(tool) for tool in self.tools] or None,
            tool_mode=None if self.tool_mode is None else ChatToolMode(self.tool_mode),
            additional_properties=body,
        )


def assert_matches(response: ChatResponse, scenario: Scenario) -> None:
    """Assert that ``response`` is what ``scenario`` promises (text, reasoning, calls, finish).

    Each failure message names the scenario and shows both sides, so a cross-backend failure
    says at once which backend differs and how.
    """
    where = f"scenario {scenario.name!r}"
    if scenario.cut_inside_call:
        _assert_cut_inside_call(response, scenario, where)
        return
    assert response.text == scenario.expected_text, (
        f"{where}: text {response.text!r} != {scenario.expected_text!r}"
    )
    assert response.reasoning == scenario.expected_reasoning, (
        f"{where}: reasoning {response.reasoning!r} != {scenario.expected_reasoning!r}"
    )
    calls = [(call.name, call.arguments, call.error) for call in response.tool_calls]
    expected = [(call.name, dict(call.arguments), None) for call in scenario.expected_calls]
    assert calls == expected, f"{where}: tool calls {calls!r} != {expected!r}"
    assert len({call.call_id for call in response.tool_calls}) == len(calls), (
        f"{where}: tool-call ids are not distinct"
    )
    assert response.finish_reason == scenario.expected_finish, (
        f"{where}: finish {response.finish_reason!r} != {scenario.expected_finish!r}"
    )


def _assert_cut_inside_call(response: ChatResponse, scenario: Scenario, where: str) -> None:
    assert response.finish_reason == "length", f"{where}: finish {response.finish_reason!r}"
    assert scenario.model_text.startswith(response.text), (
        f"{where}: text {response.text!r} is not a prefix of the model text"
    )
    assert response.reasoning == scenario.expected_reasoning, (
        f"{where}: reasoning {response.reasoning!r} != {scenario.expected_reasoning!r}"
    )
    for call in response.tool_calls:
        assert call.error is not None, f"{where}: an incomplete call looks complete: {call!r}"


async def run(
    client: ChatClient, scenario: Scenario, *, streaming: bool, **extra: Any
) -> ChatResponse:
    """Send ``scenario``'s request through ``client``; a stream is folded with
    ``ChatResponse.from_updates``, the same function users call."""
    options = scenario.options(**extra)
    if not streaming:
        return await client.get_response(scenario.prompt, options)
    updates = [update async for update in client.get_streaming_response(scenario.prompt, options)]
    return ChatResponse.from_updates(updates)


def _scenarios(*items: Scenario) -> dict[str, Scenario]:
    return {item.name: item for item in items}


SCENARIOS: dict[str, Scenario] = _scenarios(
    Scenario("text", ANSWER, expected_text=ANSWER, template_kwargs=NO_THINKING),
    Scenario(
        "text-length",
        ANSWER,
        expected_text="It is sunny",
        expected_finish="length",
        max_output_tokens=3,
        template_kwargs=NO_THINKING,
        notes="3 tokens of the Qwen2 vocabulary: 'It', ' is', ' sunny'",
    ),
    Scenario(
        "reasoning",
        f"<think>\n{THOUGHT}\n</think>\n\n{ANSWER}",
        expected_text=ANSWER,
        expected_reasoning=THOUGHT,
        notes="the template's newlines around the tags are not part of either",
    ),
    Scenario(
        "reasoning-no-open-tag",
        f"{THOUGHT}\n</think>\n\n{ANSWER}",
        expected_text=ANSWER,
        expected_reasoning=THOUGHT,
        template_kwargs=MappingProxyType({"enable_thinking": True}),
        notes="R1-style: the prompt already ends with '<think>\\n', the model only closes it",
    ),
    Scenario(
        "reasoning-length-cut",
        f"{THOUGHT}\n</think>\n\n{ANSWER}",
        expected_reasoning="The user asks for the weather",
        expected_finish="length",
        max_output_tokens=6,
        template_kwargs=MappingProxyType({"enable_thinking": True}),
        notes="cut inside the think block: the partial reasoning is kept, no text",
    ),
    Scenario(
        "tool-call",
        HERMES_WEATHER,
        expected_calls=(ExpectedCall("get_weather", {"city": "Paris", "unit": "celsius"}),),
        expected_finish="tool_calls",
        tools=WEATHER_TOOLS,
        template_kwargs=NO_THINKING,
    ),
    Scenario(
        "parallel-tool-calls",
        f"{HERMES_WEATHER}\n{HERMES_TIME}",
        expected_calls=(
            ExpectedCall("get_weather", {"city": "Paris", "unit": "celsius"}),
            ExpectedCall("get_time", {"tz": "Europe/Paris"}),
        ),
        expected_finish="tool_calls",
        max_output_tokens=200,
        tools=WEATHER_TOOLS,
        template_kwargs=NO_THINKING,
    ),
    Scenario(
        "text-then-tool-call",
        f"Let me check.\n{HERMES_WEATHER}",
        expected_text="Let me check.",
        expected_calls=(ExpectedCall("get_weather", {"city": "Paris", "unit": "celsius"}),),
        expected_finish="tool_calls",
        max_output_tokens=200,
        tools=WEATHER_TOOLS,
        template_kwargs=NO_THINKING,
        notes="the newline between the text and the call is formatting, not text",
    ),
    Scenario(
        "reasoning-then-tool-call",
        f"<think>\nI should call the weather tool.\n</think>\n\n{HERMES_WEATHER}",
        expected_reasoning="I should call the weather tool.",
        expected_calls=(ExpectedCall("get_weather", {"city": "Paris", "unit": "celsius"}),),
        expected_finish="tool_calls",
        max_output_tokens=200,
        tools=WEATHER_TOOLS,
    ),
    Scenario(
        "tool-call-length-cut",
        HERMES_WEATHER,
        expected_finish="length",
        max_output_tokens=12,
        tools=WEATHER_TOOLS,
        template_kwargs=NO_THINKING,
        cut_inside_call=True,
        notes="cut inside the arguments: no call may be invented from half a call",
    ),
    Scenario(
        "tool-call-tool-choice-none",
        HERMES_WEATHER,
        expected_calls=(ExpectedCall("get_weather", {"city": "Paris", "unit": "celsius"}),),
        expected_finish="tool_calls",
        tools=WEATHER_TOOLS,
        tool_mode="none",
        template_kwargs=NO_THINKING,
        notes="the server leaves the raw tags in content; our text recovery finds the call",
    ),
    Scenario(
        "coder-tool-call",
        CODER_WEATHER,
        expected_calls=(ExpectedCall("get_weather", {"city": "Paris", "days": 3}),),
        expected_finish="tool_calls",
        tools=CODER_TOOLS,
        notes="days is typed from the tool schema: the integer 3, not the string '3'",
    ),
    Scenario(
        "coder-text-then-tool-call",
        f"Let me check.\n{CODER_WEATHER}",
        expected_text="Let me check.",
        expected_calls=(ExpectedCall("get_weather", {"city": "Paris", "days": 3}),),
        expected_finish="tool_calls",
        max_output_tokens=200,
        tools=CODER_TOOLS,
    ),
    Scenario(
        "coder-tool-call-length-cut",
        CODER_WEATHER,
        expected_finish="length",
        max_output_tokens=14,
        tools=CODER_TOOLS,
        cut_inside_call=True,
        notes="cut inside the parameters: no call may be invented from half a call",
    ),
)

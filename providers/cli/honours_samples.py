"""The option samples of the honours table (``providers.cli.honours_table``): for each option,
one value and the request it is compared with, and the model families each is tried with.

A sample says what is asked, never what a backend does with it: that is found by building the
request (``honours_table.option_verdict``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from providers.abstractions.options import ChatOptions, ChatResponseFormat, ChatToolMode
from providers.abstractions.reasoning_options import (
    ReasoningEffort,
    ReasoningOptions,
    ReasoningOutput,
)
from providers.abstractions.records import value_class

__all__ = [
    "FAMILIES",
    "NO_FAMILY",
    "OPTION_SAMPLES",
    "SCHEMA",
    "WEATHER_TOOL",
    "OptionSample",
    "sample_named",
]

FAMILIES: tuple[str | None, ...] = (
    None,
    "qwen3",
    "qwq",
    "deepseek-r1",
    "deepseek-v3.1",
    "glm",
    "gpt-oss",
    "granite",
)
"""The model families every option is tried with (``None``: the client was told none); the
names of ``capabilities.family_table`` where it has the family."""

NO_FAMILY = "(none given)"
"""A row's ``family`` when the verdict differs by family and this one is for no family."""

SCHEMA: Mapping[str, Any] = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}
WEATHER_TOOL: Mapping[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


@value_class(frozen=True)
class OptionSample:
    """One value of one option, and the request it is compared with."""

    option: str
    """The row's name: the option and the value tried (``reasoning.effort=none``)."""
    asked: ChatOptions
    baseline: ChatOptions = field(default_factory=ChatOptions)
    """The same request without the option (with a tool, for an option about tool calls)."""
    about: str = ""
    """One line for the options page: what the option asks for."""
    streaming_is_the_option: bool = False
    """The option is streaming itself (``stream_options``): the baseline is not streamed."""
    unsent: str = ""
    """Why sending nothing is right when nothing is sent and nothing enforced (a ``tool_mode``
    with no tools), instead of the ``not honoured`` that would be otherwise."""
    placeholders: tuple[tuple[str, Any], ...] = ()
    """Values shown by name in the wire keys (``<schema>``) instead of spelled out."""


def _reasoning(effort: ReasoningEffort) -> ChatOptions:
    return ChatOptions(reasoning=ReasoningOptions(effort=effort))


def _format(response_format: ChatResponseFormat) -> ChatOptions:
    return ChatOptions(response_format=response_format)


_GBNF = 'root ::= "yes" | "no"'
_LARK = 'start: "yes" | "no"'
_TOOLS = ChatOptions(tools=[WEATHER_TOOL])

OPTION_SAMPLES: tuple[OptionSample, ...] = (
    OptionSample("reasoning.effort=none", _reasoning(ReasoningEffort.NONE), about="Do not think."),
    OptionSample("reasoning.effort=low", _reasoning(ReasoningEffort.LOW), about="Think a little."),
    OptionSample("reasoning.effort=high", _reasoning(ReasoningEffort.HIGH), about="Think hard."),
    OptionSample(
        "reasoning.effort=extra_high",
        _reasoning(ReasoningEffort.EXTRA_HIGH),
        about="Think as hard as the model can.",
    ),
    OptionSample(
        "reasoning.output=none",
        ChatOptions(reasoning=ReasoningOptions(output=ReasoningOutput.NONE)),
        about="The model may think; the caller gets none of its reasoning text.",
    ),
    OptionSample(
        "response_format=json_schema",
        _format(ChatResponseFormat.json_schema(SCHEMA)),
        about="JSON matching a schema (`ChatResponseFormat.json_schema`).",
        placeholders=(("<schema>", SCHEMA),),
    ),
    OptionSample(
        "response_format=json_object",
        _format(ChatResponseFormat.JSON),
        about="Any JSON object (`ChatResponseFormat.JSON`).",
    ),
    OptionSample(
        "response_format=regex",
        _format(ChatResponseFormat.regex("[0-9]+")),
        about="Text the whole of which matches a regular expression (here `[0-9]+`).",
    ),
    OptionSample(
        "response_format=choice",
        _format(ChatResponseFormat.choice(["yes", "no"])),
        about='Exactly one of a list of strings (here `["yes", "no"]`).',
    ),
    OptionSample(
        "response_format=grammar:gbnf",
        _format(ChatResponseFormat.grammar(_GBNF, "gbnf")),
        about=f"A GBNF grammar (llama.cpp's; here `{_GBNF}`).",
    ),
    OptionSample(
        "response_format=grammar:ebnf",
        _format(ChatResponseFormat.grammar(_GBNF, "ebnf")),
        about=f"An EBNF grammar (SGLang's and xgrammar's; here `{_GBNF}`).",
    ),
    OptionSample(
        "response_format=grammar:lark",
        _format(ChatResponseFormat.grammar(_LARK, "lark")),
        about=f"A Lark grammar (vLLM's guidance and outlines back ends; here `{_LARK}`).",
    ),
    OptionSample(
        "allow_multiple_tool_calls=false",
        ChatOptions(tools=[WEATHER_TOOL], allow_multiple_tool_calls=False),
        baseline=_TOOLS,
        about="At most one tool call in the answer (with a tool offered).",
    ),
    OptionSample(
        "stop_sequences",
        ChatOptions(stop_sequences=["END"]),
        about="End the answer before the first stop string (here `END`).",
    ),
    OptionSample(
        "tool_mode without tools",
        ChatOptions(tool_mode=ChatToolMode.AUTO),
        about="`tool_mode=AUTO` with no tools offered (an agent framework's habit).",
        unsent="not sent: with no tools there is nothing to choose from "
        "(vLLM answers 400 to tool_choice without tools)",
    ),
    OptionSample(
        "stream_options",
        ChatOptions(),
        about="Usage in a stream: `stream_options.include_usage`, which the client adds itself "
        "when streaming.",
        streaming_is_the_option=True,
        unsent="not sent: this server is not asked for usage in a stream",
    ),
)


def sample_named(option: str) -> OptionSample:
    """The sample of ``OPTION_SAMPLES`` whose ``option`` is ``option``."""
    for sample in OPTION_SAMPLES:
        if sample.option == option:
            return sample
    raise KeyError(option)

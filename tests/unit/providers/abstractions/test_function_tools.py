"""A plain Python function given as a tool (issue 34, item 9).

It failed with ``AttributeError: 'function' object has no attribute 'get'`` (or a
``ConfigurationTypeError`` refusing it): every path that takes tools builds ``ChatOptions``,
whose check now makes a function an ``AIFunction``, and refuses what cannot be one with a
message that says how to declare a tool.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import pytest
from pydantic import BaseModel

from providers import AIFunction, ChatOptions, ConfigurationTypeError, ToolDeclaration


def get_weather(city: str, unit: str = "celsius") -> str:
    """Current weather in a city.

    Args:
        city: The city's English name.
    """
    return f"21 degrees {unit} in {city}"


WEATHER_SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "The city's English name."},
        "unit": {"type": "string", "default": "celsius"},
    },
    "required": ["city"],
}


def test_a_function_in_the_options_is_made_an_ai_function() -> None:
    options = ChatOptions(tools=[get_weather])

    assert options.tools is not None
    (tool,) = options.tools
    assert isinstance(tool, AIFunction)
    assert tool.name == "get_weather"
    assert tool.description == "Current weather in a city."
    assert tool.parameters == WEATHER_SCHEMA
    assert options.to_openai()["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Current weather in a city.",
                "parameters": WEATHER_SCHEMA,
            },
        }
    ]
    assert options.tool_declarations() == [tool]


async def test_the_made_function_runs_the_callable() -> None:
    (tool,) = ChatOptions(tools=[get_weather]).tools or ()
    assert isinstance(tool, AIFunction)
    assert await tool.invoke({"city": "Paris"}) == "21 degrees celsius in Paris"


def test_a_function_beside_declarations_and_mappings_keeps_their_order_and_identity() -> None:
    declared = ToolDeclaration("get_time", "The time.")
    mapping = {"type": "function", "function": {"name": "lookup"}, "strict": True}
    given: list[Any] = [declared, get_weather, mapping]
    options = ChatOptions(tools=given)

    assert options.tools is not None
    assert [type(tool).__name__ for tool in options.tools][::2] == ["ToolDeclaration", "dict"]
    assert options.tools[0] is declared and options.tools[2] is mapping
    assert isinstance(options.tools[1], AIFunction)
    assert given[1] is get_weather, "the caller's list is left alone"
    assert options.to_openai()["tools"][2] == mapping  # written as given, strict kept


def test_options_without_functions_keep_the_very_sequence_given() -> None:
    tools = [ToolDeclaration("f")]
    assert ChatOptions(tools=tools).tools is tools


def test_from_openai_and_replace_accept_a_function() -> None:
    read = ChatOptions.from_openai({"tools": [get_weather], "temperature": 0.5})
    assert read.tools is not None and isinstance(read.tools[0], AIFunction)
    assert read.temperature == 0.5

    replaced = dataclasses.replace(ChatOptions(temperature=0.1), tools=[get_weather])
    assert replaced.tools is not None and isinstance(replaced.tools[0], AIFunction)
    again = dataclasses.replace(replaced, seed=3)
    assert again.tools is not None and again.tools[0] is replaced.tools[0]


def test_a_function_set_after_the_options_were_made_is_read_when_sent() -> None:
    options = ChatOptions()
    options.tools = [get_weather]
    assert options.to_openai()["tools"][0]["function"]["name"] == "get_weather"
    assert options.tool_declarations()[0].name == "get_weather"


def test_a_bound_method_and_an_async_function_are_tools() -> None:
    class Service:
        def lookup(self, key: str) -> str:
            """Look a key up."""
            return key

    async def fetch(url: str) -> str:
        """Fetch a page."""
        return url

    options = ChatOptions(tools=[Service().lookup, fetch])
    assert [tool.name for tool in options.tool_declarations()] == ["lookup", "fetch"]
    assert options.tool_declarations()[0].parameters == {
        "type": "object",
        "properties": {"key": {"type": "string"}},
        "required": ["key"],
    }


class Forecast(BaseModel):
    city: str


def _varargs(*cities: str) -> str:
    return ",".join(cities)


@pytest.mark.parametrize(
    ("tool", "says"),
    [
        (
            lambda city: city,
            r"tools\[0\] \(function\) cannot be read as a tool: tool name '<lambda>'",
        ),
        (functools.partial(get_weather, unit="kelvin"), r"tools\[0\] \(partial\) cannot be read"),
        (Forecast, r"tools\[0\] is a class \(Forecast\), not a tool"),
        (_varargs, r"\*cities cannot be described to a model"),
        (42, r"tools\[0\] must be a ToolDeclaration, a mapping or a function, not int"),
    ],
    ids=["lambda", "partial", "class", "varargs", "int"],
)
def test_what_cannot_be_a_tool_is_refused_with_how_to_declare_one(tool: Any, says: str) -> None:
    with pytest.raises(ConfigurationTypeError, match=says) as caught:
        ChatOptions(tools=[tool])
    assert isinstance(caught.value, TypeError)
    if not isinstance(tool, int):
        assert "AIFunction.from_callable(function, name=" in str(caught.value)
        assert "ToolDeclaration(name, description, parameters=" in str(caught.value)


def test_tool_declaration_from_openai_refuses_a_function_with_a_typed_error() -> None:
    with pytest.raises(ConfigurationTypeError, match="not function: put a Python function"):
        ToolDeclaration.from_openai(get_weather)  # type: ignore[arg-type]

"""``AIFunction.from_callable``: the schema, name and description a callable gives, and the
argument checks that run before it does."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from providers import AIFunction, ChatOptions, InvalidArgumentsError, ToolDeclaration
from providers.abstractions.signature import describe_docstring
from providers.backends import profile_for
from providers.chat_completions.request import build_chat_request
from providers.responses.request import build_responses_request


async def get_weather(
    city: str,
    unit: Literal["celsius", "fahrenheit"] = "celsius",
    days: Annotated[int, Field(ge=1, le=7, description="How many days, 1 to 7.")] = 1,
) -> dict[str, Any]:
    """Current weather in a city.

    Reads the nearest station, so it
    is never older than an hour.

    Args:
        city: The city's English name,
            as on a map.
        unit (str): Degrees of which scale.
        days: Ignored here: the annotation says it better.

    Returns:
        The report.
    """
    return {"city": city, "unit": unit, "days": days}


def test_the_schema_comes_from_the_annotations_and_the_docstring() -> None:
    function = AIFunction.from_callable(get_weather)
    assert isinstance(function, ToolDeclaration)
    assert function.name == "get_weather"
    assert function.description == (
        "Current weather in a city.\n\n"
        "Reads the nearest station, so it is never older than an hour."
    )
    assert function.parameters == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "The city's English name, as on a map."},
            "unit": {
                "type": "string",
                "enum": ["celsius", "fahrenheit"],
                "default": "celsius",
                "description": "Degrees of which scale.",
            },
            "days": {
                "type": "integer",
                "minimum": 1,
                "maximum": 7,
                "default": 1,
                "description": "How many days, 1 to 7.",
            },
        },
        "required": ["city"],
    }


def test_name_and_description_can_be_given() -> None:
    function = AIFunction.from_callable(get_weather, name="weather", description="Weather.")
    assert (function.name, function.description) == ("weather", "Weather.")


def test_both_request_builders_send_it_as_a_declaration() -> None:
    function = AIFunction.from_callable(get_weather)
    options = ChatOptions(tools=[function])
    chat = build_chat_request(
        [], options, model_id="m", stream=False, profile=profile_for("generic")
    )
    assert chat["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": function.description,
                "parameters": function.parameters,
            },
        }
    ]
    responses = build_responses_request([], options, instructions=None, model_id="m", stream=False)
    assert responses["tools"][0]["name"] == "get_weather"
    assert responses["tools"][0]["parameters"] == function.parameters


async def test_arguments_are_validated_and_converted_before_the_call() -> None:
    function = AIFunction.from_callable(get_weather)
    assert await function.invoke({"city": "Paris", "days": "3"}) == {
        "city": "Paris",
        "unit": "celsius",
        "days": 3,
    }
    with pytest.raises(InvalidArgumentsError) as caught:
        await function.invoke({"unit": "kelvin", "days": 9})
    assert str(caught.value) == (
        "city: Field required; unit: Input should be 'celsius' or 'fahrenheit'; "
        "days: Input should be less than or equal to 7"
    )


async def test_a_function_that_fails_validation_does_not_run() -> None:
    ran: list[int] = []

    def record(count: int) -> None:
        ran.append(count)

    with pytest.raises(InvalidArgumentsError):
        await AIFunction.from_callable(record).invoke({"count": "many"})
    assert ran == []


async def test_sync_and_async_callables_both_run() -> None:
    def add(a: int, b: int) -> int:
        return a + b

    async def later(a: int) -> int:
        await asyncio.sleep(0)
        return a * 2

    assert await AIFunction.from_callable(add).invoke({"a": 2, "b": 3}) == 5
    assert await AIFunction.from_callable(later).invoke({"a": 4}) == 8


async def test_an_omitted_argument_takes_the_functions_own_default() -> None:
    marker: list[str] = []
    seen: list[object] = []

    def keep(items: list[str] = marker) -> None:  # the very object must arrive
        seen.append(items)

    await AIFunction.from_callable(keep).invoke({})
    assert seen[0] is marker


async def test_extra_arguments_are_ignored() -> None:
    assert await AIFunction.from_callable(get_weather).invoke({"city": "Oslo", "mood": 1}) == {
        "city": "Oslo",
        "unit": "celsius",
        "days": 1,
    }


async def test_parameter_names_pydantic_reserves_are_fine() -> None:
    def odd(model_config: int, schema: str, _hidden: bool = False) -> list[Any]:
        return [model_config, schema, _hidden]

    function = AIFunction.from_callable(odd)
    assert function.parameters is not None
    assert list(function.parameters["properties"]) == ["model_config", "schema", "_hidden"]
    assert await function.invoke({"model_config": 1, "schema": "s", "_hidden": True}) == [
        1,
        "s",
        True,
    ]


async def test_positional_only_and_keyword_only_parameters() -> None:
    def shape(a: int, b: int = 2, /, *, c: int = 3) -> list[int]:
        return [a, b, c]

    function = AIFunction.from_callable(shape)
    assert await function.invoke({"a": 1, "c": 4}) == [1, 2, 4]


async def test_a_field_default_is_read_as_pydantic_reads_it() -> None:
    def limited(n: int = Field(2, le=5, description="At most five.")) -> int:
        return n

    function = AIFunction.from_callable(limited)
    assert function.parameters is not None
    assert function.parameters["properties"]["n"] == {
        "type": "integer",
        "default": 2,
        "maximum": 5,
        "description": "At most five.",
    }
    assert await function.invoke({}) == 2
    with pytest.raises(InvalidArgumentsError):
        await function.invoke({"n": 6})


class Report(BaseModel):
    city: str
    degrees: float


@dataclass
class Point:
    x: int
    y: int


async def test_results_become_what_json_can_write() -> None:
    def report() -> Report:
        return Report(city="Paris", degrees=21.5)

    def point() -> Point:
        return Point(1, 2)

    def opaque() -> object:
        return sentinel

    sentinel = object()
    assert await AIFunction.from_callable(report).invoke({}) == {"city": "Paris", "degrees": 21.5}
    assert await AIFunction.from_callable(point).invoke({}) == {"x": 1, "y": 2}
    assert await AIFunction.from_callable(opaque).invoke({}) is sentinel


def test_a_callable_without_a_usable_name_must_be_given_one() -> None:
    with pytest.raises(ValueError, match="pass name="):
        AIFunction.from_callable(lambda: None)
    assert AIFunction.from_callable(lambda: None, name="noop").name == "noop"


def test_star_args_cannot_be_described() -> None:
    def spread(*values: int) -> int:
        return sum(values)

    with pytest.raises(TypeError, match="give every argument a name"):
        AIFunction.from_callable(spread)


def test_an_unannotated_parameter_accepts_anything() -> None:
    def loose(value):  # type: ignore[no-untyped-def]
        return value

    function = AIFunction.from_callable(loose)
    assert function.parameters == {
        "type": "object",
        "properties": {"value": {}},
        "required": ["value"],
    }


def test_rest_style_docstrings_describe_parameters() -> None:
    summary, params = describe_docstring(
        """Convert a temperature.

        :param float value: the temperature,
            in the source scale
        :param target: the scale to convert to
        :returns: the converted value
        """
    )
    assert summary == "Convert a temperature."
    assert params == {
        "value": "the temperature, in the source scale",
        "target": "the scale to convert to",
    }


def test_no_docstring_means_no_description() -> None:
    def bare(x: int) -> int:
        return x

    function = AIFunction.from_callable(bare)
    assert function.description is None
    assert "description" not in function.to_openai()["function"]


async def test_a_subclass_supplies_its_own_invoke() -> None:
    class Echo(AIFunction):
        async def invoke(self, arguments: Any) -> Any:
            return dict(arguments)

    echo = Echo("echo", "Echo the arguments.", {"type": "object"})
    assert await echo.invoke({"a": 1}) == {"a": 1}
    with pytest.raises(NotImplementedError):
        await AIFunction("plain").invoke({})


def test_importing_providers_does_not_load_pydantic() -> None:
    code = "import sys, providers\nprint('pydantic' in sys.modules)\n"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"

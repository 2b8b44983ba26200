"""``AIFunction``: a tool this process can run, as MEAI's ``AIFunction`` is.

An ``AIFunction`` IS a ``ToolDeclaration`` (a name, a description, a JSON Schema), so it goes in
``ChatOptions.tools`` like any declaration and both request builders send it unchanged; what it
adds is ``invoke(arguments)``, which ``FunctionInvokingChatClient`` calls when the model asks.
A plain ``ToolDeclaration`` next to it stays a declaration: the caller answers those calls.

``AIFunction.from_callable(fn)`` reads everything from the function itself::

    async def get_weather(city: str, unit: Literal["celsius", "fahrenheit"] = "celsius") -> str:
        \"\"\"Current weather in a city.

        Args:
            city: The city's English name.
        \"\"\"

    options = ChatOptions(tools=[AIFunction.from_callable(get_weather)])
    options = ChatOptions(tools=[get_weather])  # the same: the options make it one

The name is the function's, the description the docstring's summary, and the schema comes from
the annotations through pydantic, parameter descriptions from the docstring's ``Args:`` (or
``:param x:``) entries or from ``Annotated[str, Field(description=...)]``. Before each call the
model's arguments are validated against the same annotations; arguments that do not fit raise
``InvalidArgumentsError`` and the function does not run. Sync and async callables both work;
a sync function runs in a worker thread (``asyncio.to_thread``), so a blocking one stalls neither
the event loop nor the calls running beside it.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import TYPE_CHECKING, Any

from providers.abstractions.records import value_class
from providers.abstractions.tool_declaration import ToolDeclaration

if TYPE_CHECKING:
    from providers.abstractions.signature import ArgumentsBinding

__all__ = ["AIFunction", "InvalidArgumentsError"]


class InvalidArgumentsError(ValueError):
    """The arguments a model sent do not fit the function: it was not run. The message lists
    each problem (``city: Field required``) and is meant for the model, which sent the
    arguments and can correct them, so the tool loop always passes it on."""


_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""The tool names OpenAI's API accepts; a name outside it (``<lambda>``) is refused early."""


@value_class(frozen=True)
class AIFunction(ToolDeclaration):
    """A declaration that can also run. Subclass it and override ``invoke`` for a tool whose
    schema is written by hand; ``from_callable`` covers the common case."""

    async def invoke(self, arguments: Mapping[str, Any]) -> Any:
        """Run the function with the model's arguments and return what it returned (in a form
        JSON can write). Raise ``InvalidArgumentsError`` when the arguments do not fit, so the
        model is told what to correct; any other exception is the function failing."""
        raise NotImplementedError(f"{type(self).__name__} does not implement invoke()")

    @staticmethod
    def from_callable(
        function: Callable[..., Any], *, name: str | None = None, description: str | None = None
    ) -> AIFunction:
        """An ``AIFunction`` for ``function``: see the module docstring. ``name`` and
        ``description`` replace what the function's own name and docstring say."""
        # Only a caller that makes a function from a callable needs pydantic.
        # deferred: -X importtime: pydantic, +65 ms on `import providers` (~105 ms)
        from providers.abstractions.signature import ArgumentsBinding, describe_docstring

        if not callable(function):
            raise TypeError(f"not callable: {function!r}")
        tool_name = name if name is not None else getattr(function, "__name__", None)
        if tool_name is None or not _NAME.fullmatch(tool_name):
            raise ValueError(
                f"tool name {tool_name!r} is not 1-64 letters, digits, '_' or '-': pass name="
            )
        summary, docs = describe_docstring(inspect.getdoc(function))
        binding = ArgumentsBinding(function, docs)
        return _CallableFunction(
            tool_name,
            description if description is not None else summary,
            binding.schema,
            function=function,
            binding=binding,
        )


@value_class(frozen=True)
class _CallableFunction(AIFunction):
    """What ``from_callable`` makes: the callable and the binding that checks its arguments."""

    function: Callable[..., Any] = field(kw_only=True, repr=False, compare=False)
    binding: ArgumentsBinding = field(kw_only=True, repr=False, compare=False)

    async def invoke(self, arguments: Mapping[str, Any]) -> Any:
        # deferred: pydantic's cold-start cost, as in from_callable (which loaded it already)
        from providers.abstractions.signature import jsonable

        bound = self.binding.bind(arguments)
        if isinstance(bound, str):
            raise InvalidArgumentsError(bound)
        positional, keywords = bound
        if inspect.iscoroutinefunction(self.function):
            result = await self.function(*positional, **keywords)
        else:
            # A blocking tool (a file read, an HTTP call with requests) must not stall the
            # event loop, nor the calls running beside it: a plain function runs in a thread.
            # deferred: asyncio's cold import (~30 ms); loaded already by the loop running this
            import asyncio

            result = await asyncio.to_thread(self.function, *positional, **keywords)
            if inspect.isawaitable(result):  # a plain function that returned a coroutine
                result = await result
        return jsonable(result)

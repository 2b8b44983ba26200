"""The type check ``ChatOptions`` runs when it is made (see ``providers.abstractions.options``).

Apart from ``options`` to keep that module about what the options mean; the classes the check
accepts are passed in, so this module imports nothing of ``options`` and no cycle forms. The
cost is a few ``isinstance`` calls per construction (and per ``dataclasses.replace``), plus one
per stop sequence and tool: about 2 µs on empty options, which take some 8 µs to build, and
nothing on the streaming path builds options.

One thing is more than a check: a plain Python function given as a tool is made an
``AIFunction`` here (issue 34), the one place every path that takes tools goes through. That
needs ``functions`` (and pydantic), imported on first use; ``functions`` builds on
``tool_declaration``, not ``options``, so no cycle forms either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from providers.abstractions.errors import ConfigurationTypeError

__all__ = ["SingleValues", "check_chat_options", "tool_of_callable"]

SingleValues = tuple[tuple[str, tuple[type[Any], ...], str], ...]
"""Field name, the types it takes, what the message calls them."""


def check_chat_options(
    options: Any, single: SingleValues, declaration: type[Any]
) -> Sequence[Any] | None:
    """Raise ``ConfigurationTypeError`` for the first field of ``options`` holding a type it
    cannot: each of ``single``, then the containers (stop sequences, tools, extra body keys,
    headers). ``None`` is always accepted, ``bool`` only where ``single`` names it (``True`` is
    an int to Python, not a number to a server). The message names the field and the type
    given, never the value: a header or a conversation id may be a credential.

    Returns the tools as the options keep them: ``options.tools`` itself, or a new list where
    each plain Python function became an ``AIFunction`` (``tool_of_callable``). Every path
    that takes tools builds ``ChatOptions`` (``from_openai``, ``dataclasses.replace``, the tool
    loop, ``get_response_as``), so a function is accepted on all of them by this one check."""
    for name, accepted, expected in single:
        value = getattr(options, name)
        if value is None:
            continue
        if not isinstance(value, accepted) or (type(value) is bool and bool not in accepted):
            raise _wrong_type(name, expected, value)
    stop = options.stop_sequences
    if stop is not None:
        _check_sequence("stop_sequences", stop, "str")
        for position, sequence in enumerate(stop):
            if not isinstance(sequence, str):
                raise _wrong_type(f"stop_sequences[{position}]", "a str", sequence)
    tools: Sequence[Any] | None = options.tools
    if tools is not None:
        tools = _checked_tools(tools, declaration)
    extras = options.additional_properties
    if not isinstance(extras, dict):
        raise _wrong_type("additional_properties", "a dict", extras)
    if extras and not all(isinstance(key, str) for key in extras):
        raise ConfigurationTypeError("ChatOptions.additional_properties keys must be str")
    headers = options.headers
    if headers is not None and type(headers) is not dict and not isinstance(headers, Mapping):
        # the names and values are checked as the request is sent (merge_request_headers)
        raise _wrong_type("headers", "a mapping of str to str", headers)
    return tools


def _checked_tools(tools: Any, declaration: type[Any]) -> Sequence[Any]:
    """``tools`` when every one is a declaration or a named mapping; a copy with each function
    made an ``AIFunction`` when some are functions."""
    _check_sequence("tools", tools, "ToolDeclaration, mapping or function")
    made: list[Any] | None = None
    for position, tool in enumerate(tools):
        if isinstance(tool, declaration):
            continue
        if isinstance(tool, Mapping):
            # The request builders read every tool as a declaration: a mapping without a name
            # failed there with a KeyError.
            function = tool.get("function", tool)
            if not (isinstance(function, Mapping) and isinstance(function.get("name"), str)):
                raise ConfigurationTypeError(
                    f"ChatOptions.tools[{position}] is a mapping without a function name: a tool "
                    'is a ToolDeclaration or {"type": "function", "function": {"name": ...}}'
                )
            continue
        if made is None:
            made = list(tools)
        made[position] = tool_of_callable(tool, f"ChatOptions.tools[{position}]")
    return tools if made is None else made


_HOW = (
    "a tool is a function with a name and annotated arguments (def get_weather(city: str)), "
    "AIFunction.from_callable(function, name=..., description=...), or "
    "ToolDeclaration(name, description, parameters=<JSON Schema>)"
)


def tool_of_callable(value: Any, where: str) -> Any:
    """The ``AIFunction`` of a plain Python function given as a tool (``where`` names the
    place in the message), or the ``ConfigurationTypeError`` saying how to declare one: a
    class is refused (calling it builds an object, not an answer; a pydantic model as a tool
    is another library's convention), as is what ``from_callable`` cannot describe (a lambda
    has no name to call it by, ``*args`` no schema)."""
    if isinstance(value, type):
        raise ConfigurationTypeError(f"{where} is a class ({value.__name__}), not a tool: {_HOW}")
    if not callable(value):
        raise ConfigurationTypeError(
            f"{where} must be a ToolDeclaration, a mapping or a function, "
            f"not {type(value).__name__}"
        )
    # deferred: pydantic's cold import (~65 ms), for a caller who gives a function as a tool
    from providers.abstractions.functions import AIFunction

    try:
        return AIFunction.from_callable(value)
    except (TypeError, ValueError) as error:  # pydantic's schema errors are TypeErrors
        raise ConfigurationTypeError(
            f"{where} ({type(value).__name__}) cannot be read as a tool: {error}; {_HOW}"
        ) from error


def _check_sequence(name: str, value: Any, item: str) -> None:
    """A list, a tuple or another sequence, but not a str (which would be one item per
    character) nor a mapping."""
    kind = type(value)
    if (
        kind is not list
        and kind is not tuple
        and (isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence))
    ):
        raise _wrong_type(name, f"a list of {item}", value)


def _wrong_type(name: str, expected: str, value: Any) -> ConfigurationTypeError:
    return ConfigurationTypeError(
        f"ChatOptions.{name} must be {expected}, not {type(value).__name__}"
    )

"""The type check ``ChatOptions`` runs when it is made (see ``providers.abstractions.options``).

Apart from ``options`` to keep that module about what the options mean; the classes the check
accepts are passed in, so this module imports nothing of ``options`` and no cycle forms. The
cost is a few ``isinstance`` calls per construction (and per ``dataclasses.replace``), plus one
per stop sequence and tool: about 2 µs on empty options, which take some 8 µs to build, and
nothing on the streaming path builds options.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from providers.abstractions.errors import ConfigurationTypeError

__all__ = ["SingleValues", "check_chat_options"]

SingleValues = tuple[tuple[str, tuple[type[Any], ...], str], ...]
"""Field name, the types it takes, what the message calls them."""


def check_chat_options(options: Any, single: SingleValues, declaration: type[Any]) -> None:
    """Raise ``ConfigurationTypeError`` for the first field of ``options`` holding a type it
    cannot: each of ``single``, then the containers (stop sequences, tools, extra body keys,
    headers). ``None`` is always accepted, ``bool`` only where ``single`` names it (``True`` is
    an int to Python, not a number to a server). The message names the field and the type
    given, never the value: a header or a conversation id may be a credential."""
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
    tools = options.tools
    if tools is not None:
        _check_sequence("tools", tools, "ToolDeclaration or mapping")
        for position, tool in enumerate(tools):
            if isinstance(tool, declaration):
                continue
            if not isinstance(tool, Mapping):
                raise _wrong_type(f"tools[{position}]", "a ToolDeclaration or mapping", tool)
            # The request builders read every tool as a declaration: a mapping without a name
            # failed there with a KeyError.
            function = tool.get("function", tool)
            if not (isinstance(function, Mapping) and isinstance(function.get("name"), str)):
                raise ConfigurationTypeError(
                    f"ChatOptions.tools[{position}] is a mapping without a function name: a tool "
                    'is a ToolDeclaration or {"type": "function", "function": {"name": ...}}'
                )
    extras = options.additional_properties
    if not isinstance(extras, dict):
        raise _wrong_type("additional_properties", "a dict", extras)
    if extras and not all(isinstance(key, str) for key in extras):
        raise ConfigurationTypeError("ChatOptions.additional_properties keys must be str")
    headers = options.headers
    if headers is not None and type(headers) is not dict and not isinstance(headers, Mapping):
        # the names and values are checked as the request is sent (merge_request_headers)
        raise _wrong_type("headers", "a mapping of str to str", headers)


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

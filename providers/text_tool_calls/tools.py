"""The tools offered with the request, as the text parsers (and the wire clients) need them.

Two uses: qwen3_coder converts its string parameter values by the tool's JSON Schema, and every
format checks that a recovered call names a tool that was offered. A call of an unknown tool is
still returned (never dropped: SGLang drops it, which hides the model's mistake) but carries an
``error``, so an agent does not execute it. ``offered_tools`` says what a request offered, for
the recovery layer and for the wire clients' check of the server's own calls (issue #20: a call
is executable only if it names an offered tool).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from providers.abstractions.contents import FunctionCallContent, too_deep_arguments
from providers.abstractions.limits import DEFAULT_LIMITS
from providers.abstractions.options import ChatOptions, ToolDeclaration
from providers.abstractions.server_json import nests_deeper

__all__ = ["ToolBook", "new_call_id", "not_offered", "offered_tool_names", "offered_tools"]


def offered_tools(options: ChatOptions | None) -> list[ToolDeclaration]:
    """The tools a request declared: what a call must name to be executable.

    No tools (``None`` or ``[]``) offers nothing: the model was not asked to call anything, so
    whatever call it writes is not the caller's to execute. ``tool_mode=none`` still declares
    them (the servers stand their parsers down and the call arrives as text: recovering it is
    what the layer is for). Tools passed as a raw ``tools`` key in ``additional_properties``
    count too, since they reach the server just the same.
    """
    if options is None:
        return []
    if options.tools is not None:
        return options.tool_declarations()
    raw = options.additional_properties.get("tools")
    if not isinstance(raw, list):
        return []
    return [ToolDeclaration.from_openai(tool) for tool in raw if _named(tool)]


def offered_tool_names(options: ChatOptions | None) -> frozenset[str]:
    """The names in ``offered_tools``: what a server's own call must name to be executable."""
    return frozenset(tool.name for tool in offered_tools(options))


def not_offered(name: str, offered: Iterable[str]) -> str:
    """The ``error`` of a call naming a tool the request did not offer (listed in the order
    given: a set's names should come sorted)."""
    listed = ", ".join(offered) or "none"
    return f"tool {name} was not offered; offered: {listed}"


def _named(tool: Any) -> bool:
    if not isinstance(tool, Mapping):
        return False
    function = tool.get("function", tool)
    return isinstance(function, Mapping) and isinstance(function.get("name"), str)


def new_call_id() -> str:
    """An OpenAI-shaped id for a call whose format carries none."""
    # deferred: secrets (and hmac) cost ~0.5 ms of cold start; only a recovered call needs one
    import secrets

    return f"call_{secrets.token_hex(12)}"


class ToolBook:
    """Offered tools by name; ``None`` when the caller gave no tools (nothing is checked).
    ``max_depth``: ``Limits.max_json_depth``, which a call's arguments may not nest past."""

    __slots__ = ("_max_depth", "_tools")

    def __init__(
        self,
        tools: Sequence[ToolDeclaration | Mapping[str, Any]] | None,
        max_depth: int = DEFAULT_LIMITS.max_json_depth,
    ) -> None:
        self._max_depth = max_depth
        if tools is None:
            self._tools: dict[str, ToolDeclaration] | None = None
            return
        self._tools = {}
        for tool in tools:
            declaration = (
                tool if isinstance(tool, ToolDeclaration) else ToolDeclaration.from_openai(tool)
            )
            self._tools[declaration.name] = declaration

    def parameter_schema(self, tool: str, parameter: str) -> Mapping[str, Any] | None:
        """The JSON Schema of one parameter, if the tool was offered and declares it."""
        declaration = (self._tools or {}).get(tool)
        if declaration is None or not declaration.parameters:
            return None
        properties = declaration.parameters.get("properties")
        if not isinstance(properties, Mapping):
            return None
        schema = properties.get(parameter)
        return schema if isinstance(schema, Mapping) else None

    def infer_name(self, raw_arguments: str) -> str | None:
        """The one offered tool a call without a name can mean: the only tool, or the only one
        whose declared parameters hold every argument of a JSON object; else ``None``."""
        tools = self._tools or {}
        if len(tools) == 1:
            return next(iter(tools))
        try:
            arguments = json.loads(raw_arguments)
        except ValueError:
            return None
        if not isinstance(arguments, dict):
            return None
        fitting = [
            name
            for name, declaration in tools.items()
            if set(arguments) <= set((declaration.parameters or {}).get("properties") or {})
        ]
        return fitting[0] if len(fitting) == 1 else None

    def call(
        self,
        name: str,
        arguments: dict[str, Any],
        raw_arguments: str,
        *,
        call_id: str | None = None,
        raw: str | None = None,
    ) -> FunctionCallContent:
        """A recovered call, with ``error`` set when it names a tool that was not offered, or
        when its arguments nest deeper than ``max_depth`` (then they are dropped, as a
        structured call's are: ``parse_arguments``)."""
        error = None
        if self._tools is not None and name not in self._tools:
            error = not_offered(name, self._tools)
        if nests_deeper(arguments, raw_arguments, self._max_depth):
            deep = too_deep_arguments(self._max_depth)
            arguments, error = {}, deep if error is None else f"{error}; {deep}"
        return FunctionCallContent(
            call_id or new_call_id(),
            name,
            arguments,
            raw_arguments,
            error,
            raw=raw,
        )

"""The tools offered with the request, as the text parsers need them.

Two uses: qwen3_coder converts its string parameter values by the tool's JSON Schema, and every
format checks that a recovered call names a tool that was offered. A call of an unknown tool is
still returned (never dropped: SGLang drops it, which hides the model's mistake) but carries an
``error``, so an agent does not execute it.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from providers.abstractions.contents import FunctionCallContent
from providers.abstractions.options import ToolDeclaration

__all__ = ["ToolBook", "new_call_id"]


def new_call_id() -> str:
    """An OpenAI-shaped id for a call whose format carries none."""
    return f"call_{secrets.token_hex(12)}"


class ToolBook:
    """Offered tools by name; ``None`` when the caller gave no tools (nothing is checked)."""

    __slots__ = ("_tools",)

    def __init__(self, tools: Sequence[ToolDeclaration | Mapping[str, Any]] | None) -> None:
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

    def call(
        self,
        name: str,
        arguments: dict[str, Any],
        raw_arguments: str,
        *,
        call_id: str | None = None,
        raw: str | None = None,
    ) -> FunctionCallContent:
        """A recovered call, with ``error`` set when it names a tool that was not offered."""
        error = None
        if self._tools is not None and name not in self._tools:
            offered = ", ".join(self._tools) or "none"
            error = f"tool {name} was not offered; offered: {offered}"
        return FunctionCallContent(
            call_id or new_call_id(),
            name,
            arguments,
            raw_arguments,
            error,
            raw=raw,
        )

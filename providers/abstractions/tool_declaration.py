"""``ToolDeclaration``: a function the model may call, as the request declares it.

Apart from ``options`` (which re-exports it) so that ``functions`` can build ``AIFunction`` on
it while ``ChatOptions``' check turns a plain Python function into an ``AIFunction``: with the
declaration in ``options``, that check would import ``functions``, which imports ``options``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from providers.abstractions.errors import ConfigurationTypeError
from providers.abstractions.records import value_class

__all__ = ["ToolDeclaration"]


@value_class(frozen=True)
class ToolDeclaration:
    """A function the model may call: its name, purpose, and a JSON Schema for its arguments."""

    name: str
    description: str | None = None
    parameters: Mapping[str, Any] | None = None

    def to_openai(self) -> dict[str, Any]:
        function: dict[str, Any] = {"name": self.name}
        if self.description:
            function["description"] = self.description
        # An absent schema is sent as an empty object schema: some templates index `parameters`.
        function["parameters"] = (
            dict(self.parameters) if self.parameters else {"type": "object", "properties": {}}
        )
        return {"type": "function", "function": function}

    @classmethod
    def from_openai(cls, tool: Mapping[str, Any]) -> ToolDeclaration:
        """Accept an OpenAI-style ``{"type": "function", "function": {...}}`` dict.

        Anything else is a ``ConfigurationTypeError`` saying how to declare it (a Python
        function given here failed with ``AttributeError: 'function' object has no attribute
        'get'``): a function goes in ``ChatOptions.tools`` as it is, or through
        ``AIFunction.from_callable``."""
        if not isinstance(tool, Mapping):
            raise ConfigurationTypeError(
                f"ToolDeclaration.from_openai reads an OpenAI tool mapping, not "
                f"{type(tool).__name__}: put a Python function in ChatOptions(tools=[...]) as it "
                "is, or declare it with AIFunction.from_callable(function)"
            )
        function = tool.get("function", tool)
        return cls(function["name"], function.get("description"), function.get("parameters"))

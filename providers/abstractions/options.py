"""``ChatOptions`` and the tool declarations they carry.

Every field defaults to ``None`` meaning "not set: the server decides". The request builder
writes only what is set, because servers differ in what they reject (vLLM answers ``tools: []``
with a 400, strict gateways reject unknown keys).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from providers.abstractions.open_values import OpenValue

__all__ = [
    "ChatOptions",
    "ChatResponseFormat",
    "ChatToolMode",
    "ToolDeclaration",
]


@dataclass(slots=True, frozen=True)
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
        """Accept an OpenAI-style ``{"type": "function", "function": {...}}`` dict."""
        function = tool.get("function", tool)
        return cls(function["name"], function.get("description"), function.get("parameters"))


class ChatToolMode(OpenValue):
    """`auto`, `none`, `required`, or one named function: ``ChatToolMode.require("f")``."""

    __slots__ = ("function_name",)

    AUTO: ClassVar[ChatToolMode]
    NONE: ClassVar[ChatToolMode]
    REQUIRED: ClassVar[ChatToolMode]

    def __init__(self, value: str, function_name: str | None = None) -> None:
        super().__init__(value)
        self.function_name = function_name

    @classmethod
    def require(cls, function_name: str) -> ChatToolMode:
        return cls("function", function_name)

    def to_openai(self) -> str | dict[str, Any]:
        if self.function_name is not None:
            return {"type": "function", "function": {"name": self.function_name}}
        return self.value


ChatToolMode.AUTO = ChatToolMode("auto")
ChatToolMode.NONE = ChatToolMode("none")
ChatToolMode.REQUIRED = ChatToolMode("required")


@dataclass(slots=True, frozen=True)
class ChatResponseFormat:
    """Plain text, any JSON object, or JSON matching a schema."""

    kind: str
    schema: Mapping[str, Any] | None = None
    schema_name: str | None = None

    TEXT: ClassVar[ChatResponseFormat]
    JSON: ClassVar[ChatResponseFormat]

    @classmethod
    def json_schema(cls, schema: Mapping[str, Any], name: str = "response") -> ChatResponseFormat:
        return cls("json_schema", schema, name)

    def to_openai(self) -> dict[str, Any]:
        if self.kind == "json_schema":
            return {
                "type": "json_schema",
                "json_schema": {"name": self.schema_name or "response", "schema": self.schema},
            }
        return {"type": self.kind}


ChatResponseFormat.TEXT = ChatResponseFormat("text")
ChatResponseFormat.JSON = ChatResponseFormat("json_object")


@dataclass(slots=True)
class ChatOptions:
    """Per-request settings. ``additional_properties`` become extra top-level body keys
    (``chat_template_kwargs``, ``grammar``); they extend the request but never replace a key the
    client sets itself."""

    model_id: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    max_output_tokens: int | None = None
    stop_sequences: list[str] | None = None
    seed: int | None = None
    frequency_penalty: float | None = None
    presence_penalty: float | None = None
    tools: list[ToolDeclaration | Mapping[str, Any]] | None = None
    tool_mode: ChatToolMode | None = None
    allow_multiple_tool_calls: bool | None = None
    response_format: ChatResponseFormat | None = None
    additional_properties: dict[str, Any] = field(default_factory=dict)

    def tool_declarations(self) -> list[ToolDeclaration]:
        """The tools as declarations, whichever form they were given in."""
        return [
            t if isinstance(t, ToolDeclaration) else ToolDeclaration.from_openai(t)
            for t in self.tools or ()
        ]

"""``ChatOptions`` and the tool declarations they carry.

Every field defaults to ``None`` meaning "not set: the server decides". The request builder
writes only what is set, because servers differ in what they reject (vLLM answers ``tools: []``
with a 400, strict gateways reject unknown keys).

``ChatOptions`` checks its fields' types when it is made (``__post_init__``, so
``dataclasses.replace`` too): a value of the wrong type is a ``ConfigurationTypeError`` naming
the field, not an untyped ``TypeError`` or ``AttributeError`` from a layer far from the caller
(an int ``conversation_id`` failed in the session-affinity layer, a str ``tool_mode`` in the
request builder), nor a silently wrong request (a str ``stop_sequences`` became one stop
sequence per character). Only types and shapes are checked, in a few ``isinstance`` calls;
values are the server's to judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any, ClassVar

from providers.abstractions.open_values import OpenValue
from providers.abstractions.option_checks import check_chat_options, tool_of_callable
from providers.abstractions.reasoning_options import (
    ReasoningEffort,
    ReasoningOptions,
)
from providers.abstractions.records import value_class
from providers.abstractions.response_format import ChatResponseFormat
from providers.abstractions.tool_declaration import ToolDeclaration

__all__ = [
    "ChatOptions",
    "ChatResponseFormat",
    "ChatToolMode",
    "ToolDeclaration",
]


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
_MODES = {m.value: m for m in (ChatToolMode.AUTO, ChatToolMode.NONE, ChatToolMode.REQUIRED)}


@value_class()
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
    tools: Sequence[ToolDeclaration | Mapping[str, Any] | Callable[..., Any]] | None = None
    """Declarations (sent; the caller answers the calls), ``AIFunction``\\ s (run by the tool
    loop, ``FunctionInvokingChatClient``), OpenAI tool mappings, or plain Python functions:
    a function is made an ``AIFunction`` here (``AIFunction.from_callable``), so the options
    hold only declarations and mappings; what cannot be a tool (a lambda, a class) is a
    ``ConfigurationTypeError`` saying how to declare one."""
    tool_mode: ChatToolMode | None = None
    allow_multiple_tool_calls: bool | None = None
    response_format: ChatResponseFormat | None = None
    additional_properties: dict[str, Any] = field(default_factory=dict)
    headers: Mapping[str, str] | None = None
    """Extra HTTP headers for this request only, over the client's own (a per-request header
    wins, ``Authorization`` included: a gateway that takes each end user's token); checked
    like the client's (a value that cannot be sent is an ``InvalidRequestError`` that never
    quotes it), and every value is masked where an error quotes the server. Not part of the
    body: ``to_openai`` leaves it out. Retry resends the same headers; a fallback at another
    origin gets them without the credentials (``FallbackChatClient``)."""
    conversation_id: str | None = None
    """Which conversation this request continues: the session-affinity layer's key
    (``SessionAffinityChatClient``). Not an OpenAI chat field, so never written to the body."""
    reasoning: ReasoningOptions | None = None
    """Thinking on or off, how hard, and whether its text comes back: mapped per backend and
    model family (``capabilities.reasoning_mapping``), refused before sending where the family
    cannot honour it."""

    def __post_init__(self) -> None:
        tools = check_chat_options(self, _SINGLE_VALUES, ToolDeclaration)
        if tools is not self.tools:  # a function became an AIFunction
            self.tools = tools

    def tool_declarations(self) -> list[ToolDeclaration]:
        """The tools as declarations, whichever form they were given in."""
        return [_declaration(t) for t in self.tools or ()]

    @classmethod
    def from_openai(cls, request: Mapping[str, Any]) -> ChatOptions:
        """The options of an OpenAI chat-completions request body.

        ``messages`` and ``stream`` are not options (``ChatMessage.from_openai`` reads the
        first; the call made, ``get_response`` or ``get_streaming_response``, is the second).
        ``max_tokens`` or ``max_completion_tokens`` is ``max_output_tokens`` (the client writes
        the name its backend wants); a single ``stop`` string is a list of one. A tool, tool
        choice or response format is typed when its typed form writes the same dict back, and
        kept as given otherwise (a tool with ``strict``); every other key, and a null for a
        typed one, is kept in ``additional_properties``, so ``to_openai()`` loses nothing.
        """
        extras: dict[str, Any] = {}
        fields: dict[str, Any] = {}
        for key, value in request.items():
            if key in _NOT_OPTIONS:
                continue
            name = _FIELDS.get(key)
            if key == "max_completion_tokens" and "max_tokens" not in request:
                name = "max_output_tokens"
            typed = None if name is None or value is None else _read_option(key, value)
            if name is None or typed is None:
                extras[key] = value
            else:
                fields[name] = typed
        return cls(**fields, additional_properties=extras)

    def to_openai(self, *, max_tokens_field: str = "max_tokens") -> dict[str, Any]:
        """The request keys these options set, without ``messages`` and ``stream``; no backend
        quirk (``ChatOptions.from_openai`` reads them back). ``max_tokens_field`` names the
        output limit (OpenAI's newer models want ``max_completion_tokens``). ``headers`` and
        ``conversation_id`` are not body keys and are not written."""
        body: dict[str, Any] = {}
        for key, name in _WRITTEN:
            value = getattr(self, name)
            if value is not None:
                body[max_tokens_field if name == "max_output_tokens" else key] = value
        if self.stop_sequences is not None:
            body["stop"] = list(self.stop_sequences)
        if self.tools is not None:
            body["tools"] = [_written(t) for t in self.tools]
        if self.tool_mode is not None:
            body["tool_choice"] = self.tool_mode.to_openai()
        if self.response_format is not None:
            body["response_format"] = self.response_format.to_openai()
        effort = self.reasoning.effort if self.reasoning is not None else None
        if effort is not None:
            body["reasoning_effort"] = _OPENAI_EFFORTS.get(effort.value, effort.value)
        for key, value in self.additional_properties.items():
            body.setdefault(key, value)
        return body


_NOT_OPTIONS = frozenset({"messages", "stream"})
_WRITTEN = (
    ("model", "model_id"),
    ("temperature", "temperature"),
    ("top_p", "top_p"),
    ("top_k", "top_k"),
    ("max_tokens", "max_output_tokens"),
    ("seed", "seed"),
    ("frequency_penalty", "frequency_penalty"),
    ("presence_penalty", "presence_penalty"),
    ("parallel_tool_calls", "allow_multiple_tool_calls"),
)
_FIELDS = {
    **dict(_WRITTEN),
    "stop": "stop_sequences",
    "tools": "tools",
    "tool_choice": "tool_mode",
    "response_format": "response_format",
    "reasoning_effort": "reasoning",
}
"""Request key → ``ChatOptions`` field (``max_completion_tokens`` is decided per request)."""


def _read_option(key: str, value: Any) -> Any:
    """The typed value of one request key, or ``None`` when the typed form cannot hold it."""
    if key in ("temperature", "top_p", "frequency_penalty", "presence_penalty"):
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if key in ("top_k", "seed", "max_tokens", "max_completion_tokens"):
        return value if type(value) is int else None
    if key == "model":
        return value if isinstance(value, str) else None
    if key == "parallel_tool_calls":
        return value if isinstance(value, bool) else None
    if key == "stop":
        if isinstance(value, str):
            return [value]
        ok = isinstance(value, list) and all(isinstance(s, str) for s in value)
        return list(value) if ok else None
    if key == "tools":
        return [_read_tool(tool) for tool in value] if isinstance(value, list) else None
    if key == "tool_choice":
        return _if_same(value, _read_tool_mode)
    if key == "reasoning_effort":
        effort = _EFFORTS_FROM_OPENAI.get(value) if isinstance(value, str) else None
        return ReasoningOptions(effort=effort) if effort is not None else None
    return _if_same(value, _read_response_format)


# --- the type check of ChatOptions' fields -----------------------------------------------------

_NUMBER = (int, float)
_SINGLE_VALUES: tuple[tuple[str, tuple[type[Any], ...], str], ...] = (
    ("model_id", (str,), "a str"),
    ("temperature", _NUMBER, "a number"),
    ("top_p", _NUMBER, "a number"),
    ("top_k", (int,), "an int"),
    ("max_output_tokens", (int,), "an int"),
    ("seed", (int,), "an int"),
    ("frequency_penalty", _NUMBER, "a number"),
    ("presence_penalty", _NUMBER, "a number"),
    ("tool_mode", (ChatToolMode,), "a ChatToolMode (ChatToolMode.AUTO, .require(name))"),
    ("allow_multiple_tool_calls", (bool,), "a bool"),
    ("response_format", (ChatResponseFormat,), "a ChatResponseFormat (.for_type(T), .JSON)"),
    ("conversation_id", (str,), "a str"),
    ("reasoning", (ReasoningOptions,), "a ReasoningOptions (effort=ReasoningEffort.NONE, ...)"),
)
"""Field, the types it takes (``bool`` only where named: ``True`` is an int to Python, not a
number to a server), what the message calls them. ``None`` is always accepted. The containers'
checks are ``check_chat_options``'s own."""


_OPENAI_EFFORTS = {"extra_high": "xhigh"}
"""``ReasoningEffort`` values OpenAI spells otherwise (the rest are the same word)."""
_EFFORTS_FROM_OPENAI = {
    "none": ReasoningEffort.NONE,
    "low": ReasoningEffort.LOW,
    "medium": ReasoningEffort.MEDIUM,
    "high": ReasoningEffort.HIGH,
    "xhigh": ReasoningEffort.EXTRA_HIGH,
}
"""OpenAI ``reasoning_effort`` words read as a ``ReasoningEffort`` (``minimal`` has no
counterpart and stays an extra key, sent as given)."""


def _declaration(tool: ToolDeclaration | Mapping[str, Any] | Callable[..., Any]) -> ToolDeclaration:
    """A kept tool as a declaration. A function was made an ``AIFunction`` when the options
    were (``__post_init__``); one set on them afterwards is made one here."""
    if isinstance(tool, ToolDeclaration):
        return tool
    if isinstance(tool, Mapping):
        return ToolDeclaration.from_openai(tool)
    made: ToolDeclaration = tool_of_callable(tool, "ChatOptions.tools")
    return made


def _written(tool: ToolDeclaration | Mapping[str, Any] | Callable[..., Any]) -> dict[str, Any]:
    """A kept tool as the request writes it: a mapping as given (it may carry ``strict``)."""
    return dict(tool) if isinstance(tool, Mapping) else _declaration(tool).to_openai()


def _read_tool(tool: Any) -> ToolDeclaration | Mapping[str, Any]:
    declaration: ToolDeclaration | None = _if_same(tool, ToolDeclaration.from_openai)
    return declaration or tool


def _read_tool_mode(value: Any) -> ChatToolMode:
    if isinstance(value, str):
        return _MODES.get(value) or ChatToolMode(value)
    return ChatToolMode.require(value["function"]["name"])


def _read_response_format(value: Any) -> ChatResponseFormat:
    kind = value["type"]
    if kind == "json_schema":
        inner = value["json_schema"]
        description, strict = inner.get("description"), inner.get("strict")
        if not isinstance(description, str | None) or not isinstance(strict, bool | None):
            raise TypeError("not the typed form")
        return ChatResponseFormat.json_schema(
            inner["schema"],
            inner["name"],
            description=description,
            strict=strict,
        )
    return ChatResponseFormat(kind)


def _if_same(value: Any, read: Callable[[Any], Any]) -> Any:
    """``read(value)`` when it writes ``value`` back unchanged (else ``None``): a shape the
    typed form cannot hold whole stays as given instead of losing a key."""
    try:
        typed = read(value)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None
    return typed if typed.to_openai() == value else None

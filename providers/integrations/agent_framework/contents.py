"""Agent Framework's messages, options and errors ↔ oaicompat's, one content to one content.

Agent Framework has one ``Content`` class with a ``type`` tag where oaicompat has a class per
kind; the pairs are ``text`` ↔ ``TextContent``, ``text_reasoning`` ↔ ``TextReasoningContent``,
``function_call`` ↔ ``FunctionCallContent``, ``function_result`` ↔ ``FunctionResultContent``,
``usage`` ↔ ``UsageContent``, ``data``/``uri`` ↔ ``UriContent`` (sent as the URI).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from agent_framework import Content, FunctionTool, Message
from agent_framework import UsageDetails as FrameworkUsage
from agent_framework.exceptions import (
    ChatClientException,
    ChatClientInvalidAuthException,
    ChatClientInvalidRequestException,
    ChatClientInvalidResponseException,
)
from pydantic import BaseModel

from providers.abstractions import (
    AIContent,
    AuthenticationError,
    ChatMessage,
    ChatOptions,
    ChatResponseFormat,
    ChatRole,
    ChatToolMode,
    ContextLengthExceededError,
    FunctionCallContent,
    FunctionResultContent,
    InvalidRequestError,
    InvalidResponseError,
    PermissionDeniedError,
    ProviderError,
    TextContent,
    TextReasoningContent,
    UriContent,
    UsageContent,
    UsageDetails,
)

__all__ = [
    "to_chat_messages",
    "to_chat_options",
    "to_framework_contents",
    "to_framework_error",
    "to_framework_usage",
]

_OPTION_FIELDS = {
    "model": "model_id",
    "temperature": "temperature",
    "top_p": "top_p",
    "max_tokens": "max_output_tokens",
    "seed": "seed",
    "frequency_penalty": "frequency_penalty",
    "presence_penalty": "presence_penalty",
    "allow_multiple_tool_calls": "allow_multiple_tool_calls",
}
_NOT_SENT = frozenset({"instructions", "metadata", "store", "conversation_id", "tools"})
"""Options that are the framework's business (instructions become a system message here)."""


def to_chat_messages(messages: Sequence[Message], instructions: str | None) -> list[ChatMessage]:
    chat = [ChatMessage.system(instructions)] if instructions else []
    for message in messages:
        contents = [c for c in (_to_chat_content(content) for content in message.contents) if c]
        if message.role == "tool":
            # One oaicompat tool message per result, as the wire wants one per call.
            chat.extend(ChatMessage(ChatRole.TOOL, [c]) for c in contents)
        else:
            chat.append(ChatMessage(ChatRole(message.role), contents, message.author_name))
    return chat


def _to_chat_content(content: Content) -> AIContent | None:
    kind = content.type
    if kind == "text":
        return TextContent(content.text or "")
    if kind == "text_reasoning":
        return TextReasoningContent(content.text or "") if content.text else None
    if kind == "function_call":
        arguments = content.arguments
        raw = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
        return FunctionCallContent.from_json(content.call_id or "", content.name or "", raw)
    if kind == "function_result":
        return FunctionResultContent(content.call_id or "", content.result)
    if kind in ("data", "uri") and content.uri:
        return UriContent(content.uri, content.media_type)
    return None


def to_framework_contents(contents: Sequence[AIContent]) -> list[Content]:
    """The response's contents. A call the server sent broken (``error`` set) is kept for the
    record but marked ``informational_only``, so the function-invocation layer never runs it."""
    out: list[Content] = []
    for content in contents:
        if isinstance(content, TextReasoningContent):
            out.append(Content.from_text_reasoning(text=content.text))
        elif isinstance(content, TextContent):
            out.append(Content.from_text(content.text))
        elif isinstance(content, FunctionCallContent):
            out.append(
                Content.from_function_call(
                    content.call_id,
                    content.name,
                    # The exact text the server sent, so history replays the same bytes.
                    arguments=content.raw_arguments or content.arguments,
                    exception=content.error,
                    informational_only=content.error is not None,
                )
            )
        elif isinstance(content, UsageContent):
            out.append(Content.from_usage(to_framework_usage(content.details)))
    return out


def to_framework_usage(usage: UsageDetails) -> FrameworkUsage:
    """Only the counts the server reported: an absent key is "not reported", never 0."""
    counts = {
        "input_token_count": usage.input_token_count,
        "output_token_count": usage.output_token_count,
        "total_token_count": usage.total_token_count,
        "cache_read_input_token_count": usage.cached_input_token_count,
        "reasoning_output_token_count": usage.reasoning_token_count,
    }
    return cast(FrameworkUsage, {k: v for k, v in counts.items() if v is not None})


def to_chat_options(options: Mapping[str, Any]) -> ChatOptions:
    """Agent Framework's options TypedDict as ``ChatOptions``. ``extra_body`` (this client's
    own option), ``logit_bias``, ``user`` and keys no field holds become extra body keys."""
    fields: dict[str, Any] = {}
    extras: dict[str, Any] = dict(options.get("extra_body") or {})
    for key, value in options.items():
        if value is None or key in _NOT_SENT or key == "extra_body":
            continue
        if key in _OPTION_FIELDS:
            fields[_OPTION_FIELDS[key]] = value
        elif key == "stop":
            fields["stop_sequences"] = [value] if isinstance(value, str) else list(value)
        elif key == "tool_choice":
            fields["tool_mode"] = _tool_mode(value)
        elif key == "response_format":
            fields["response_format"] = _response_format(value)
        else:
            extras[key] = value
    tools = [_declaration(tool) for tool in options.get("tools") or ()]
    return ChatOptions(**fields, tools=tools or None, additional_properties=extras)


def _declaration(tool: Any) -> Mapping[str, Any]:
    if isinstance(tool, FunctionTool):
        spec: dict[str, Any] = tool.to_json_schema_spec()
        return spec
    if isinstance(tool, Mapping):
        return tool
    raise ChatClientInvalidRequestException(
        f"OaicompatChatClient sends function tools only, not {type(tool).__name__}"
    )


def _tool_mode(choice: Any) -> ChatToolMode:
    if isinstance(choice, str):
        return ChatToolMode(choice)
    if choice.get("required_function_name"):
        return ChatToolMode.require(choice["required_function_name"])
    return ChatToolMode(choice.get("mode", "auto"))


def _response_format(value: Any) -> ChatResponseFormat:
    """A pydantic type becomes its JSON Schema (the framework parses the answer into it); a
    mapping is taken as an OpenAI ``response_format`` object."""
    if isinstance(value, type) and issubclass(value, BaseModel):
        return ChatResponseFormat.json_schema(value.model_json_schema(), value.__name__)
    if value.get("type") == "json_schema":
        inner = value["json_schema"]
        return ChatResponseFormat.json_schema(inner["schema"], inner.get("name", "response"))
    return ChatResponseFormat(value["type"])


def to_framework_error(error: ProviderError) -> ChatClientException:
    """The Agent Framework exception for ``error`` (the original stays as inner exception and
    ``__cause__``): a request the server refused, a key it refused, an answer that could not
    be read, or any other failure of the chat client."""
    kind: type[ChatClientException] = ChatClientException
    if isinstance(error, AuthenticationError | PermissionDeniedError):
        kind = ChatClientInvalidAuthException
    elif isinstance(error, InvalidRequestError | ContextLengthExceededError):
        kind = ChatClientInvalidRequestException
    elif isinstance(error, InvalidResponseError):
        kind = ChatClientInvalidResponseException
    status = f" (HTTP {error.status})" if error.status else ""
    return kind(f"{type(error).__name__}{status}: {error}", error)

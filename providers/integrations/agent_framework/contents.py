"""Agent Framework's messages, contents and errors ↔ oaicompat's, one content to one content.

Agent Framework has one ``Content`` class with a ``type`` tag where oaicompat has a class per
kind; the pairs are ``text`` ↔ ``TextContent``, ``text_reasoning`` ↔ ``TextReasoningContent``,
``function_call`` ↔ ``FunctionCallContent``, ``function_result`` ↔ ``FunctionResultContent``,
``usage`` ↔ ``UsageContent``, ``data``/``uri`` ↔ ``UriContent`` (sent as the URI).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from typing import cast

from providers.abstractions import (
    AIContent,
    AuthenticationError,
    ChatMessage,
    ChatRole,
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
from providers.integrations._extras import missing_extra

try:
    from agent_framework import Content, Message
    from agent_framework import UsageDetails as FrameworkUsage
    from agent_framework.exceptions import (
        ChatClientException,
        ChatClientInvalidAuthException,
        ChatClientInvalidRequestException,
        ChatClientInvalidResponseException,
    )
except ModuleNotFoundError as error:  # pragma: no cover - exercised in a subprocess
    raise missing_extra(
        error, "providers.integrations.agent_framework", "agent-framework"
    ) from error

__all__ = [
    "to_chat_messages",
    "to_framework_contents",
    "to_framework_error",
    "to_framework_usage",
]


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


def to_framework_contents(
    contents: Sequence[AIContent], offered: Collection[str] = ()
) -> list[Content]:
    """The response's contents. A call the server sent broken (``error`` set) is kept for the
    record but marked ``informational_only``, so the function-invocation layer never runs it;
    except a call naming a tool the request did not offer (not in ``offered``): that one goes
    to the layer as it is, which has no tool of that name and so answers the model with the
    framework's own "function not found" result, as it does for the stock client. Nothing
    runs, and the model gets a turn to answer (never an empty run without an error)."""
    out: list[Content] = []
    for content in contents:
        if isinstance(content, TextReasoningContent):
            out.append(Content.from_text_reasoning(text=content.text))
        elif isinstance(content, TextContent):
            out.append(Content.from_text(content.text))
        elif isinstance(content, FunctionCallContent):
            unoffered = content.error is not None and content.name not in offered
            out.append(
                Content.from_function_call(
                    content.call_id,
                    content.name,
                    # The exact text the server sent, so history replays the same bytes.
                    arguments=content.raw_arguments or content.arguments,
                    exception=content.error,
                    informational_only=content.error is not None and not unoffered,
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

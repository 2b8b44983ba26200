"""pydantic-ai's messages, settings and errors ↔ oaicompat's, one to one.

Kept apart from the ``Model`` so each direction can be read (and tested) on its own: what goes
out (``to_chat_messages``, ``to_chat_options``), what comes back (``to_model_response``,
``to_request_usage``, ``FINISH_REASONS``) and how a failure is reported (``to_model_error``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from providers.integrations._extras import missing_extra

try:
    from pydantic_ai.exceptions import (
        ModelAPIError,
        ModelAuthenticationError,
        ModelConnectionError,
        ModelContextWindowExceededError,
        ModelHTTPError,
        ModelNotFoundError,
        ModelRateLimitError,
        ModelRequestRejectedError,
        ModelServerError,
        ModelTimeoutError,
        ModelUnavailableError,
        UserError,
    )
    from pydantic_ai.messages import (
        FinishReason,
        ModelMessage,
        ModelRequest,
        ModelResponse,
        ModelResponsePart,
        RetryPromptPart,
        SystemPromptPart,
        TextPart,
        ThinkingPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.models import ModelRequestParameters
    from pydantic_ai.settings import ModelSettings, ThinkingLevel
    from pydantic_ai.usage import RequestUsage
except ModuleNotFoundError as error:
    raise missing_extra(error, "providers.integrations.pydantic_ai", "pydantic-ai") from error

from providers.abstractions import (
    AIContent,
    AuthenticationError,
    BackendUnavailableError,
    ChatMessage,
    ChatOptions,
    ChatResponse,
    ChatResponseFormat,
    ChatRole,
    ContextLengthExceededError,
    FunctionCallContent,
    InvalidRequestError,
    ProviderConnectionError,
    ProviderError,
    ProviderTimeoutError,
    RateLimitError,
    ReasoningEffort,
    ReasoningOptions,
    ServerError,
    StreamInterruptedError,
    TextContent,
    TextReasoningContent,
    UsageDetails,
)
from providers.abstractions import ModelNotFoundError as OaicompatModelNotFound
from providers.abstractions.reasoning_options import EFFORT_WORDS
from providers.integrations.pydantic_ai.tool_choice import tool_selection

__all__ = [
    "FINISH_REASONS",
    "to_chat_messages",
    "to_chat_options",
    "to_model_error",
    "to_model_response",
    "to_reasoning",
    "to_request_usage",
    "tool_call_part",
]

FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "length": "length",
    "tool_calls": "tool_call",
    "function_call": "tool_call",
    "content_filter": "content_filter",
    "error": "error",
}
"""OpenAI's finish reasons → pydantic-ai's (OpenTelemetry's names); any other is left unset."""


def to_chat_messages(
    messages: Sequence[ModelMessage], instructions: Sequence[str] = ()
) -> list[ChatMessage]:
    """The conversation as oaicompat messages; ``instructions`` go first, as system messages,
    after any system prompt the history itself starts with."""
    chat: list[ChatMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            chat.extend(_request_messages(message))
        elif isinstance(message, ModelResponse):
            chat.append(_response_message(message))
    leading = 0
    while leading < len(chat) and chat[leading].role == ChatRole.SYSTEM:
        leading += 1
    chat[leading:leading] = [ChatMessage.system(text) for text in instructions if text]
    return chat


def _request_messages(message: ModelRequest) -> list[ChatMessage]:
    out: list[ChatMessage] = []
    for part in message.parts:
        if isinstance(part, SystemPromptPart):
            out.append(ChatMessage.system(part.content))
        elif isinstance(part, UserPromptPart):
            out.append(ChatMessage.user(_user_text(part.content)))
        elif isinstance(part, ToolReturnPart):
            out.append(ChatMessage.tool(part.tool_call_id, part.model_response_str()))
        elif isinstance(part, RetryPromptPart):
            if part.tool_name is not None:
                out.append(ChatMessage.tool(part.tool_call_id, part.model_response()))
            else:
                out.append(ChatMessage.user(part.model_response()))
    return out


def _user_text(content: str | Sequence[Any]) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(item if isinstance(item, str) else str(item) for item in content)


def _response_message(message: ModelResponse) -> ChatMessage:
    """An earlier answer as the assistant turn that produced it: reasoning, text and the calls
    with their argument text exactly as sent (a server's prompt cache sees the same bytes)."""
    contents: list[AIContent] = []
    for part in message.parts:
        if isinstance(part, ThinkingPart) and part.content:
            contents.append(TextReasoningContent(part.content))
        elif isinstance(part, TextPart) and part.content:
            contents.append(TextContent(part.content))
        elif isinstance(part, ToolCallPart):
            contents.append(
                FunctionCallContent.from_json(
                    part.tool_call_id, part.tool_name, part.args_as_json_str()
                )
            )
    return ChatMessage(ChatRole.ASSISTANT, contents)


def to_chat_options(
    settings: ModelSettings | None,
    parameters: ModelRequestParameters,
    conversation_id: str | None = None,
    *,
    always_thinks: bool = False,
) -> ChatOptions:
    """pydantic-ai's settings and tools as ``ChatOptions``; ``extra_body`` and ``logit_bias``
    become extra body keys, ``extra_headers`` this request's headers (never body keys), the
    unified ``thinking`` (which ``prepare_request`` moves into ``parameters``) the reasoning
    option, and the run's conversation id the session-affinity key. The tools and the tool
    mode follow the ``tool_choice`` setting (``tool_selection``); without text output allowed,
    a tool call is required."""
    given: dict[str, Any] = dict(settings or {})
    extras: dict[str, Any] = dict(given.get("extra_body") or {})
    if "logit_bias" in given:
        extras["logit_bias"] = given["logit_bias"]
    tools, tool_mode = tool_selection(settings, parameters)
    options = ChatOptions(
        temperature=given.get("temperature"),
        top_p=given.get("top_p"),
        top_k=given.get("top_k"),
        max_output_tokens=given.get("max_tokens"),
        stop_sequences=given.get("stop_sequences"),
        seed=given.get("seed"),
        frequency_penalty=given.get("frequency_penalty"),
        presence_penalty=given.get("presence_penalty"),
        allow_multiple_tool_calls=given.get("parallel_tool_calls"),
        tools=tools or None,
        tool_mode=tool_mode,
        additional_properties=extras,
        headers=dict(given["extra_headers"]) if given.get("extra_headers") else None,
        conversation_id=conversation_id,
        reasoning=to_reasoning(
            given.get("openai_reasoning_effort"), parameters.thinking, always_thinks
        ),
    )
    output = parameters.output_object
    if parameters.output_mode == "native" and output is not None:
        options.response_format = ChatResponseFormat.json_schema(
            output.json_schema,
            output.name or "response",
            description=output.description,
            strict=output.strict,
        )
    return options


def to_reasoning(
    effort: str | None, thinking: ThinkingLevel | None, always_thinks: bool = False
) -> ReasoningOptions | None:
    """The reasoning option for OpenAI's ``openai_reasoning_effort`` (a model that was an
    ``OpenAIChatModel`` may still carry it; it wins, as there) or else the unified ``thinking``:
    ``False`` is ``NONE`` (``LOW`` for a model that ``always_thinks``: pydantic-ai's "as little
    as the model allows") and ``True`` ``MEDIUM`` (an on/off family is switched on; gpt-oss
    gets its own default level). The core maps the effort per backend and model family, or
    refuses it before sending; a word it has no level for is a ``UserError`` here, never a
    setting that silently does nothing."""
    chosen: str | bool | None = effort if effort is not None else thinking
    if chosen is None:
        return None
    if chosen is True:
        return ReasoningOptions(effort=ReasoningEffort.MEDIUM)
    if chosen is False:
        return ReasoningOptions(
            effort=ReasoningEffort.LOW if always_thinks else ReasoningEffort.NONE
        )
    level_named = EFFORT_WORDS.get(str(chosen))
    if level_named is None:
        raise UserError(
            f"thinking level {str(chosen)[:40]!r} is not one oaicompat can send: "
            f"use True, False or one of {', '.join(EFFORT_WORDS)}"
        )
    return ReasoningOptions(effort=level_named)


def to_request_usage(usage: UsageDetails | None) -> RequestUsage:
    """Usage as pydantic-ai counts it. A response without usage is marked
    ``unmeasured_requests=1`` (pydantic-ai's own "omitted" marker), so its zeros read as
    "unknown" and usage limits know they cannot be fully enforced; counts the server did not
    report inside a usage object stay 0, as pydantic-ai has no "unknown" per count."""
    if usage is None:
        return RequestUsage(unmeasured_requests=1)
    details = dict(usage.additional_counts or {})
    return RequestUsage(
        input_tokens=usage.input_token_count or 0,
        output_tokens=usage.output_token_count or 0,
        cache_read_tokens=usage.cached_input_token_count or 0,
        output_reasoning_tokens=usage.reasoning_token_count or 0,
        details=details,
    )


def response_parts(contents: Sequence[AIContent]) -> list[ModelResponsePart]:
    parts: list[ModelResponsePart] = []
    for content in contents:
        if isinstance(content, TextReasoningContent) and content.text:
            parts.append(ThinkingPart(content.text))
        elif isinstance(content, TextContent) and content.text:
            parts.append(TextPart(content.text))
        elif isinstance(content, FunctionCallContent):
            parts.append(tool_call_part(content))
    return parts


def tool_call_part(call: FunctionCallContent) -> ToolCallPart:
    """A call the server sent broken keeps its raw text: pydantic-ai's own validation then
    rejects it and asks the model again, instead of running the tool with empty arguments."""
    args: str | dict[str, Any] = call.raw_arguments if call.error else call.arguments
    if call.error and not call.raw_arguments:
        args = json.dumps(None)
    return ToolCallPart(call.name, args, tool_call_id=call.call_id)


def to_model_response(response: ChatResponse, model_name: str, provider: str) -> ModelResponse:
    contents = [c for m in response.messages if m.role == ChatRole.ASSISTANT for c in m.contents]
    reason = response.finish_reason
    return ModelResponse(
        parts=response_parts(contents),
        usage=to_request_usage(response.usage),
        model_name=response.model_id or model_name,
        provider_name=provider,
        provider_response_id=response.response_id,
        finish_reason=FINISH_REASONS.get(reason.value) if reason is not None else None,
    )


_CATEGORIES: list[tuple[type[ProviderError], Any]] = [
    (ContextLengthExceededError, ModelContextWindowExceededError),
    (AuthenticationError, ModelAuthenticationError),
    (OaicompatModelNotFound, ModelNotFoundError),
    (RateLimitError, ModelRateLimitError),
    (BackendUnavailableError, ModelUnavailableError),
    (ServerError, ModelServerError),
    (InvalidRequestError, ModelRequestRejectedError),
]


def to_model_error(error: ProviderError, model_name: str) -> ModelAPIError:
    """The pydantic-ai exception for ``error``: a ``ModelHTTPError`` of the matching category
    when the server answered with a status (what ``FallbackModel`` and retries look at), a
    ``ModelConnectionError``/``ModelTimeoutError`` when it could not be reached, and a plain
    ``ModelAPIError`` otherwise. The oaicompat error stays on ``__cause__``."""
    in_stream = isinstance(error, StreamInterruptedError) or error.partial_response is not None
    common: dict[str, Any] = {
        "provider_error_code": None if error.code is None else str(error.code),
        "provider_error_type": error.error_type,
        "retry_after": error.retry_after,
        "in_stream": in_stream,
    }
    if error.status is not None:
        category = next((c for kind, c in _CATEGORIES if isinstance(error, kind)), None)
        return ModelHTTPError.for_category(
            category, status_code=error.status, model_name=model_name, body=error.body, **common
        )
    if isinstance(error, ProviderTimeoutError):
        return ModelTimeoutError(model_name, str(error), body=error.body, **common)
    if isinstance(error, ProviderConnectionError | StreamInterruptedError):
        return ModelConnectionError(model_name, str(error), body=error.body, **common)
    return ModelAPIError(model_name, str(error), body=error.body, **common)

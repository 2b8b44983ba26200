"""LangChain messages ↔ oaicompat's: what ``ChatOaicompat`` sends and what it hands back.

Going out, each LangChain message is written as the OpenAI message it stands for and read with
``ChatMessage.from_openai``, the library's one reading of OpenAI messages (so an AI message's
tool calls replay their own argument text, and its reasoning is replayed where the backend
wants it). Coming back, a response is an ``AIMessage``: text as ``content``, reasoning in
``additional_kwargs["reasoning_content"]`` (where LangChain's OpenAI-compatible classes put
it), executable calls in ``tool_calls``, calls carrying ``error`` in ``invalid_tool_calls``,
usage as ``usage_metadata``.

An answer whose only calls carry ``error`` (a tool that was not offered, arguments that are
not JSON, a call cut off) and that has no text of its own has the calls' text as its content
(``flagged_text``: what the model wrote, or the hermes form of a call the server structured):
LangChain's agent ends its loop on a message with no ``tool_calls`` and would show an empty
answer, with no error, where the model did write something. The calls stay in
``invalid_tool_calls``, which no agent runs.

A ``ProviderError`` becomes an exception of both hierarchies (``LangChainError``): LangChain
code catching ``ModelRateLimitError`` or ``ContextOverflowError`` sees it, and so does code
catching oaicompat's ``RateLimitError``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core import exceptions as lc
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    FunctionMessage,
    HumanMessage,
    InvalidToolCall,
    SystemMessage,
    ToolCall,
    ToolCallChunk,
    ToolMessage,
)
from langchain_core.messages import (
    ChatMessage as LangChainChatMessage,
)
from langchain_core.messages.ai import InputTokenDetails, OutputTokenDetails, UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.utils.json import parse_partial_json

from providers.abstractions import errors
from providers.abstractions.chat_response import ChatResponse, ChatResponseUpdate
from providers.abstractions.contents import FunctionCallContent, UsageContent
from providers.abstractions.messages import ChatMessage
from providers.abstractions.openai_answers import flagged_call_text
from providers.abstractions.usage import UsageDetails

__all__ = [
    "StreamChunks",
    "ai_message",
    "call_chunk",
    "chat_result",
    "flagged_text",
    "langchain_error",
    "to_chat_messages",
    "usage_metadata",
]


def to_chat_messages(messages: Sequence[BaseMessage]) -> list[ChatMessage]:
    return [ChatMessage.from_openai(_openai_message(message)) for message in messages]


def _openai_message(message: BaseMessage) -> dict[str, Any]:
    if isinstance(message, SystemMessage):
        entry: dict[str, Any] = {"role": "system", "content": _content(message.content)}
    elif isinstance(message, HumanMessage):
        entry = {"role": "user", "content": _content(message.content)}
    elif isinstance(message, AIMessage):
        entry = _assistant(message)
    elif isinstance(message, ToolMessage):
        entry = {"role": "tool", "tool_call_id": message.tool_call_id, "content": _text(message)}
    elif isinstance(message, FunctionMessage):
        entry = {"role": "function", "name": message.name, "content": _text(message)}
    elif isinstance(message, LangChainChatMessage):
        entry = {"role": message.role, "content": _content(message.content)}
    else:
        raise errors.InvalidRequestError(
            f"ChatOaicompat cannot send a {type(message).__name__}", param="messages"
        )
    if message.name and entry["role"] in ("system", "user", "assistant"):
        entry["name"] = message.name
    return entry


def _content(content: str | list[str | dict[str, Any]]) -> str | list[dict[str, Any]]:
    """A string, or OpenAI content parts (LangChain keeps OpenAI's part shapes as they are)."""
    if isinstance(content, str):
        return content
    return [{"type": "text", "text": part} if isinstance(part, str) else part for part in content]


def _text(message: BaseMessage) -> str:
    content = message.content
    return content if isinstance(content, str) else message.text


def _assistant(message: AIMessage) -> dict[str, Any]:
    entry: dict[str, Any] = {"role": "assistant", "content": _text(message) or None}
    calls = [
        _call_entry(call["id"] or "", call["name"], json.dumps(call["args"], ensure_ascii=False))
        for call in message.tool_calls
    ]
    calls += [
        _call_entry(call["id"] or "", call["name"] or "", call["args"] or "")
        for call in message.invalid_tool_calls
    ]
    if calls:
        entry["tool_calls"] = calls
    reasoning = message.additional_kwargs.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning:
        entry["reasoning_content"] = reasoning
    return entry


def _call_entry(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def ai_message(response: ChatResponse) -> AIMessage:
    """The whole answer as LangChain's ``AIMessage``."""
    tool_calls: list[ToolCall] = []
    invalid: list[InvalidToolCall] = []
    for call in response.tool_calls:
        if call.error is None:
            tool_calls.append(
                ToolCall(name=call.name, args=call.arguments, id=call.call_id, type="tool_call")
            )
        else:
            invalid.append(
                InvalidToolCall(
                    name=call.name,
                    args=call.raw_arguments,
                    id=call.call_id,
                    error=call.error,
                    type="invalid_tool_call",
                )
            )
    kwargs: dict[str, Any] = {}
    if response.reasoning:
        kwargs["reasoning_content"] = response.reasoning
    text = response.text
    if invalid and not tool_calls and not text.strip():
        text = flagged_text(call for call in response.tool_calls if call.error is not None)
    message = AIMessage(
        content=text,
        additional_kwargs=kwargs,
        tool_calls=tool_calls,
        invalid_tool_calls=invalid,
        response_metadata=response_metadata(response.finish_reason, response.model_id),
        id=response.response_id,
    )
    if response.usage is not None:
        message.usage_metadata = usage_metadata(response.usage)
    return message


def flagged_text(calls: Iterable[FunctionCallContent]) -> str:
    """The text of flagged calls, each as the OpenAI transport writes it; calls recovered from
    one block share its text, written once."""
    pieces: list[str] = []
    for call in calls:
        piece = flagged_call_text(call)
        if not pieces or piece != pieces[-1] or not isinstance(call.raw, str):
            pieces.append(piece)
    return "\n".join(pieces)


def response_metadata(finish_reason: object, model_id: str | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"model_provider": "oaicompat"}
    if finish_reason is not None:
        metadata["finish_reason"] = str(finish_reason)
    if model_id is not None:
        metadata["model_name"] = model_id
    return metadata


def call_chunk(call: FunctionCallContent, index: int) -> ToolCallChunk:
    """A whole call as one ``tool_call_chunk``. LangChain re-derives ``tool_calls`` and
    ``invalid_tool_calls`` from the chunks by parsing ``args`` leniently (a cut ``{"city":
    "Par`` parses), so a call with ``error`` whose text would parse into an object is sent
    as that text JSON-quoted: it stays an invalid call, and ``json.loads(args)`` gives the
    model's text back."""
    arguments = call.raw_arguments
    if call.error is not None and _parses_to_object(arguments):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return ToolCallChunk(
        name=call.name, args=arguments, id=call.call_id, index=index, type="tool_call_chunk"
    )


def _parses_to_object(text: str) -> bool:
    if not text.strip():
        return True  # empty arguments are `{}` to LangChain
    try:
        return isinstance(parse_partial_json(text), dict)
    except (ValueError, TypeError):
        return False


def usage_metadata(usage: UsageDetails) -> UsageMetadata:
    """LangChain's usage. Its three counts are required; one the server did not report is
    given as 0 there, and the counts it did report are kept as they came in the response's
    ``usage`` (``ChatResult.llm_output``)."""
    input_tokens = usage.input_token_count or 0
    output_tokens = usage.output_token_count or 0
    total = usage.total_token_count
    metadata = UsageMetadata(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=total if total is not None else input_tokens + output_tokens,
    )
    if usage.cached_input_token_count is not None:
        metadata["input_token_details"] = InputTokenDetails(
            cache_read=usage.cached_input_token_count
        )
    if usage.reasoning_token_count is not None:
        metadata["output_token_details"] = OutputTokenDetails(reasoning=usage.reasoning_token_count)
    return metadata


def chunk_for_usage(usage: UsageDetails) -> AIMessageChunk:
    return AIMessageChunk(content="", usage_metadata=usage_metadata(usage))


_ERROR_CLASSES: tuple[tuple[type[errors.ProviderError], type[lc.ModelError]], ...] = (
    (errors.ContextLengthExceededError, lc.ContextOverflowError),
    (errors.AuthenticationError, lc.ModelAuthenticationError),
    (errors.PermissionDeniedError, lc.ModelPermissionDeniedError),
    (errors.ModelNotFoundError, lc.ModelNotFoundError),
    (errors.InvalidRequestError, lc.ModelInvalidRequestError),
    (errors.RateLimitError, lc.ModelRateLimitError),
    (errors.ProviderTimeoutError, lc.ModelTimeoutError),
    (errors.ProviderConnectionError, lc.ModelConnectionError),
)
_combined: dict[type[errors.ProviderError], type[errors.ProviderError]] = {}


def langchain_error(error: errors.ProviderError) -> errors.ProviderError:
    """``error`` as an instance of a class deriving from its own and from LangChain's
    ``ModelError`` for the same condition (``ModelAPIError`` for a server-side failure);
    attributes, partial response included, are kept. ``is_retryable`` follows LangChain's
    class, except that a timeout past the connect phase is not retryable (the server already
    spent the prompt's prefill)."""
    cls = type(error)
    combined = _combined.get(cls)
    if combined is None:
        base = next((lc_cls for ours, lc_cls in _ERROR_CLASSES if isinstance(error, ours)), None)
        combined = type(cls.__name__, (cls, base or lc.ModelAPIError), {})
        combined.__module__ = cls.__module__
        combined.__qualname__ = cls.__qualname__
        _combined[cls] = combined
    translated = combined.__new__(combined, *error.args)
    translated.args = error.args
    translated.__dict__.update(error.__dict__)
    if isinstance(error, errors.ProviderTimeoutError) and error.phase != "connect":
        translated.__dict__["is_retryable"] = False
    return translated


def reported_usage(usage: UsageDetails | None) -> Mapping[str, Any] | None:
    """The counts as the server reported them (``None`` where it said nothing)."""
    return None if usage is None else usage.to_openai()


def chat_result(response: ChatResponse) -> ChatResult:
    message = ai_message(response)
    info = {"finish_reason": str(response.finish_reason)} if response.finish_reason else None
    generation = ChatGeneration(message=message, generation_info=info)
    output = {"model_name": response.model_id, "token_usage": reported_usage(response.usage)}
    return ChatResult(generations=[generation], llm_output=output)


class StreamChunks:
    """A stream's updates as LangChain chunks: text, reasoning and whole calls as they come;
    usage, finish reason and model once, in the last chunk (LangChain adds chunks up, so a
    field sent twice would count twice). A stream that said nothing but flagged calls gets
    their text in the last chunk (``_langchain_convert.flagged_text``)."""

    def __init__(self) -> None:
        self.calls = 0
        self.said = False
        self.flagged: list[FunctionCallContent] = []
        self.usage: UsageDetails | None = None
        self.finish_reason: object = None
        self.model_id: str | None = None
        self.response_id: str | None = None

    def of(self, update: ChatResponseUpdate) -> ChatGenerationChunk | None:
        """Hot path: one call per update."""
        self.response_id = self.response_id or update.response_id
        self.model_id = self.model_id or update.model_id
        if update.finish_reason is not None:
            self.finish_reason = update.finish_reason
        calls = []
        for content in update.contents:
            if isinstance(content, FunctionCallContent):
                calls.append(call_chunk(content, self.calls))
                self.calls += 1
                if content.error is None:
                    self.said = True
                else:
                    self.flagged.append(content)
            elif isinstance(content, UsageContent):
                details = content.details
                self.usage = details if self.usage is None else self.usage.updated_with(details)
        text, reasoning = update.text, update.reasoning
        if not (text or reasoning or calls):
            return None
        self.said = self.said or bool(text.strip())
        kwargs = {"reasoning_content": reasoning} if reasoning else {}
        message = AIMessageChunk(
            content=text, additional_kwargs=kwargs, tool_call_chunks=calls, id=self.response_id
        )
        return ChatGenerationChunk(message=message)

    def last(self) -> ChatGenerationChunk:
        text = flagged_text(self.flagged) if self.flagged and not self.said else ""
        message = AIMessageChunk(
            content=text,
            id=self.response_id,
            response_metadata=response_metadata(self.finish_reason, self.model_id),
        )
        if self.usage is not None:
            message.usage_metadata = usage_metadata(self.usage)
        info = {"finish_reason": str(self.finish_reason)} if self.finish_reason else None
        return ChatGenerationChunk(message=message, generation_info=info)

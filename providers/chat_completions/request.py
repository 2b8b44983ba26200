"""Building the ``/chat/completions`` request body from messages and options.

Serialisation is deterministic (same conversation, same bytes) because llama.cpp, vLLM and
SGLang reuse their prompt cache only for a byte-identical prefix: replayed tool-call arguments
are sent as the exact text the server produced, not re-dumped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from providers.abstractions.contents import (
    AIContent,
    DataContent,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
    UriContent,
)
from providers.abstractions.messages import ChatMessage
from providers.abstractions.open_values import ChatRole
from providers.abstractions.options import ChatOptions
from providers.backends import BackendProfile

__all__ = ["build_chat_request", "merge_extra", "messages_to_wire", "set_if_given"]


def _warn(event: str, **fields: Any) -> None:
    """Logged through structlog, imported on first use: it costs ~25 ms of cold import and is
    needed only when a request is malformed."""
    import structlog

    structlog.get_logger(__name__).warning(event, **fields)


# Keys the client owns: ``additional_properties`` may extend them (a nested dict is merged),
# never replace them.
_CORE_KEYS = frozenset({"model", "messages", "stream", "stream_options", "tools", "tool_choice"})


def build_chat_request(
    messages: Sequence[ChatMessage],
    options: ChatOptions | None,
    *,
    model_id: str | None,
    stream: bool,
    profile: BackendProfile,
) -> dict[str, Any]:
    options = options or ChatOptions()
    body: dict[str, Any] = {}
    model = options.model_id or model_id
    if model:
        body["model"] = model
    body["messages"] = messages_to_wire(messages, profile)
    body["stream"] = stream
    if stream and profile.request_stream_usage:
        body["stream_options"] = {"include_usage": True}
    set_if_given(body, "temperature", options.temperature)
    set_if_given(body, "top_p", options.top_p)
    set_if_given(body, "top_k", options.top_k)
    set_if_given(body, profile.max_tokens_field, options.max_output_tokens)
    if options.stop_sequences:
        body["stop"] = list(options.stop_sequences)
    set_if_given(body, "seed", options.seed)
    set_if_given(body, "frequency_penalty", options.frequency_penalty)
    set_if_given(body, "presence_penalty", options.presence_penalty)
    tools = options.tool_declarations()
    if tools:  # never `tools: []`: vLLM rejects it
        body["tools"] = [tool.to_openai() for tool in tools]
        if options.allow_multiple_tool_calls is not None:
            body["parallel_tool_calls"] = options.allow_multiple_tool_calls
    if options.tool_mode is not None:
        body["tool_choice"] = options.tool_mode.to_openai()
    if options.response_format is not None:
        body["response_format"] = options.response_format.to_openai()
    for key, value in options.additional_properties.items():
        if key == "stream_options" and not stream:
            # vLLM answers 400 to stream_options without stream (docs/wire.md §2.4), so options
            # shared by streamed and non-streamed calls must not carry it into the latter.
            _warn("oaicompat.request.extra_key_ignored", key=key, reason="not streaming")
            continue
        merge_extra(body, key, value, _CORE_KEYS)
    return body


def set_if_given(body: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        body[key] = value


def merge_extra(body: dict[str, Any], key: str, value: Any, core_keys: frozenset[str]) -> None:
    """A caller's extra body key: added when absent, merged into a dict the client built
    (``stream_options``), otherwise the client's value stays and the clash is logged once per
    request. Shared by the chat and Responses request builders."""
    if key not in body:
        body[key] = value
        return
    current = body[key]
    if isinstance(current, dict) and isinstance(value, Mapping):
        # e.g. stream_options: {"continuous_usage_stats": true} joins include_usage.
        for inner, inner_value in value.items():
            current.setdefault(inner, inner_value)
        return
    if key in core_keys or current != value:
        _warn("oaicompat.request.extra_key_ignored", key=key, reason="set by the client")


def messages_to_wire(
    messages: Sequence[ChatMessage], profile: BackendProfile
) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = []
    system_texts: list[str] = []
    for message in messages:
        if profile.merge_system_messages and message.role == ChatRole.SYSTEM:
            text = message.text
            if text.strip():
                system_texts.append(text)
            continue
        wire.extend(_message_to_wire(message, profile))
    if system_texts:
        wire.insert(0, {"role": "system", "content": "\n\n".join(system_texts)})
    return wire


def _message_to_wire(message: ChatMessage, profile: BackendProfile) -> list[dict[str, Any]]:
    """One message may become several: each tool result is its own ``tool`` message."""
    texts: list[str] = []
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    results: list[FunctionResultContent] = []
    reasoning: list[str] = []
    has_media = False
    for content in message.contents:
        if isinstance(content, TextContent):
            texts.append(content.text)
            parts.append({"type": "text", "text": content.text})
        elif isinstance(content, DataContent | UriContent):
            parts.append(_media_part(content))
            has_media = True
        elif isinstance(content, FunctionCallContent):
            calls.append(_call_to_wire(content))
        elif isinstance(content, FunctionResultContent):
            results.append(content)
        elif isinstance(content, TextReasoningContent):
            reasoning.append(content.text)
    out: list[dict[str, Any]] = []
    if texts or has_media or calls or not results:
        entry: dict[str, Any] = {"role": message.role.value}
        if has_media or len(texts) > 1:
            entry["content"] = parts
        elif calls:
            entry["content"] = texts[0] if texts else None
        else:
            entry["content"] = texts[0] if texts else ""
        if calls:
            entry["tool_calls"] = calls
        if reasoning and profile.replay_reasoning:
            entry["reasoning_content"] = "".join(reasoning)
        if message.author_name:
            entry["name"] = message.author_name
        out.append(entry)
    out.extend(
        {"role": "tool", "tool_call_id": result.call_id, "content": _result_text(result.result)}
        for result in results
    )
    return out


def _media_part(content: AIContent) -> dict[str, Any]:
    if isinstance(content, DataContent):
        uri, media_type = content.uri, content.media_type
    else:
        assert isinstance(content, UriContent)
        uri, media_type = content.uri, content.media_type or ""
    if media_type.startswith("audio/") and isinstance(content, DataContent):
        audio_format = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3"}.get(
            media_type
        )
        if audio_format is None:
            raise ValueError(f"audio of type {media_type!r} cannot be sent (wav or mp3 only)")
        data = uri.split(",", 1)[1]
        return {"type": "input_audio", "input_audio": {"data": data, "format": audio_format}}
    return {"type": "image_url", "image_url": {"url": uri}}


def _call_to_wire(call: FunctionCallContent) -> dict[str, Any]:
    if call.raw_arguments and call.error is None:
        arguments = call.raw_arguments  # the server's own bytes: keeps its prompt cache valid
    else:
        arguments = json.dumps(call.arguments, ensure_ascii=False)
    return {
        "id": call.call_id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    }


def _result_text(result: Any) -> str:
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    return json.dumps(result, ensure_ascii=False, default=str)

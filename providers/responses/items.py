"""Our ``ChatMessage``s as Responses-API ``input`` items (and ``instructions``).

A conversation is a flat list of items, in the order the contents were produced: ``message``
items for text and images, one ``function_call`` item per tool call and one
``function_call_output`` item per result. Both vLLM and SGLang rebuild the chat prompt from
exactly these items (the captured ``continue-stateless-history`` prompts contain the assistant
``<tool_call>`` turn and the ``<tool_response>`` turn), whether or not their response store is
on, so sending the whole history this way is correct everywhere.

Serialisation is deterministic, as on the chat path: replayed call arguments are the server's
own bytes, so a prompt cache keyed on the rendered prefix still hits.
"""

from __future__ import annotations

from collections.abc import Sequence
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
from providers.abstractions.errors import ConfigurationError
from providers.abstractions.messages import ChatMessage
from providers.abstractions.open_values import ChatRole
from providers.chat_completions.request import json_text

__all__ = ["Item", "messages_to_input"]

Item = dict[str, Any]


def messages_to_input(
    messages: Sequence[ChatMessage],
    *,
    merge_system_messages: bool,
    replay_reasoning: bool,
    keep_separators: bool = False,
) -> tuple[str | None, list[Item]]:
    """``(instructions, items)``.

    System messages before the first other message become ``instructions`` (joined by a blank
    line), which every server turns into the leading system prompt. A later system message is
    an item of its own, or joins ``instructions`` when ``merge_system_messages`` is set (strict
    templates reject a system message anywhere but first, as on the chat path).

    ``keep_separators`` keeps the whitespace-only text of a turn that made calls (see
    ``_flush``): not for sending, but to see a response's output as the server stored it.
    """
    system: list[str] = []
    items: list[Item] = []
    leading = True
    for message in messages:
        if message.role == ChatRole.SYSTEM and (leading or merge_system_messages):
            text = message.text
            if text.strip():
                system.append(text)
            continue
        leading = False
        _message_items(message, items, replay_reasoning, keep_separators)
    return ("\n\n".join(system) if system else None), items


def _message_items(
    message: ChatMessage, items: list[Item], replay_reasoning: bool, keep_separators: bool
) -> None:
    """Contents in order; consecutive text and media share one ``message`` item."""
    role = message.role.value
    assistant = message.role == ChatRole.ASSISTANT
    skip_blank = (
        assistant
        and not keep_separators
        and any(type(c) is FunctionCallContent for c in message.contents)
    )
    parts: list[AIContent] = []
    for content in message.contents:
        if isinstance(content, TextContent | DataContent | UriContent):
            parts.append(content)
        elif isinstance(content, FunctionCallContent):
            _flush(role, parts, items, skip_blank=skip_blank)
            items.append(_call_item(content))
        elif isinstance(content, FunctionResultContent):
            _flush(role, parts, items, skip_blank=skip_blank)
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": content.call_id,
                    "output": _result_text(content.result),
                }
            )
        elif isinstance(content, TextReasoningContent) and replay_reasoning:
            _flush(role, parts, items, skip_blank=skip_blank)
            items.append(
                {
                    "type": "reasoning",
                    "summary": [],
                    "content": [{"type": "reasoning_text", "text": content.text}],
                }
            )
    _flush(role, parts, items, skip_blank=skip_blank)


def _flush(role: str, parts: list[AIContent], items: list[Item], *, skip_blank: bool) -> None:
    """One ``message`` item from the pending parts.

    ``skip_blank``: in an assistant turn that made tool calls, whitespace-only text is the
    template's separator between reasoning and the call (vLLM and SGLang stream it as a message
    item holding ``"\\n\\n"``; their non-streamed answer to the same text has no message item),
    not an answer: replaying it would add an empty assistant turn before the call.
    """
    if not parts:
        return
    if skip_blank and all(type(p) is TextContent and not p.text.strip() for p in parts):
        parts.clear()
        return
    if len(parts) == 1 and type(parts[0]) is TextContent:
        content: str | list[Item] = parts[0].text
    else:
        content = [_part(role, part) for part in parts]
    parts.clear()
    items.append({"type": "message", "role": role, "content": content})


def _part(role: str, part: AIContent) -> Item:
    if isinstance(part, TextContent):
        kind = "output_text" if role == ChatRole.ASSISTANT.value else "input_text"
        return {"type": kind, "text": part.text}
    if isinstance(part, DataContent):
        uri, media_type = part.uri, part.media_type
    else:
        assert isinstance(part, UriContent)
        uri, media_type = part.uri, part.media_type or "image/*"
    if not media_type.startswith("image/"):
        raise ConfigurationError(
            f"content of type {media_type!r} cannot be sent through the Responses API "
            "(images only; use the chat-completions client for audio)"
        )
    return {"type": "input_image", "image_url": uri}


def _call_item(call: FunctionCallContent) -> Item:
    if call.raw_arguments and call.error is None:
        arguments = call.raw_arguments  # the server's own bytes: keeps its prompt cache valid
    else:
        arguments = json_text(call.arguments, "a tool call's arguments", None)
    return {
        "type": "function_call",
        "call_id": call.call_id,
        "name": call.name,
        "arguments": arguments,
    }


def _result_text(result: Any) -> str:
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    return json_text(result, "a tool result", str)

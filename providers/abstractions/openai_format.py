"""OpenAI chat-completions dicts ↔ the value types, with no backend quirk.

Framework adapters (agent-framework, pydantic-ai, LangChain, an OpenAI-SDK transport) hold
conversations and answers as OpenAI dicts; this is the one mapping between those dicts and our
contents, reached through the classes (``ChatMessage.from_openai``, ``.to_openai()``,
``ChatResponse.to_openai()``, ``ChatResponseUpdate.to_openai_chunk()``), which hand it their
fields: it sits below them, so it takes fields, not the classes. The request builder encodes
messages through it too and adds only what a backend needs on top (merged system messages,
reasoning replay), so a request and ``to_openai()`` cannot disagree about a message.

A message read from a dict is written back as that dict:

* keys the typed form has no field for (``refusal``, ``prefix``, or a null ``name``) stay in the
  message's ``additional_properties`` and are written back;
* where two encodings say the same (content as a string or as a list of parts; a null, empty or
  absent content), the message's ``raw`` (the dict it was read from) picks the one it had;
* a part or a call whose ``raw`` holds what its typed form says and more (an image's ``detail``)
  is written as ``raw``; one that changed since it was read is written from its fields;
* a content part no content type models (a ``file``, a ``refusal``) becomes an ``AIContent``
  whose ``additional_properties[UNMODELLED_PART]`` is the part, written back as it was.

Three things do not come back as they were: arguments that are empty or not a JSON object (a
history replays ``{}`` for them, as servers cannot take anything else), a tool message whose
content is not a string, and image data in non-canonical base64 (kept as a ``UriContent``).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Protocol

from providers.abstractions.contents import (
    AIContent,
    DataContent,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
    UriContent,
)
from providers.abstractions.errors import InvalidRequestError
from providers.abstractions.open_values import ChatRole, role_of

__all__ = [
    "UNMODELLED_PART",
    "MessageFields",
    "call_entry",
    "json_text",
    "read_message",
    "unencodable",
    "write_message",
]

UNMODELLED_PART: Final = "openai_content_part"
"""``additional_properties`` key of an ``AIContent`` standing for a content part no content type
models; its value is the part. Only a content marked so is written as a part: other producers'
bare ``AIContent`` (a Responses-API item) must not reach a chat request."""

_READ_KEYS = frozenset({"role", "content", "name", "reasoning_content", "tool_calls"})
_AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/mpeg": "mp3"}
_AUDIO_TYPES = {"wav": "audio/wav", "mp3": "audio/mpeg"}
_DATA_URI = r"data:([^;,]+);base64,(.*)"  # (re caches it on first use: data URIs only)
_ABSENT: Final = object()
_UNKNOWN: Final = object()


class MessageFields(Protocol):
    """What is read of a ``ChatMessage`` (this module sits below it, so it names no class)."""

    @property
    def role(self) -> ChatRole: ...
    @property
    def contents(self) -> Sequence[AIContent]: ...
    @property
    def author_name(self) -> str | None: ...
    @property
    def additional_properties(self) -> Mapping[str, Any] | None: ...
    @property
    def raw(self) -> Any: ...


# --- reading ------------------------------------------------------------------------------------


def read_message(
    message: Mapping[str, Any],
) -> tuple[ChatRole, list[AIContent], str | None, dict[str, Any] | None]:
    """``(role, contents, author_name, additional_properties)`` of one OpenAI message.

    Contents come in the order the request builder writes them: reasoning, then the content
    (text, media, parts), then tool calls; a ``tool`` message is one ``FunctionResultContent``.
    """
    if not isinstance(message, Mapping):
        raise ValueError(f"an OpenAI message is an object, not {type(message).__name__}")
    role = message.get("role")
    if not isinstance(role, str) or not role:
        raise ValueError("an OpenAI message needs a non-empty string `role`")
    extras = {key: value for key, value in message.items() if key not in _READ_KEYS}
    contents: list[AIContent] = []
    reasoning = message.get("reasoning_content", _ABSENT)
    if isinstance(reasoning, str):
        contents.append(TextReasoningContent(reasoning))
    elif reasoning is not _ABSENT:
        extras["reasoning_content"] = reasoning
    content = message.get("content")
    if role == "tool" and isinstance(extras.get("tool_call_id"), str):
        contents.append(FunctionResultContent(extras.pop("tool_call_id"), content))
    elif isinstance(content, str):
        contents.append(TextContent(content))
    elif isinstance(content, list):
        contents.extend(_read_part(part) for part in content)
    elif content is not None:
        extras["content"] = content
    calls = _read_calls(message.get("tool_calls"))
    if calls is None:
        if "tool_calls" in message:
            extras["tool_calls"] = message["tool_calls"]
    else:
        contents.extend(calls)
    name = message.get("name")
    if not (isinstance(name, str) and name):
        if "name" in message:
            extras["name"] = name
        name = None
    return role_of(role), contents, name, extras or None


def _read_part(part: Any) -> AIContent:
    if isinstance(part, Mapping):
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("text"), str):
            return TextContent(part["text"], raw=part)
        image = part.get("image_url")
        if kind == "image_url" and isinstance(image, Mapping) and isinstance(image.get("url"), str):
            return _read_uri(image["url"], part)
        audio = part.get("input_audio")
        if kind == "input_audio" and isinstance(audio, Mapping):
            media_type = _AUDIO_TYPES.get(audio.get("format"))  # type: ignore[arg-type]
            data = _canonical_base64(audio.get("data"))
            if media_type is not None and data is not None:
                return DataContent(data, media_type, raw=part)
    return AIContent(raw=part, additional_properties={UNMODELLED_PART: part})


def _read_uri(uri: str, part: Mapping[str, Any]) -> AIContent:
    """A data URI becomes the bytes it holds when writing them back gives the same URI."""
    match = re.fullmatch(_DATA_URI, uri, re.DOTALL)
    if match is not None:
        data = _canonical_base64(match[2])
        if data is not None:
            return DataContent(data, match[1], raw=part)
        return UriContent(uri, match[1], raw=part)
    return UriContent(uri, "image/*", raw=part)


def _canonical_base64(text: Any) -> bytes | None:
    if not isinstance(text, str):
        return None
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    return data if base64.b64encode(data).decode("ascii") == text else None


def _read_calls(entries: Any) -> list[FunctionCallContent] | None:
    """The calls, or ``None`` when any entry is not a function call with a name and text
    arguments: such a list is kept whole in ``additional_properties``, not half read."""
    if not isinstance(entries, list):
        return None
    calls = []
    for entry in entries:
        function = entry.get("function") if isinstance(entry, Mapping) else None
        if not isinstance(function, Mapping) or entry.get("type", "function") != "function":
            return None
        name, arguments = function.get("name"), function.get("arguments")
        call_id = entry.get("id")
        if not (isinstance(name, str) and isinstance(arguments, str)):
            return None
        call = FunctionCallContent.from_json(
            call_id if isinstance(call_id, str) else "", name, arguments
        )
        call.raw = entry
        calls.append(call)
    return calls


# --- writing ------------------------------------------------------------------------------------


def write_message(message: MessageFields) -> list[dict[str, Any]]:
    """The OpenAI messages one message becomes: usually one; each tool result is its own
    ``tool`` message. Reasoning is written as ``reasoning_content``; whether a backend gets it
    is the request builder's business."""
    texts: list[str] = []
    parts: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    results: list[FunctionResultContent] = []
    reasoning: list[str] = []
    parts_only = False  # a part with no string form: the content must be a list
    for content in message.contents:
        if isinstance(content, TextContent):
            texts.append(content.text)
            parts.append(_as_read({"type": "text", "text": content.text}, content.raw))
        elif isinstance(content, DataContent | UriContent):
            parts.append(_as_read(_media_part(content), content.raw))
            parts_only = True
        elif isinstance(content, FunctionCallContent):
            calls.append(_as_read(call_entry(content, replay=True), content.raw))
        elif isinstance(content, FunctionResultContent):
            results.append(content)
        elif isinstance(content, TextReasoningContent):
            reasoning.append(content.text)
        elif isinstance(
            part := (content.additional_properties or {}).get(UNMODELLED_PART), Mapping
        ):
            parts.append(dict(part))
            parts_only = True
    written: list[dict[str, Any]] = []
    if texts or parts_only or calls or not results:
        entry: dict[str, Any] = {"role": message.role.value}
        raw = message.raw
        form = raw.get("content", _ABSENT) if isinstance(raw, Mapping) else _UNKNOWN
        if parts_only or len(texts) > 1 or (texts and isinstance(form, list)):
            entry["content"] = parts
        elif texts:
            entry["content"] = texts[0]
        elif form is None or form == []:
            entry["content"] = None if form is None else []
        elif form is not _ABSENT:  # read without a content: written without one
            entry["content"] = None if calls else ""
        if calls:
            entry["tool_calls"] = calls
        if reasoning:
            entry["reasoning_content"] = "".join(reasoning)
        written.append(entry)
    tool_messages = [
        {"role": "tool", "tool_call_id": result.call_id, "content": _result_text(result.result)}
        for result in results
    ]
    # A message's name and extra keys go on its own entry, or, for a tool turn, on each result.
    for target in written or tool_messages:
        if message.author_name:
            target["name"] = message.author_name
        for key, value in (message.additional_properties or {}).items():
            target.setdefault(key, value)
    written.extend(tool_messages)
    return written


def _as_read(typed: dict[str, Any], raw: Any) -> dict[str, Any]:
    """``raw`` when it says everything ``typed`` says (and maybe more), else ``typed``."""
    return dict(raw) if isinstance(raw, Mapping) and _covers(raw, typed) else typed


def _covers(raw: Mapping[str, Any], typed: Mapping[str, Any]) -> bool:
    for key, value in typed.items():
        held = raw.get(key, _ABSENT)
        if isinstance(value, dict):
            if not (isinstance(held, Mapping) and _covers(held, value)):
                return False
        elif held != value or type(held) is not type(value):
            return False
    return True


def _media_part(content: DataContent | UriContent) -> dict[str, Any]:
    if isinstance(content, DataContent):
        uri, media_type = content.uri, content.media_type
    else:
        uri, media_type = content.uri, content.media_type or ""
    if media_type.startswith("audio/") and isinstance(content, DataContent):
        audio_format = _AUDIO_FORMATS.get(media_type)
        if audio_format is None:
            raise ValueError(f"audio of type {media_type!r} cannot be sent (wav or mp3 only)")
        data = uri.split(",", 1)[1]
        return {"type": "input_audio", "input_audio": {"data": data, "format": audio_format}}
    return {"type": "image_url", "image_url": {"url": uri}}


def call_entry(call: FunctionCallContent, *, replay: bool) -> dict[str, Any]:
    """A history (``replay``) sends the server's own argument bytes, keeping its prompt cache
    valid, unless they did not parse: a template cannot take them, so the parsed object (``{}``)
    goes instead. An answer reports the text the model wrote, parsed or not."""
    if replay:
        use_raw = bool(call.raw_arguments) and call.error is None
    else:
        use_raw = bool(call.raw_arguments) or not call.arguments
    arguments = (
        call.raw_arguments
        if use_raw
        else json_text(call.arguments, "a tool call's arguments", None)
    )
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
    return json_text(result, "a tool result", str)


def json_text(value: Any, what: str, default: Callable[[Any], Any] | None) -> str:
    """JSON text inside a request (arguments, results); a value that contains itself, or one
    JSON has no form for, is the caller's error, typed, not ``json``'s."""
    try:
        return json.dumps(value, ensure_ascii=False, default=default)
    except (TypeError, ValueError, RecursionError):
        raise unencodable(
            f"the request cannot be encoded: {what} cannot be written as JSON (a circular "
            "structure, or an object JSON has no form for)"
        ) from None


def unencodable(message: str, param: str | None = None) -> InvalidRequestError:
    """The error for a request that cannot be encoded, naming where, never quoting text."""
    return InvalidRequestError(
        message,
        param=param,
        user_message="The request could not be sent: it holds data that cannot be encoded.",
    )

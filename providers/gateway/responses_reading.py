"""A ``POST /v1/responses`` body as the pipeline's ``ChatMessage``\\ s and ``ChatOptions``.

The inverse of ``providers.responses.items``: that module writes our messages as Responses
items for a backend's Responses API; this one reads a caller's items back into messages, so a
Responses caller is served by the chat pipeline (text tool calls recovered, reasoning split,
retry and fallback) whatever API the backend speaks.

How the items become messages:

* ``instructions`` is a leading system message; a ``developer`` message is a system message
  (chat templates of local models know no ``developer`` role);
* consecutive assistant-side items (``reasoning``, an assistant ``message``, ``function_call``)
  are one assistant turn, as ``items.py`` writes one turn as several items (an assistant
  ``message`` after text opens a new turn: two answers stay two);
* a ``reasoning`` item is the reasoning of the assistant turn it belongs to (its
  ``reasoning_text`` parts, else its summary text); whether a backend gets it back is the
  pipeline's reasoning-replay setting, as for any chat history. ``encrypted_content`` is
  OpenAI's own and is ignored;
* each ``function_call_output`` is one tool message.

The gateway is stateless: ``previous_response_id``, ``conversation``, ``prompt``, an
``item_reference`` and ``background`` all need something stored on the server, so each is
refused (400 naming it) rather than silently answered without the state it names. ``store:
true`` is accepted (every OpenAI SDK sends it by default) but nothing is stored: a later
request must carry its whole conversation in ``input``.

Everything refused is an ``InvalidRequestError`` (400) whose ``param`` names the field as
OpenAI does (``input[2].content[0].type``), so a caller sees which part of its body to fix.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from providers.abstractions.contents import (
    AIContent,
    FunctionCallContent,
    FunctionResultContent,
    TextContent,
    TextReasoningContent,
)
from providers.abstractions.errors import InvalidRequestError
from providers.abstractions.messages import ChatMessage
from providers.abstractions.open_values import ChatRole
from providers.abstractions.options import ChatOptions
from providers.abstractions.reasoning_options import EFFORT_WORDS, ReasoningOptions
from providers.abstractions.records import value_class

__all__ = ["ResponsesRequest", "read_request", "refused"]

_ROLES = {
    "user": ChatRole.USER,
    "system": ChatRole.SYSTEM,
    "developer": ChatRole.SYSTEM,
    "assistant": ChatRole.ASSISTANT,
}
_STATEFUL = ("previous_response_id", "conversation", "prompt")
_TEXT_PARTS = frozenset({"input_text", "output_text"})
_PASSED_ON = ("seed", "stop", "top_k", "frequency_penalty", "presence_penalty", "user")
"""Chat-completions keys a Responses body may carry (vLLM and SGLang take them in theirs too),
sent on as they are; any other key the gateway does not model is left out."""


@value_class()
class ResponsesRequest:
    """What one request asks for; ``echo`` holds the request fields a ``response`` object
    repeats (``tools``, ``tool_choice``, ``text``, ...), in the Responses API's own shapes."""

    messages: list[ChatMessage]
    options: ChatOptions
    stream: bool
    echo: dict[str, Any]


def refused(message: str, param: str | None) -> InvalidRequestError:
    """The 400 a malformed request gets, in OpenAI's terms."""
    return InvalidRequestError(message, status=400, error_type="invalid_request_error", param=param)


def read_request(body: bytes) -> ResponsesRequest:
    """The request in ``body``; raises ``InvalidRequestError`` naming what is wrong."""
    try:
        request = json.loads(body)
    except (ValueError, RecursionError):
        raise refused("the body is not valid JSON", None) from None
    if not isinstance(request, dict):
        raise refused("the body must be a JSON object", None)
    for key in _STATEFUL:
        if request.get(key) is not None:
            raise refused(
                f"`{key}` needs state stored on the server, and this gateway stores none: "
                "send the whole conversation in `input`",
                key,
            )
    if request.get("background"):
        raise refused("background responses need a stored response to poll", "background")
    stream = request.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise refused("`stream` must be a boolean", "stream")
    instructions = _optional(request, "instructions", (str,), "a string")
    messages = [ChatMessage.system(instructions)] if instructions else []
    messages.extend(read_input(request.get("input")))
    if not messages:
        raise refused("the request has no input", "input")
    chat, echo = _settings(request)
    options = ChatOptions.from_openai(chat)
    effort = echo["reasoning"]["effort"]
    if effort is not None:
        options.reasoning = ReasoningOptions(effort=EFFORT_WORDS[effort])
    cache_key = request.get("prompt_cache_key")
    if isinstance(cache_key, str) and cache_key:
        options.conversation_id = cache_key
    echo["instructions"] = instructions
    return ResponsesRequest(messages, options, bool(stream), echo)


def read_input(value: Any) -> list[ChatMessage]:
    """``input``: a string (one user message) or a list of items."""
    if isinstance(value, str):
        return [ChatMessage.user(value)]
    if not isinstance(value, list):
        raise refused("`input` must be a string or a list of items", "input")
    turns = _Turns()
    for index, item in enumerate(value):
        where = f"input[{index}]"
        if not isinstance(item, dict):
            raise refused(f"`{where}` must be an object", where)
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "message":
            role, contents = _message(item, where)
            turns.message(role, contents)
        elif kind == "function_call":
            turns.assistant([_call(item, where)], text=False)
        elif kind == "function_call_output":
            call_id = _required(item, "call_id", where)
            result = _output(item.get("output"), f"{where}.output")
            turns.add(ChatMessage(ChatRole.TOOL, [FunctionResultContent(call_id, result)]))
        elif kind == "reasoning":
            reasoning = _reasoning(item, where)
            if reasoning:
                turns.assistant([TextReasoningContent(reasoning)], text=False)
        elif kind == "item_reference":
            raise refused("an item reference needs stored items; this gateway stores none", where)
        else:
            raise refused(f"unknown item type {kind!r}", f"{where}.type")
    return turns.messages


class _Turns:
    """Messages being built; the last one may be an assistant turn still open to more items."""

    def __init__(self) -> None:
        self.messages: list[ChatMessage] = []
        self._open: ChatMessage | None = None  # the assistant turn items still join

    def add(self, message: ChatMessage) -> None:
        self.messages.append(message)
        self._open = None

    def message(self, role: ChatRole, contents: list[AIContent]) -> None:
        if role == ChatRole.ASSISTANT:
            self.assistant(contents, text=True)
        else:
            self.add(ChatMessage(role, contents))

    def assistant(self, contents: list[AIContent], *, text: bool) -> None:
        turn = self._open
        if turn is None or (text and any(isinstance(c, TextContent) for c in turn.contents)):
            turn = ChatMessage(ChatRole.ASSISTANT)
            self.messages.append(turn)
            self._open = turn
        turn.contents.extend(contents)


def _message(item: Mapping[str, Any], where: str) -> tuple[ChatRole, list[AIContent]]:
    role = _ROLES.get(item.get("role"))  # type: ignore[arg-type]
    if role is None:
        raise refused(f"unknown role {item.get('role')!r}", f"{where}.role")
    content = item.get("content")
    if isinstance(content, str):
        return role, [TextContent(content)]
    if not isinstance(content, list):
        raise refused("`content` must be a string or a list of parts", f"{where}.content")
    return role, [_part(part, role, f"{where}.content[{i}]") for i, part in enumerate(content)]


def _part(part: Any, role: ChatRole, where: str) -> AIContent:
    if not isinstance(part, dict):
        raise refused(f"`{where}` must be an object", where)
    kind = part.get("type")
    if kind in _TEXT_PARTS or (kind == "refusal" and role == ChatRole.ASSISTANT):
        key = "refusal" if kind == "refusal" else "text"
        text = part.get(key)
        if not isinstance(text, str):
            raise refused(f"a {kind} part needs a string `{key}`", f"{where}.{key}")
        return TextContent(text)
    if kind == "input_image" and role != ChatRole.ASSISTANT:
        url = part.get("image_url")
        if not isinstance(url, str) or not url:
            raise refused(
                "an image part needs an `image_url` (a URL or a data URI); file ids need "
                "stored files, which this gateway has none of",
                f"{where}.image_url",
            )
        # The chat reader's rule for images (a data URI becomes its bytes) applies unchanged.
        chat_part = {"type": "image_url", "image_url": {"url": url}}
        return ChatMessage.from_openai({"role": "user", "content": [chat_part]}).contents[0]
    raise refused(f"unsupported content part type {kind!r}", f"{where}.type")


def _call(item: Mapping[str, Any], where: str) -> FunctionCallContent:
    call_id, name = _required(item, "call_id", where), _required(item, "name", where)
    arguments = item.get("arguments", "")
    if not isinstance(arguments, str):
        raise refused("`arguments` must be a string of JSON", f"{where}.arguments")
    return FunctionCallContent.from_json(call_id, name, arguments)


def _output(value: Any, where: str) -> str:
    """A call's output: a string, or text parts (joined)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = []
        for index, part in enumerate(value):
            if not isinstance(part, dict) or part.get("type") not in _TEXT_PARTS:
                raise refused("a tool output's parts must be text", f"{where}[{index}]")
            if not isinstance(part.get("text"), str):
                raise refused("a text part needs a string `text`", f"{where}[{index}].text")
            texts.append(part["text"])
        return "".join(texts)
    raise refused("`output` must be a string or a list of text parts", where)


def _reasoning(item: Mapping[str, Any], where: str) -> str:
    """The reasoning text: ``content``'s ``reasoning_text`` parts, else ``summary``'s text."""
    for key, kind in (("content", "reasoning_text"), ("summary", "summary_text")):
        parts = item.get(key)
        if parts is None:
            continue
        if not isinstance(parts, list):
            raise refused(f"`{key}` must be a list", f"{where}.{key}")
        texts = []
        for index, part in enumerate(parts):
            if not isinstance(part, dict) or part.get("type") != kind:
                raise refused(f"`{key}` holds {kind} parts", f"{where}.{key}[{index}]")
            if not isinstance(part.get("text"), str):
                raise refused("a part needs a string `text`", f"{where}.{key}[{index}].text")
            texts.append(part["text"])
        if texts:
            return "".join(texts)
    return ""


def _settings(request: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(chat, echo)``: the options as a chat-completions body (``ChatOptions.from_openai``
    reads it, so the pipeline's checks of offered tools see the chat form), and the fields the
    answer repeats."""
    chat: dict[str, Any] = {key: request[key] for key in _PASSED_ON if key in request}
    tools = _tools(request.get("tools"))
    if tools:
        chat["tools"] = [_chat_tool(tool) for tool in tools]
    choice = request.get("tool_choice")
    if choice is not None:
        chat["tool_choice"] = _chat_tool_choice(choice)
    for key, kinds, what in (
        ("temperature", (int, float), "a number"),
        ("top_p", (int, float), "a number"),
        ("max_output_tokens", (int,), "an integer"),
        ("parallel_tool_calls", (bool,), "a boolean"),
    ):
        value = _optional(request, key, kinds, what)
        if value is not None:
            chat["max_tokens" if key == "max_output_tokens" else key] = value
    text = _text_config(request.get("text"))
    if text["format"]["type"] != "text":
        chat["response_format"] = _chat_format(text["format"])
    echo = {
        "tools": tools,
        "tool_choice": choice if choice is not None else "auto",
        "parallel_tool_calls": chat.get("parallel_tool_calls", True),
        "temperature": chat.get("temperature"),
        "top_p": chat.get("top_p"),
        "max_output_tokens": chat.get("max_tokens"),
        "text": text,
        "reasoning": {"effort": _effort(request.get("reasoning")), "summary": None},
        "metadata": _metadata(request.get("metadata")),
        "user": _optional(request, "user", (str,), "a string"),
        "store": _optional(request, "store", (bool,), "a boolean"),
    }
    return chat, echo


def _tools(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise refused("`tools` must be a list", "tools")
    for index, tool in enumerate(value):
        where = f"tools[{index}]"
        if not isinstance(tool, dict):
            raise refused(f"`{where}` must be an object", where)
        if tool.get("type") != "function":
            raise refused(
                f"tool type {tool.get('type')!r} is not served here: only function tools",
                f"{where}.type",
            )
        _required(tool, "name", where)
        if not isinstance(tool.get("parameters", {}), dict | None):
            raise refused("`parameters` must be a JSON schema object", f"{where}.parameters")
    return value


def _chat_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A flat Responses function tool in the chat form (``function`` nests its keys)."""
    function = _given(tool, "name", "description", "parameters", "strict")
    return {"type": "function", "function": function}


def _chat_tool_choice(choice: Any) -> str | dict[str, Any]:
    if choice in ("auto", "none", "required"):
        return str(choice)
    if isinstance(choice, dict) and choice.get("type") == "function":
        name = choice.get("name")
        if isinstance(name, str) and name:
            return {"type": "function", "function": {"name": name}}
    raise refused(
        "`tool_choice` must be auto, none, required or {type: function, name}", "tool_choice"
    )


def _text_config(value: Any) -> dict[str, Any]:
    if value is None:
        return {"format": {"type": "text"}}
    if not isinstance(value, dict):
        raise refused("`text` must be an object", "text")
    form = value.get("format", {"type": "text"})
    if not isinstance(form, dict) or form.get("type") not in ("text", "json_object", "json_schema"):
        raise refused("`text.format.type` must be text, json_object or json_schema", "text.format")
    if form["type"] == "json_schema":
        if not isinstance(form.get("schema"), dict):
            raise refused("a json_schema format needs a `schema` object", "text.format.schema")
        if not isinstance(form.get("name"), str) or not form["name"]:
            raise refused("a json_schema format needs a `name`", "text.format.name")
    verbosity = value.get("verbosity")
    return {"format": form, **({"verbosity": verbosity} if verbosity is not None else {})}


def _chat_format(form: Mapping[str, Any]) -> dict[str, Any]:
    """``text.format`` as chat's ``response_format`` (the schema's keys nest again)."""
    if form["type"] == "json_object":
        return {"type": "json_object"}
    inner = _given(form, "name", "description", "schema", "strict")
    return {"type": "json_schema", "json_schema": inner}


def _given(source: Mapping[str, Any], *keys: str) -> dict[str, Any]:
    return {key: source[key] for key in keys if source.get(key) is not None}


def _effort(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise refused("`reasoning` must be an object", "reasoning")
    effort = value.get("effort")
    if effort is not None and effort not in EFFORT_WORDS:
        raise refused(f"unknown reasoning effort {effort!r}", "reasoning.effort")
    return effort


def _metadata(value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise refused("`metadata` must be an object of strings", "metadata")
    return value


def _required(item: Mapping[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value:
        raise refused(f"`{key}` must be a non-empty string", f"{where}.{key}")
    return value


def _optional(request: Mapping[str, Any], key: str, kinds: tuple[type[Any], ...], what: str) -> Any:
    """``key``'s value, of ``kinds`` (``None`` when absent); a bool is not a number here."""
    value = request.get(key)
    if value is None:
        return None
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise refused(f"`{key}` must be {what}", key)
    return value

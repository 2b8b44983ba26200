"""What a chat-completions body must look like before it reaches a pipeline.

The transport path trusts its caller (an OpenAI SDK builds the body); the gateway's callers are
anything on the network, so a malformed body is answered here with a 400 whose ``param`` names
the field (``messages[2].role``), as OpenAI answers it, instead of reaching the pipeline as a
quietly different request: ``"stream": "yes"`` must not become a non-streamed answer, a
``"temperature": "hot"`` must not become an unknown extra key the backend may ignore.

Only the shape is checked; values a backend may accept or refuse (a model's range of
``temperature``) are the backend's to judge.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from providers.abstractions.errors import InvalidRequestError

__all__ = ["ROLES", "check_chat_body", "invalid"]

ROLES: Final = frozenset({"system", "developer", "user", "assistant", "tool", "function"})
_NUMBERS: Final = ("temperature", "top_p", "frequency_penalty", "presence_penalty", "min_p")
_INTEGERS: Final = ("max_tokens", "max_completion_tokens", "n", "seed", "top_k", "top_logprobs")
_BOOLEANS: Final = ("stream", "parallel_tool_calls", "logprobs", "store")
_TOOL_CHOICES: Final = frozenset({"none", "auto", "required"})


def invalid(message: str, param: str | None) -> InvalidRequestError:
    """A 400 in OpenAI's terms: ``invalid_request_error`` naming ``param``."""
    return InvalidRequestError(message, status=400, param=param, error_type="invalid_request_error")


def check_chat_body(body: Any) -> dict[str, Any]:
    """``body`` if it is a chat-completions request; else ``InvalidRequestError``."""
    if not isinstance(body, dict):
        raise invalid("the request body must be a JSON object", None)
    _expect(body, "model", _is_text, "a non-empty string")
    for name in _NUMBERS:
        _expect(body, name, _is_number, "a number", optional=True)
    for name in _INTEGERS:
        _expect(body, name, _is_integer, "an integer", optional=True)
    for name in _BOOLEANS:
        _expect(body, name, _is_bool, "a boolean (true or false)", optional=True)
    _expect(body, "stream_options", _is_object, "an object", optional=True)
    options = body.get("stream_options")
    if isinstance(options, Mapping):
        _expect(options, "include_usage", _is_bool, "a boolean", "stream_options.", optional=True)
    _expect(body, "stop", _is_stop, "a string or a list of strings", optional=True)
    _expect(body, "response_format", _has_type, "an object with a `type`", optional=True)
    _expect(
        body, "tool_choice", _is_tool_choice, "none, auto, required or an object", optional=True
    )
    _check_tools(body.get("tools"))
    _check_messages(body.get("messages"))
    return body


def _check_messages(messages: Any) -> None:
    if not isinstance(messages, list) or not messages:
        raise invalid("`messages` must be a non-empty list of message objects", "messages")
    for index, message in enumerate(messages):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            raise invalid(f"`{where}` must be an object", where)
        role = message.get("role")
        if role not in ROLES:
            known = ", ".join(sorted(ROLES))
            raise invalid(f"`{where}.role` must be one of {known}", f"{where}.role")
        if not _is_content(message.get("content")):
            raise invalid(
                f"`{where}.content` must be a string, null or a list of typed parts",
                f"{where}.content",
            )
        calls = message.get("tool_calls")
        if calls is not None and not (isinstance(calls, list) and all(map(_is_call, calls))):
            raise invalid(
                f"`{where}.tool_calls` must be a list of function calls with a name",
                f"{where}.tool_calls",
            )
        if role == "tool":
            _expect(message, "tool_call_id", _is_text, "a non-empty string", f"{where}.")


def _check_tools(tools: Any) -> None:
    if tools is None:
        return
    if not isinstance(tools, list):
        raise invalid("`tools` must be a list", "tools")
    for index, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not _is_text(function.get("name")):
            raise invalid(
                f"`tools[{index}]` must be a function tool with a `function.name`",
                f"tools[{index}]",
            )


def _expect(
    body: Mapping[str, Any],
    name: str,
    test: Callable[[Any], bool],
    what: str,
    prefix: str = "",
    *,
    optional: bool = False,
) -> None:
    value = body.get(name)
    if (optional and value is None) or test(value):
        return
    raise invalid(f"`{prefix}{name}` must be {what}", f"{prefix}{name}")


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and bool(value)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_object(value: Any) -> bool:
    return isinstance(value, dict)


def _has_type(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("type"), str)


def _is_content(value: Any) -> bool:
    if value is None or isinstance(value, str):
        return True
    return isinstance(value, list) and all(_has_type(part) for part in value)


def _is_stop(value: Any) -> bool:
    return isinstance(value, str) or (
        isinstance(value, list) and all(isinstance(item, str) for item in value)
    )


def _is_tool_choice(value: Any) -> bool:
    return isinstance(value, dict) or (isinstance(value, str) and value in _TOOL_CHOICES)


def _is_call(call: Any) -> bool:
    function = call.get("function") if isinstance(call, dict) else None
    return isinstance(function, dict) and _is_text(function.get("name"))

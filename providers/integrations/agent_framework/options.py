"""Agent Framework's options TypedDict (and the per-call keyword arguments) as ``ChatOptions``.

What the stock ``OpenAIChatCompletionClient`` carries, carried the same way: ``extra_headers``
(an option or a ``client_kwargs`` entry) are HTTP headers, never body keys; ``tool_choice`` and
``allow_multiple_tool_calls`` go only with tools (an ``Agent`` always sets ``tool_choice:
"auto"``, which vLLM refuses without ``tools``); ``conversation_id`` is the session's routing
key; ``reasoning_effort`` (Chat Completions) and ``reasoning`` (the Responses client's
``{"effort", "summary"}``) become ``ChatOptions.reasoning``, mapped per model family.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from providers.abstractions import (
    ChatOptions,
    ChatResponseFormat,
    ChatToolMode,
    ReasoningOptions,
    ReasoningOutput,
)
from providers.abstractions.reasoning_options import EFFORT_WORDS
from providers.integrations._extras import missing_extra

try:
    from agent_framework import FunctionTool
    from agent_framework.exceptions import ChatClientInvalidRequestException
except ModuleNotFoundError as error:  # pragma: no cover - exercised in a subprocess
    raise missing_extra(
        error, "providers.integrations.agent_framework", "agent-framework"
    ) from error

__all__ = ["to_chat_options"]

_OPTION_FIELDS = {
    "model": "model_id",
    "temperature": "temperature",
    "top_p": "top_p",
    "max_tokens": "max_output_tokens",
    "seed": "seed",
    "frequency_penalty": "frequency_penalty",
    "presence_penalty": "presence_penalty",
}
_HANDLED = frozenset(
    {
        "extra_body",
        "extra_headers",
        "conversation_id",
        "stop",
        "tool_choice",
        "allow_multiple_tool_calls",
        "response_format",
        "reasoning_effort",
        "reasoning",
    }
)
_SDK_ONLY = {
    "timeout": "timeout is not a request option here: set Timeouts on the oaicompat client",
    "extra_query": "extra_query is not supported: OaicompatChatClient sends no query parameters",
}
"""The OpenAI SDK's own request arguments, which the stock client passes through and which
would otherwise land in the body as keys no server reads."""
_NOT_SENT = frozenset({"instructions", "metadata", "store", "tools"})
"""Options that are the framework's business (instructions become a system message here)."""
_SUMMARIES = frozenset({"auto", "concise", "detailed"})


def to_chat_options(
    options: Mapping[str, Any],
    *,
    headers: Mapping[str, Any] | None = None,
    conversation_id: str | None = None,
) -> ChatOptions:
    """``options`` as ``ChatOptions``. ``extra_body`` (this client's own option), ``logit_bias``,
    ``user`` and keys no field holds become extra body keys. ``headers`` (the call's
    ``extra_headers`` keyword) go over the option's; ``conversation_id`` (the run's session) is
    the routing key unless the options name one."""
    for key, refusal in _SDK_ONLY.items():
        if options.get(key) is not None:
            raise ChatClientInvalidRequestException(refusal)
    fields: dict[str, Any] = {}
    extras: dict[str, Any] = dict(options.get("extra_body") or {})
    for key, value in options.items():
        if value is None or key in _NOT_SENT or key in _HANDLED:
            continue
        if key in _OPTION_FIELDS:
            fields[_OPTION_FIELDS[key]] = value
        else:
            extras[key] = value
    if (stop := options.get("stop")) is not None:
        fields["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
    if (response_format := options.get("response_format")) is not None:
        fields["response_format"] = _response_format(response_format)
    tools = [_declaration(tool) for tool in options.get("tools") or ()]
    fields.update(_tool_fields(options, bool(tools)))
    return ChatOptions(
        **fields,
        tools=tools or None,
        additional_properties=extras,
        headers=_headers(options.get("extra_headers"), headers),
        conversation_id=options.get("conversation_id") or conversation_id,
        reasoning=_reasoning(options.get("reasoning_effort"), options.get("reasoning")),
    )


def _tool_fields(options: Mapping[str, Any], with_tools: bool) -> dict[str, Any]:
    """``tool_choice`` and ``allow_multiple_tool_calls`` when tools go with the request. Without
    tools, ``auto`` and ``none`` already hold and a parallel-calls flag has nothing to apply to
    (the stock client drops them too); ``required`` cannot be met, so it is refused."""
    choice = options.get("tool_choice")
    mode = _tool_mode(choice) if choice is not None else None
    if not with_tools:
        if mode is not None and mode.value == ChatToolMode.REQUIRED.value:
            raise ChatClientInvalidRequestException(
                "tool_choice requires a tool call, but the request offers no tools"
            )
        return {}
    fields: dict[str, Any] = {"tool_mode": mode}
    if (parallel := options.get("allow_multiple_tool_calls")) is not None:
        fields["allow_multiple_tool_calls"] = parallel
    return fields


def _headers(*sources: Mapping[str, Any] | None) -> dict[str, str] | None:
    """The headers of every source, later ones winning; a value that is not a string is refused
    (by name only: a header may hold a credential)."""
    merged: dict[str, str] = {}
    for source in sources:
        if source is None:
            continue
        if not isinstance(source, Mapping):
            raise ChatClientInvalidRequestException("extra_headers must be a mapping of strings")
        for name, value in source.items():
            if not isinstance(name, str) or not isinstance(value, str):
                raise ChatClientInvalidRequestException(
                    f"extra_headers: the header {str(name)[:60]!r} must be a string"
                )
            merged[name] = value
    return merged or None


def _reasoning(effort: Any, reasoning: Any) -> ReasoningOptions | None:
    """``reasoning_effort`` or the Responses client's ``reasoning`` mapping; a word oaicompat
    does not know is refused rather than sent for the server to ignore."""
    if reasoning is not None:
        if not isinstance(reasoning, Mapping) or set(reasoning) - {"effort", "summary"}:
            raise ChatClientInvalidRequestException(
                "reasoning takes a mapping with 'effort' and 'summary' only"
            )
        if effort is not None and reasoning.get("effort") not in (None, effort):
            raise ChatClientInvalidRequestException(
                "reasoning_effort and reasoning['effort'] disagree; set one"
            )
        effort = reasoning.get("effort", effort)
        summary = reasoning.get("summary")
    else:
        summary = None
    if effort is None and summary is None:
        return None
    if effort is not None and effort not in EFFORT_WORDS:
        known = ", ".join(EFFORT_WORDS)
        raise ChatClientInvalidRequestException(
            f"reasoning effort {str(effort)[:40]!r} is not one of {known}"
        )
    if summary is not None and summary not in _SUMMARIES:
        raise ChatClientInvalidRequestException(
            f"reasoning summary {str(summary)[:40]!r} is not one of auto, concise, detailed"
        )
    return ReasoningOptions(
        effort=EFFORT_WORDS[effort] if effort is not None else None,
        output=ReasoningOutput.SUMMARY if summary is not None else None,
    )


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

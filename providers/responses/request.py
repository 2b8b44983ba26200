"""Building the ``POST /v1/responses`` body from input items and ``ChatOptions``.

The Responses API names things differently from chat completions: ``max_output_tokens``, flat
tool declarations (``{"type": "function", "name": …}``, no nested ``function``), a flat named
``tool_choice``, ``text.format`` for the response format and ``reasoning.effort``. Only what is
set is written, as on the chat path. ``ChatOptions.additional_properties`` extend the body but
never replace a key the client sets (a nested dict is merged), with one translation: the chat
habit ``reasoning_effort`` becomes ``reasoning.effort``. ``ChatOptions.reasoning`` is mapped as
on the chat path (``providers.chat_completions.request.reasoning_body``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from capabilities.constraint_mapping import constraint_fields, merge_fields
from capabilities.option_verdicts import OptionPolicy, refusal, settle
from providers.abstractions.errors import UnsupportedOptionError
from providers.abstractions.options import (
    ChatOptions,
    ChatResponseFormat,
    ChatToolMode,
    ToolDeclaration,
)
from providers.backends import BackendProfile, profile_for
from providers.chat_completions.request import (
    check_encodable,
    merge_extra,
    reasoning_body,
    set_if_given,
)
from providers.chat_completions.stop_sequences import stops_applied_here
from providers.responses.items import Item

__all__ = ["build_responses_request"]

# Keys the client owns: additional properties may extend them, never replace them.
_CORE_KEYS = frozenset(
    {"model", "input", "instructions", "stream", "tools", "tool_choice", "previous_response_id"}
)


def build_responses_request(
    items: Sequence[Item],
    options: ChatOptions | None,
    *,
    instructions: str | None,
    model_id: str | None,
    stream: bool,
    store: bool | None = None,
    background: bool = False,
    previous_response_id: str | None = None,
    profile: BackendProfile | None = None,
    family: str | None = None,
    policy: OptionPolicy = "raise",
) -> dict[str, Any]:
    """The body; ``store`` ``None`` leaves the server's default (true on every server here).
    ``profile`` is the server's row, ``policy`` what to do with an option it cannot honour
    (``capabilities.option_verdicts``), as on the chat path; ``family`` the model family, which
    ``ChatOptions.reasoning`` is mapped for (``reasoning.effort`` for an effort word, the
    template switch in ``chat_template_kwargs``, which vLLM's and SGLang's Responses take too)."""
    options = options or ChatOptions()
    extras = _extras(options)
    body: dict[str, Any] = {}
    model = options.model_id or model_id
    if model:
        body["model"] = model
    if instructions is not None:
        body["instructions"] = instructions
    body["input"] = list(items)
    body["stream"] = stream
    if previous_response_id is not None:
        body["previous_response_id"] = previous_response_id
    if "store" not in extras and store is not None:
        body["store"] = store
    if background and "background" not in extras:
        body["background"] = True
    set_if_given(body, "temperature", options.temperature)
    set_if_given(body, "top_p", options.top_p)
    set_if_given(body, "top_k", options.top_k)  # vLLM and SGLang extension
    set_if_given(body, "max_output_tokens", options.max_output_tokens)
    if options.stop_sequences and not stops_applied_here(options, profile_for(profile), family):
        body["stop"] = list(options.stop_sequences)  # vLLM and SGLang extension
    set_if_given(body, "seed", options.seed)
    set_if_given(body, "frequency_penalty", options.frequency_penalty)
    set_if_given(body, "presence_penalty", options.presence_penalty)
    tools = options.tool_declarations()
    if tools:  # never `tools: []`, as on the chat path
        body["tools"] = [_tool(tool) for tool in tools]
        if options.allow_multiple_tool_calls is not None:
            body["parallel_tool_calls"] = options.allow_multiple_tool_calls
    if options.tool_mode is not None and tools:  # only with tools, as on the chat path
        body["tool_choice"] = _tool_choice(options.tool_mode)
    if options.response_format is not None:
        merge_fields(body, _format_fields(options.response_format, profile_for(profile), policy))
    for key, value in extras.items():
        merge_extra(body, key, value, _CORE_KEYS)
    if options.reasoning is not None:
        reasoning_body(body, options, profile_for(profile), family, policy, api="responses")
    check_encodable(body)  # a typed error before anything is sent, as on the chat path
    return body


def _extras(options: ChatOptions) -> dict[str, Any]:
    """The caller's extra keys, the chat habit ``reasoning_effort`` as ``reasoning.effort``."""
    extras = dict(options.additional_properties)
    effort = extras.pop("reasoning_effort", None)
    if effort is not None:
        reasoning = extras.get("reasoning")
        extras["reasoning"] = {"effort": effort, **(reasoning or {})}
    return extras


def _tool(tool: ToolDeclaration) -> dict[str, Any]:
    declaration: dict[str, Any] = {"type": "function", "name": tool.name}
    if tool.description:
        declaration["description"] = tool.description
    declaration["parameters"] = (
        dict(tool.parameters) if tool.parameters else {"type": "object", "properties": {}}
    )
    return declaration


def _tool_choice(mode: ChatToolMode) -> str | dict[str, Any]:
    if mode.function_name is not None:
        return {"type": "function", "name": mode.function_name}
    return mode.value


def _format_fields(
    response_format: ChatResponseFormat, profile: BackendProfile, policy: OptionPolicy
) -> dict[str, Any]:
    """``text.format`` for text and JSON. A regex, choice or grammar has no ``text.format``
    type, so it goes in the row's chat key where the server's Responses API reads that key too
    (vLLM's ``ResponsesRequest`` has ``structured_outputs``), and is refused elsewhere (SGLang's
    has no ``regex`` or ``ebnf``; an unknown key would be ignored): ``{}`` once settled."""
    if not response_format.is_constraint:
        return {"text": {"format": _text_format(response_format)}}
    if profile.responses_constraints:
        fields = constraint_fields(response_format, profile)
    else:
        fields = refusal(
            f"response_format.{response_format.kind}",
            profile.name,
            "the server's Responses API takes no regex, choice or grammar constraint (the chat "
            "client may: see its row's constraint keys)",
        )
    if isinstance(fields, UnsupportedOptionError):
        settle(fields, policy)
        return {}
    return fields


def _text_format(response_format: ChatResponseFormat) -> dict[str, Any]:
    """``text.format``: the chat ``json_schema`` object's keys, flattened into the format (the
    Responses API's shape); ``description`` and ``strict`` only when set, as on the chat path."""
    if response_format.kind == "json_schema":
        text_format: dict[str, Any] = {
            "type": "json_schema",
            "name": response_format.schema_name or "response",
        }
        if response_format.schema_description is not None:
            text_format["description"] = response_format.schema_description
        text_format["schema"] = dict(response_format.schema or {})
        if response_format.strict is not None:
            text_format["strict"] = response_format.strict
        return text_format
    return {"type": response_format.kind}

"""What ``ChatOaicompat`` sends: LangChain's settings read the way ``ChatOpenAI`` reads them.

A user switching from ``ChatOpenAI`` brings its settings along, so each one means here what it
means there, and lands in the ``ChatOptions`` slot that the pipeline honours, enforces or
refuses (never the JSON body by accident):

* precedence: the model's fields, then ``model_kwargs``, then the call's (or ``bind``'s)
  keyword arguments, each replacing the one before, as ``ChatOpenAI``'s request payload does;
* ``default_headers`` (a field) and ``extra_headers`` (a call argument) are HTTP headers of the
  request (``ChatOptions.headers``; the call's win), never body keys;
* ``extra_body`` (a field, a call argument or a ``model_kwargs`` key) is merged into the body at
  the top level, over the other keys, as the OpenAI SDK merges it; the merged keys are then read
  like any request key (``ChatOptions.from_openai``: typed fields where typed, the rest
  ``additional_properties``). A later ``extra_body`` replaces an earlier one whole, as in
  ``ChatOpenAI``;
* ``reasoning_effort`` and the Responses-style ``reasoning={"effort": …, "summary": …}`` are
  ``ChatOptions.reasoning`` (mapped per backend and model family, refused before sending where
  the family cannot honour it); a ``reasoning`` key this library cannot carry is refused;
* tools given as callables, ``BaseTool`` or pydantic classes in a call's ``tools`` (not only
  through ``bind_tools``) are converted as ``bind_tools`` converts them; ``tool_choice`` takes
  the same words (``"any"`` and ``True`` are ``"required"``);
* ``conversation_id`` (a call argument, which LangChain's ``thread_id`` fills) is
  ``ChatOptions.conversation_id``, the session-affinity key.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import Any

from langchain_core.utils.function_calling import convert_to_openai_tool

from providers.abstractions.errors import ConfigurationError, ConfigurationTypeError
from providers.abstractions.options import ChatOptions
from providers.abstractions.reasoning_options import ReasoningOptions, ReasoningOutput

__all__ = ["REQUEST_FIELDS", "carried_fields", "chat_options", "openai_tool_choice"]

REQUEST_FIELDS = frozenset(
    {
        "temperature",
        "top_p",
        "max_tokens",
        "max_completion_tokens",
        "seed",
        "stop",
        "presence_penalty",
        "frequency_penalty",
        "n",
        "logprobs",
        "top_logprobs",
        "logit_bias",
        "response_format",
        "parallel_tool_calls",
        "service_tier",
        "verbosity",
    }
)
"""``ChatOpenAI`` constructor fields that are request keys: given to ``ChatOaicompat``'s
constructor they are ``model_kwargs`` (every other unknown keyword is refused)."""

_REASONING_KEYS = frozenset({"effort", "summary"})


def chat_options(
    settings: Mapping[str, Any],
    call: Mapping[str, Any],
    stop: list[str] | None,
) -> ChatOptions:
    """The options of one request. ``settings``: the model's own (``model_kwargs`` merged over
    the ``extra_body``, ``default_headers``, ``reasoning_effort`` and ``reasoning`` fields, the
    ones set only); ``call``: the call's keyword arguments."""
    request = {**settings, **call}
    request.pop("stream", None)
    if stop:
        request["stop"] = stop
    headers = _headers(request.pop("default_headers", None), request.pop("extra_headers", None))
    conversation_id = request.pop("conversation_id", None)
    extra_body = request.pop("extra_body", None)
    if extra_body is not None:
        request.update(_extra_body(extra_body))
    reasoning = _reasoning(request)
    if "tools" in request:
        request["tools"] = _tools(request["tools"])
    if request.get("tool_choice") is not None:
        request["tool_choice"] = openai_tool_choice(request["tool_choice"])
    options = ChatOptions.from_openai(request)
    changes: dict[str, Any] = {}
    if headers:
        changes["headers"] = headers
    if conversation_id is not None:
        changes["conversation_id"] = conversation_id
    if reasoning is not None:
        effort = options.reasoning.effort if options.reasoning is not None else None
        changes["reasoning"] = ReasoningOptions(effort=effort, output=reasoning)
    return replace(options, **changes) if changes else options


def openai_tool_choice(choice: Any) -> Any:
    """LangChain's tool-choice words as OpenAI's: ``"any"`` and ``True`` are ``"required"``, a
    bare tool name names that tool."""
    if isinstance(choice, dict) or choice is None:
        return choice
    if choice is True or choice == "any":
        return "required"
    if choice in ("auto", "none", "required"):
        return str(choice)
    if isinstance(choice, str):
        return {"type": "function", "function": {"name": choice}}
    raise ConfigurationTypeError(
        f"tool_choice must be 'auto', 'none', 'required', 'any', True or a tool name, "
        f"not {type(choice).__name__}"
    )


def _headers(default: Any, extra: Any) -> dict[str, str] | None:
    merged: dict[str, str] = {}
    for name, given in (("default_headers", default), ("extra_headers", extra)):
        if given is None:
            continue
        if not isinstance(given, Mapping):
            raise ConfigurationTypeError(
                f"{name} must be a mapping of header names to str values, "
                f"not {type(given).__name__}"
            )
        merged.update(given)
    return merged or None


def _extra_body(extra_body: Any) -> Mapping[str, Any]:
    if not isinstance(extra_body, Mapping):
        raise ConfigurationTypeError(
            f"extra_body must be a mapping of request keys, not {type(extra_body).__name__}"
        )
    owned = sorted(key for key in ("messages", "stream") if key in extra_body)
    if owned:
        raise ConfigurationError(
            f"extra_body cannot set {', '.join(owned)}: ChatOaicompat writes "
            "the messages, and streams when asked to (astream, streaming=True)"
        )
    return extra_body


def _reasoning(request: dict[str, Any]) -> ReasoningOutput | None:
    """Reads ``reasoning`` (Responses-style) into ``request["reasoning_effort"]``; returns the
    output setting its ``summary`` asks for."""
    reasoning = request.pop("reasoning", None)
    if reasoning is None:
        return None
    if not isinstance(reasoning, Mapping):
        raise ConfigurationTypeError(
            f"reasoning must be a dict like {{'effort': 'low'}}, not {type(reasoning).__name__}"
        )
    unknown = sorted(set(reasoning) - _REASONING_KEYS)
    if unknown:
        raise ConfigurationError(
            f"reasoning keys {unknown} cannot be carried: ChatOaicompat maps "
            "reasoning={'effort': ..., 'summary': ...} to the chat request"
        )
    effort = reasoning.get("effort")
    if effort is not None:
        given = request.get("reasoning_effort")
        if given is not None and given != effort:
            raise ConfigurationError(
                f"reasoning_effort={given!r} and reasoning={{'effort': {effort!r}}} disagree"
            )
        request["reasoning_effort"] = effort
    return ReasoningOutput.SUMMARY if reasoning.get("summary") is not None else None


def _tools(tools: Any) -> Any:
    """Each tool in OpenAI's shape; a callable, ``BaseTool`` or pydantic class is converted
    as ``bind_tools`` converts it."""
    if not isinstance(tools, list | tuple):
        return tools
    converted = []
    for tool in tools:
        if isinstance(tool, Mapping):
            converted.append(tool)
            continue
        try:
            converted.append(convert_to_openai_tool(tool))
        except (ValueError, TypeError) as error:
            raise ConfigurationTypeError(
                f"tools: cannot make a tool of {type(tool).__name__} ({error}); give a "
                "function with type hints and a docstring, a LangChain BaseTool, a pydantic "
                "class or an OpenAI tool dict, or use bind_tools(...)"
            ) from error
    return converted


def carried_fields(known: Collection[str], values: dict[str, Any]) -> dict[str, Any]:
    """A ``ChatOaicompat``'s constructor ``values`` (``known``: its field names and aliases)
    with ``ChatOpenAI``'s request fields moved into ``model_kwargs``; another
    unknown keyword (``api_key``, ``base_url``…, the pipeline's to decide) is refused rather
    than ignored. A ``TypeError``: pydantic would quote the values (a key) in its error."""
    values = _headers_out_of_model_kwargs(values)
    unknown = [key for key in values if key not in known]
    if not unknown:
        return values
    refused = sorted(key for key in unknown if key not in REQUEST_FIELDS)
    if refused:
        raise TypeError(
            f"ChatOaicompat has no field {', '.join(refused)}: the pipeline (client=, "
            "from_config) holds the server, model and credentials; request keys go in "
            "model_kwargs or extra_body"
        )
    kwargs = dict(values.get("model_kwargs") or {})
    for key in unknown:
        if key in kwargs:
            raise TypeError(f"ChatOaicompat: {key} given both as a field and in model_kwargs")
        kwargs[key] = values[key]
    rest = {key: value for key, value in values.items() if key not in unknown}
    return {**rest, "model_kwargs": kwargs}


def _headers_out_of_model_kwargs(values: dict[str, Any]) -> dict[str, Any]:
    """``model_kwargs["extra_headers"]`` joins ``default_headers`` (over it, as it would on
    ``ChatOpenAI``), which is kept out of ``repr``, dumps and traces; ``model_kwargs`` is not."""
    kwargs = values.get("model_kwargs")
    if not isinstance(kwargs, Mapping) or "extra_headers" not in kwargs:
        return values
    rest = {key: value for key, value in kwargs.items() if key != "extra_headers"}
    headers, extra = values.get("default_headers"), kwargs["extra_headers"]
    if isinstance(headers, Mapping) and isinstance(extra, Mapping):
        extra = {**headers, **extra}
    return {**values, "model_kwargs": rest, "default_headers": extra}

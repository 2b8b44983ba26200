"""Structured output: a type's JSON Schema as the response format, and the answer as a value.

``ChatResponseFormat.for_type(T)`` and ``get_response_as(client, T, messages)`` (a method of
every client and layer too) are MEAI's ``ChatResponseFormat.ForJsonSchema<T>()`` and
``GetResponseAsync<T>``. Every client gets the method from this one function, so a wire client, a
layer and the failover client validate alike.

The schema is pydantic's (``TypeAdapter(T).json_schema()``), so any type pydantic validates can
be asked for, and the answer is validated by that same adapter: what the schema promised is what
the caller gets. Two adjustments make one schema serve every backend:

* a type whose JSON is not an object (``list[int]``, ``str``, an ``Enum``) is asked for as
  ``{"data": <value>}``, since OpenAI's strict mode wants an object at the top; the answer is
  unwrapped before it is returned;
* the schema is made *strict* where it can be, as OpenAI's strict mode requires: every object
  closed (``additionalProperties: false``) and every property required (an optional field is
  then sent, as null where its type allows), ``oneOf`` as ``anyOf``, a ``$ref`` with siblings
  inlined, defaults dropped (a required property's default never applies). Servers that
  constrain decoding with a grammar (llama.cpp, vLLM, SGLang) gain from it too: an open object
  lets a weak model invent keys. A schema that must stay open (a ``dict[str, int]`` field) is
  sent as pydantic wrote it, without ``strict``.

The answer is the text of the response's *final turn*: what follows its last tool result (all
of it when there is none), and of that the last message that has text. A response from the tool
loop holds every turn (as messages with ``tool`` messages between them, or, streamed and
coalesced with ``from_updates``, as one message with the results inline), and an earlier turn
may have written JSON beside its calls;
when the final turn has none (it spent its tokens reasoning and ended by ``length``), that
earlier JSON is not the answer, so the final turn without text is a ``StructuredOutputError``
(issue 32). A ``<think>`` block left in the text (a server that does not split reasoning) and a
Markdown fence around the JSON are stripped first. Invalid JSON and a schema mismatch raise
``StructuredOutputError`` carrying the raw text and the whole response.

Validation is pydantic's *strict* mode unless the format was sent with ``strict=False``: the
JSON's types must be the schema's (``true`` is not the integer 1, ``"20"`` not 20, ``[1, true]``
not a ``list[int]``). A strict schema promised exactly those types, and a schema that could not
be made strict (an open ``dict`` field, sent without the flag) still states them, so a value
pydantic's lax mode would coerce is a wrong value passed off as right. Only a caller who asked
for ``strict=False`` (``ChatResponseFormat.for_type(T, strict=False)``, then
``read_structured(T, response, strict=False)``) gets the lax mode, where such coercions are
accepted: they chose the schema the server does not hold the model to.
"""

from __future__ import annotations

import dataclasses
import re
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import ValidationError

from providers.abstractions.chat_response import ChatResponse
from providers.abstractions.contents import FunctionResultContent, TextContent
from providers.abstractions.errors import StructuredOutputError
from providers.abstractions.messages import ChatMessage
from providers.abstractions.open_values import ChatRole
from providers.abstractions.options import ChatOptions, ChatResponseFormat
from providers.abstractions.records import value_class
from providers.abstractions.type_schema import WRAPPER_KEY, TypePlan, name_of, plan_for
from providers.abstractions.typed_reading import read_as_type

if TYPE_CHECKING:
    from providers.abstractions.chat_client import ChatClient, ChatInput

__all__ = [
    "StructuredResponse",
    "answer_text",
    "format_of",
    "get_response_as",
    "read_answer",
    "read_structured",
]

T = TypeVar("T")


@value_class(frozen=True)
class StructuredResponse(Generic[T]):
    """What ``get_response_as`` returns: the validated ``value`` and the whole ``response``.

    The response is kept because an agent needs more than the value: usage for its budget, the
    assistant message for the conversation history, the reasoning, the finish reason. MEAI's
    ``ChatResponse<T>.Result`` is ``value`` here; a failure raises instead of a ``TryGet``.
    """

    value: T
    response: ChatResponse

    @property
    def text(self) -> str:
        """The JSON text the value was read from (fence and think block stripped)."""
        return answer_text(self.response)


def format_of(plan: TypePlan) -> ChatResponseFormat:
    """The ``json_schema`` response format a type's plan asks for."""
    return ChatResponseFormat.json_schema(
        plan.schema, plan.name, description=plan.description, strict=plan.strict
    )


async def get_response_as(
    client: ChatClient,
    output_type: type[T],
    messages: ChatInput,
    options: ChatOptions | None = None,
) -> StructuredResponse[T]:
    """``client.get_response`` asked for JSON of ``output_type``, read back as one.

    ``options.response_format`` is replaced by the type's format (as MEAI does); every other
    option is sent as given. Raises ``StructuredOutputError`` when the answer is not a value of
    the type, and whatever ``get_response`` raises.

    The wire clients leave this format's check to the type's adapter here
    (``providers.abstractions.typed_reading``): a wrong answer is one ``StructuredOutputError``,
    never a ``ConstraintViolationError`` first.
    """
    plan = plan_for(output_type, None, None, None)
    response_format = format_of(plan)
    asked = dataclasses.replace(options or ChatOptions(), response_format=response_format)
    with read_as_type(response_format):
        response = await client.get_response(messages, asked)
    value: T = read_answer(plan, output_type, response)
    return StructuredResponse(value, response)


def read_structured(
    output_type: type[T], response: ChatResponse, *, strict: bool | None = None
) -> T:
    """The value of ``output_type`` in ``response`` (one asked for with
    ``ChatResponseFormat.for_type(output_type, strict=strict)``): for a caller that made the
    request itself, streamed for instance, and coalesced it with ``ChatResponse.from_updates``.
    ``strict`` is the one given to ``for_type``: only ``False`` reads in pydantic's lax mode."""
    value: T = read_answer(plan_for(output_type, None, None, strict), output_type, response)
    return value


# --- reading the answer -------------------------------------------------------------------------

_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\r?\n(.*?)\r?\n?```", re.DOTALL)
_THINK = re.compile(r"\A\s*<think>.*?</think>", re.DOTALL)


def answer_text(response: ChatResponse) -> str:
    """The JSON text of ``response``: the last message with text of its final turn (module
    docstring; ``""`` when that turn has none), without a leading think block or a Markdown
    fence around it."""
    text = _final_text(response.messages)
    text = _THINK.sub("", text, count=1).strip()
    if not text.startswith(("{", "[")):  # inside JSON a fence is data, not markup
        fenced = _FENCE.search(text)
        if fenced is not None:
            text = fenced.group(1).strip()
    return text


def _final_text(messages: list[ChatMessage]) -> str:
    """The text of the last message with text after the last tool result (``""`` when there
    is none). A result is a ``FunctionResultContent`` or a ``tool`` message: a streamed loop
    coalesced by ``from_updates`` is one message whose contents are every turn in order, so
    the turn boundary is found among the contents, not only between messages."""
    for message in reversed(messages):
        if message.role == ChatRole.TOOL:
            return ""
        texts: list[str] = []
        ended = False
        for content in reversed(message.contents):
            if isinstance(content, FunctionResultContent):
                ended = True
                break
            if isinstance(content, TextContent):
                texts.append(content.text)
        text = "".join(reversed(texts))
        if text.strip():
            return text
        if ended:
            return ""
    return ""


def read_answer(plan: TypePlan, output_type: Any, response: ChatResponse) -> Any:
    """The value of ``output_type`` (read by ``plan``) in ``response``, or the
    ``StructuredOutputError`` carrying the text and the whole response."""
    text = answer_text(response)
    label = name_of(output_type)
    if not text:
        raise StructuredOutputError(
            f"the final answer has no text to read as {label} (finish: {response.finish_reason})",
            text=text,
            response=response,
            reason="invalid_json",
            problems=("the final answer has no text",),
        )
    try:
        value = plan.adapter.validate_json(text, strict=plan.strict is not False)
    except ValidationError as error:
        invalid_json = any(e["type"] == "json_invalid" for e in error.errors())
        problems = _problems(error, plan.wrapped)
        what = "is not JSON" if invalid_json else "does not match the schema of"
        cut = " (cut short by the length limit)" if response.finish_reason == "length" else ""
        raise StructuredOutputError(
            f"the answer {what} {label}{cut}: {'; '.join(problems[:5])}",
            text=text,
            response=response,
            reason="invalid_json" if invalid_json else "schema_mismatch",
            problems=problems,
        ) from None
    return getattr(value, WRAPPER_KEY) if plan.wrapped else value


def _problems(error: ValidationError, wrapped: bool) -> tuple[str, ...]:
    """One line per problem, located by path, never echoing the value (it may be long, and it
    is in ``text`` already)."""
    lines = []
    for problem in error.errors(include_url=False, include_input=False, include_context=False):
        path = list(problem["loc"])
        if wrapped and path[:1] == [WRAPPER_KEY]:
            path = path[1:]
        where = ".".join(str(part) for part in path)
        lines.append(f"{where}: {problem['msg']}" if where else problem["msg"])
    return tuple(lines)

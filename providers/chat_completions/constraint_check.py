"""The answer checked against the constraint it was asked under: never an unconstrained answer
passed off as a constrained one.

A server may drop a constraint without a word (vLLM ≥ 0.12 ignores ``guided_*``; an unknown key
is ignored everywhere; a proxy may strip one), so after the last token the text is checked:

* ``regex``: the whole text must match (``re.fullmatch``), whitespace included: the pattern is
  the caller's statement of the whole answer, and a caller who allows spaces writes them (``.``
  matches a newline too here, the lenient reading, so that no engine's reading of ``.`` makes
  a right answer a violation);
* ``choice``: the text must be one of the options, ignoring whitespace around both. Tokenizers
  and templates add or eat a leading space or a final newline (SentencePiece's word-initial
  space), which no server's choice grammar is meant to reject, while any other character is a
  different answer;
* ``json_object``: the text must be one JSON object; ``json_schema``: JSON obeying the schema
  (``schema_check``: the keywords constrained-decoding engines enforce).

A ``grammar`` is not checked: nothing here parses GBNF, EBNF or Lark, the server's own engine is
the only judge (the honours table says so). A turn that ends in tool calls is not checked (its
text, if any, is not the answer), nor a ``json_schema`` format that ``get_response_as`` reads
itself (``providers.abstractions.typed_reading``: it raises the one ``StructuredOutputError``).
A reasoning block left in the text (``<think>…</think>`` at the start, from a server that does
not split reasoning) is not part of the answer.

A violation raises ``ConstraintViolationError`` with the whole response, usage included: after a
whole answer is read, or once the last update of a stream has reached the caller. An answer cut
short by the length limit is still a violation; ``problem`` says it was cut.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from providers.abstractions.chat_response import ChatResponse
from providers.abstractions.contents import FunctionCallContent
from providers.abstractions.errors import ConstraintViolationError
from providers.abstractions.open_values import ChatFinishReason
from providers.abstractions.options import ChatResponseFormat
from providers.abstractions.typed_reading import read_by_caller
from providers.chat_completions.schema_check import schema_problems

if TYPE_CHECKING:
    from providers.abstractions.response_update import ChatResponseUpdate
    from providers.abstractions.update_runs import UpdateRuns
    from providers.chat_completions.option_enforcement import Enforcement

__all__ = ["check_response", "check_runs", "violation"]

_THINK = re.compile(r"\A\s*<think>.*?</think>", re.DOTALL)


async def check_runs(runs: UpdateRuns, plan: Enforcement) -> UpdateRuns:
    """Every run passed on as it comes; after the last, the answer they make is checked."""
    response_format = plan.response_format
    seen: list[ChatResponseUpdate] = []
    async for run in runs:
        seen.extend(run)
        yield run
    if response_format is not None:
        error = violation(ChatResponse.from_updates(seen), response_format, plan.backend)
        if error is not None:
            raise error


def check_response(response: ChatResponse, plan: Enforcement) -> ChatResponse:
    """``response`` unchanged when it obeys the plan's format; otherwise the typed error."""
    response_format = plan.response_format
    if response_format is not None:
        error = violation(response, response_format, plan.backend)
        if error is not None:
            raise error
    return response


def violation(
    response: ChatResponse, response_format: ChatResponseFormat, backend: str
) -> ConstraintViolationError | None:
    """The error for an answer that breaks ``response_format`` (``None``: it obeys, or there is
    nothing here to check; see the module docstring)."""
    kind = response_format.kind
    if kind == "json_schema" and read_by_caller(response_format):
        return None
    texts: list[str] = []
    for message in response.messages:
        if any(isinstance(content, FunctionCallContent) for content in message.contents):
            return None  # a tool-call turn: its text is not the answer
        texts.append(_THINK.sub("", message.text, count=1))
    text = "".join(texts)  # (one message per answer: the wire client reads one choice)
    problem = _problem(text, response_format)
    if problem is None:
        return None
    if response.finish_reason == ChatFinishReason.LENGTH:
        problem += " (the answer was cut short by the length limit)"
    return ConstraintViolationError(
        f"the answer does not obey the requested {kind} constraint ({backend}): {problem}",
        constraint=kind,
        problem=problem,
        response=response,
        backend=backend,
    )


def _problem(text: str, response_format: ChatResponseFormat) -> str | None:
    kind = response_format.kind
    if kind == "regex":
        if re.fullmatch(response_format.pattern or "", text, re.DOTALL) is not None:
            return None
        return "the text does not match the whole pattern"
    if kind == "choice":
        options = response_format.choices or ()
        if text.strip() in {option.strip() for option in options}:
            return None
        return f"the text is not one of the {len(options)} choices"
    if kind in ("json_object", "json_schema"):
        return _json_problem(text, response_format)
    return None


def _json_problem(text: str, response_format: ChatResponseFormat) -> str | None:
    if not text.strip():
        return "the answer has no text"
    try:
        value: Any = json.loads(text)
    except ValueError as error:
        where = getattr(error, "lineno", None), getattr(error, "colno", None)
        return f"the text is not JSON (line {where[0]}, column {where[1]})"
    except RecursionError:
        return None  # nested too deeply to read here: not judged
    if response_format.kind == "json_object":
        return None if isinstance(value, dict) else "the JSON is not an object"
    problems = schema_problems(value, response_format.schema or {})
    return "; ".join(problems) if problems else None

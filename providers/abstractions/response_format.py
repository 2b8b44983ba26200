"""``ChatResponseFormat``: what shape the answer must take.

Apart from ``options`` so that module stays about the request's settings; re-exported there.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from providers.abstractions.errors import ConfigurationError, ConfigurationTypeError
from providers.abstractions.records import value_class

__all__ = ["GRAMMAR_SYNTAXES", "ChatResponseFormat"]

GRAMMAR_SYNTAXES = ("gbnf", "ebnf", "lark")
"""The grammar languages ``ChatResponseFormat.grammar`` takes: llama.cpp's GBNF, the EBNF of
SGLang and of vLLM's xgrammar, and Lark (vLLM's guidance and outlines backends)."""


@value_class(frozen=True)
class ChatResponseFormat:
    """Plain text, any JSON object, JSON matching a schema, or text constrained by a regular
    expression, a list of choices or a grammar.

    ``strict`` and ``schema_description`` are written only when set: OpenAI enforces a schema
    only with ``strict: true`` (and then rejects a schema outside its strict subset), while
    llama.cpp, vLLM and SGLang constrain decoding to the schema either way.

    ``regex``, ``choice`` and ``grammar`` have no OpenAI form: each server spells them its own
    way (vLLM ``structured_outputs``, SGLang ``regex`` / ``ebnf``, llama.cpp ``grammar``), and
    the request builder writes the backend's key or refuses, before sending, a form the backend
    cannot take (``capabilities.constraint_mapping``). The answer is checked against the
    constraint after it arrives: a server that ignored it raises ``ConstraintViolationError``.
    """

    kind: str
    schema: Mapping[str, Any] | None = None
    schema_name: str | None = None
    schema_description: str | None = None
    strict: bool | None = None
    pattern: str | None = None
    """``regex``: the whole answer must match it (Python ``re.fullmatch`` semantics)."""
    choices: tuple[str, ...] | None = None
    """``choice``: the answer is exactly one of these strings."""
    grammar_text: str | None = None
    """``grammar``: the grammar's text, in ``syntax``."""
    syntax: str | None = None
    """``grammar``: one of ``GRAMMAR_SYNTAXES``."""

    TEXT: ClassVar[ChatResponseFormat]
    JSON: ClassVar[ChatResponseFormat]

    @classmethod
    def json_schema(
        cls,
        schema: Mapping[str, Any],
        name: str = "response",
        *,
        description: str | None = None,
        strict: bool | None = None,
    ) -> ChatResponseFormat:
        return cls("json_schema", schema, name, description, strict)

    @classmethod
    def regex(cls, pattern: str) -> ChatResponseFormat:
        """Text the whole of which matches ``pattern``. Checked as a regular expression here,
        so a pattern Python cannot compile fails before anything is sent."""
        if not isinstance(pattern, str) or not pattern:
            raise ConfigurationTypeError("ChatResponseFormat.regex needs a non-empty str pattern")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ConfigurationError(f"ChatResponseFormat.regex: invalid pattern ({exc})") from None
        return cls("regex", pattern=pattern)

    @classmethod
    def choice(cls, options: Sequence[str]) -> ChatResponseFormat:
        """Exactly one of ``options``, nothing around it."""
        if isinstance(options, str) or not all(isinstance(o, str) and o for o in options):
            raise ConfigurationTypeError(
                "ChatResponseFormat.choice needs a list of non-empty str options"
            )
        choices = tuple(dict.fromkeys(options))
        if not choices:
            raise ConfigurationError("ChatResponseFormat.choice needs at least one option")
        return cls("choice", choices=choices)

    @classmethod
    def grammar(cls, text: str, syntax: str = "gbnf") -> ChatResponseFormat:
        """Text the grammar ``text`` (in ``syntax``: ``gbnf``, ``ebnf`` or ``lark``) derives.
        A grammar cannot be checked here after the answer; the server's own parser is the
        only judge, so only a server row that takes the syntax gets it."""
        if not isinstance(text, str) or not text.strip():
            raise ConfigurationTypeError("ChatResponseFormat.grammar needs a non-empty str")
        if syntax not in GRAMMAR_SYNTAXES:
            raise ConfigurationError(
                f"ChatResponseFormat.grammar: syntax must be one of {', '.join(GRAMMAR_SYNTAXES)}"
            )
        return cls("grammar", grammar_text=text, syntax=syntax)

    @classmethod
    def for_type(
        cls,
        output_type: Any,
        *,
        name: str | None = None,
        description: str | None = None,
        strict: bool | None = None,
    ) -> ChatResponseFormat:
        """The ``json_schema`` format for values of ``output_type``: a pydantic model, a
        dataclass, a ``TypedDict`` or any type pydantic's ``TypeAdapter`` takes (``list[int]``,
        an ``Enum``, ``str``).

        Named after the type, described by its docstring. A type whose JSON is not an object
        is wrapped as ``{"data": <value>}`` (OpenAI's strict mode and several grammar engines
        want an object at the top); ``get_response_as`` unwraps it. ``strict`` ``None`` makes
        the schema strict where it can be (every object closed and every property required,
        optional ones as nullable) and sends ``strict: true`` then; ``False`` sends pydantic's
        schema as it is. See ``providers.abstractions.structured_output``.
        """
        # deferred: pydantic costs ~65 ms of cold import, paid only by structured output
        from providers.abstractions.type_schema import plan_for

        plan = plan_for(output_type, name, description, strict)
        return cls.json_schema(
            plan.schema, plan.name, description=plan.description, strict=plan.strict
        )

    def to_openai(self) -> dict[str, Any]:
        if self.kind == "json_schema":
            inner: dict[str, Any] = {"name": self.schema_name or "response"}
            if self.schema_description is not None:
                inner["description"] = self.schema_description
            inner["schema"] = self.schema
            if self.strict is not None:
                inner["strict"] = self.strict
            return {"type": "json_schema", "json_schema": inner}
        if self.kind == "regex":
            return {"type": "regex", "regex": self.pattern}
        if self.kind == "choice":
            return {"type": "choice", "choice": list(self.choices or ())}
        if self.kind == "grammar":
            return {"type": "grammar", "grammar": self.grammar_text, "syntax": self.syntax}
        return {"type": self.kind}

    @property
    def is_constraint(self) -> bool:
        """A ``regex``, ``choice`` or ``grammar`` format: no OpenAI form, routed per backend."""
        return self.kind in _CONSTRAINT_KINDS


_CONSTRAINT_KINDS = frozenset({"regex", "choice", "grammar"})
ChatResponseFormat.TEXT = ChatResponseFormat("text")
ChatResponseFormat.JSON = ChatResponseFormat("json_object")

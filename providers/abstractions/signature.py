"""A Python callable read as a tool: its JSON Schema, its description, and its argument checks.

This is the pydantic half of ``AIFunction.from_callable``, apart so that ``providers`` loads
pydantic only when a caller first makes a function from a callable (``functions.py`` imports
this module on first use).

The arguments a model sends are outside input, as a configuration file is: pydantic checks them
against the annotations before the function runs, so the function never sees a string where it
declared an ``int``, and the model is told exactly what was wrong instead of a traceback.

Each parameter becomes a field named by position whose alias is the parameter's name, so no
parameter name (``model_config``, ``schema``, ``_private``) can collide with pydantic's own.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from typing import Annotated, Any, get_origin

from pydantic import BaseModel, Field, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic_core import PydanticSerializationError, to_jsonable_python

from providers.abstractions.records import value_class

__all__ = ["ArgumentsBinding", "describe_docstring", "jsonable"]


@value_class(frozen=True)
class _Parameter:
    name: str
    field: str
    positional: bool  # positional-only: must be passed, in order, whether the model sent it
    default_is_field: bool  # its Python default is a pydantic ``Field``: pass pydantic's value


class ArgumentsBinding:
    """Checks a model's arguments against one signature and turns them into a call."""

    __slots__ = ("model", "parameters", "schema")

    def __init__(self, function: Callable[..., Any], docs: Mapping[str, str]) -> None:
        try:
            signature = inspect.signature(function, eval_str=True)
        except (NameError, TypeError, ValueError) as error:
            raise TypeError(f"cannot read the signature of {function!r}: {error}") from error
        fields: dict[str, Any] = {}
        parameters: list[_Parameter] = []
        for index, parameter in enumerate(signature.parameters.values()):
            if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
                raise TypeError(
                    f"{function!r}: *{parameter.name} cannot be described to a model; "
                    "give every argument a name"
                )
            field = f"p{index}"
            fields[field] = _field(parameter, docs.get(parameter.name))
            parameters.append(
                _Parameter(
                    parameter.name,
                    field,
                    parameter.kind is parameter.POSITIONAL_ONLY,
                    isinstance(parameter.default, FieldInfo),
                )
            )
        self.model: type[BaseModel] = create_model("arguments", **fields)
        self.parameters = tuple(parameters)
        self.schema = _without_titles(self.model.model_json_schema())

    def bind(self, arguments: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]] | str:
        """``(args, kwargs)`` for the call, or what is wrong with the arguments, one line.

        An argument the model left out is left out of the call too, so the function's own
        default applies (the very object, not a copy pydantic made of it).
        """
        try:
            values = self.model.model_validate(dict(arguments))
        except ValidationError as error:
            return _problems(error)
        sent = values.model_fields_set
        positional: list[Any] = []
        keywords: dict[str, Any] = {}
        for parameter in self.parameters:
            value = getattr(values, parameter.field)
            if parameter.positional:
                positional.append(value)
            elif parameter.field in sent or parameter.default_is_field:
                keywords[parameter.name] = value
        return positional, keywords


def _field(parameter: inspect.Parameter, doc: str | None) -> tuple[Any, FieldInfo]:
    annotation = Any if parameter.annotation is parameter.empty else parameter.annotation
    default = parameter.default
    if isinstance(default, FieldInfo):
        # `def f(x: int = Field(3, description=...))`, validate_call's spelling: its constraints
        # and default join the annotation, where pydantic merges them.
        annotation = Annotated[annotation, default]
        default = ...
    elif default is parameter.empty:
        default = ...
    # A description in the annotation (`Annotated[str, Field(description=...)]`) is the more
    # deliberate one: the docstring's only fills a gap.
    if doc is None or _describes_itself(annotation):
        return annotation, Field(default, alias=parameter.name)
    return annotation, Field(default, alias=parameter.name, description=doc)


def _describes_itself(annotation: Any) -> bool:
    if get_origin(annotation) is not Annotated:
        return False
    return any(isinstance(meta, FieldInfo) and meta.description for meta in annotation.__metadata__)


def _without_titles(schema: dict[str, Any]) -> dict[str, Any]:
    """pydantic titles the object and each property after their names: tokens in every request
    that tell the model nothing. Nested models (in ``$defs``) keep theirs, which do."""
    schema.pop("title", None)
    for property_schema in schema.get("properties", {}).values():
        if isinstance(property_schema, dict):
            property_schema.pop("title", None)
    return schema


def _problems(error: ValidationError) -> str:
    """One line per problem, located by the argument's name; no pydantic URL (noise to a
    model) and no echo of the input (the model has it)."""
    parts = []
    for problem in error.errors(include_url=False):
        where = ".".join(str(part) for part in problem["loc"]) or "arguments"
        parts.append(f"{where}: {problem['msg']}")
    return "; ".join(parts)


def jsonable(value: Any) -> Any:
    """What a function returned, in the form the request builder writes as JSON: a pydantic
    model or a dataclass becomes its fields rather than its ``repr``. A value pydantic cannot
    convert is returned as it is (the request builder then writes its ``str``)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    try:
        return to_jsonable_python(value)
    except PydanticSerializationError:
        return value


# --- docstrings --------------------------------------------------------------------------------

_ARGUMENT_SECTIONS = {"args", "arguments", "parameters", "params", "keyword args"}
_SECTION = re.compile(
    r"(args|arguments|parameters|params|keyword args|keyword arguments|returns?|yields?"
    r"|raises|examples?|notes?|see also|warnings?|attributes|todo)\s*:",
    re.IGNORECASE,
)
_GOOGLE_ITEM = re.compile(r"\*{0,2}(\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)")
_REST_FIELD = re.compile(r":(\w+)((?:\s+[^\s:]+)*)\s*:\s*(.*)")


def describe_docstring(doc: str | None) -> tuple[str | None, dict[str, str]]:
    """``(summary, {parameter: description})`` from a Google-style (``Args:``) or reST-style
    (``:param name:``) docstring. The summary is everything before the first section, one line
    per paragraph; anything the parser does not recognise stays out of the descriptions rather
    than being guessed at."""
    if not doc:
        return None, {}
    summary: list[str] = []
    params: dict[str, str] = {}
    section: str | None = None  # None: still in the summary
    current: str | None = None  # the parameter whose description continues
    item_indent: int | None = None
    for line in inspect.cleandoc(doc).splitlines():
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        header = _SECTION.fullmatch(stripped) if indent == 0 else None
        field = _REST_FIELD.fullmatch(stripped) if stripped.startswith(":") else None
        if header:
            name = header.group(1).lower()
            section = "args" if name in _ARGUMENT_SECTIONS else "other"
            current, item_indent = None, None
        elif field:
            section, current = "rest", None
            words = field.group(2).split()  # `:param city:` or `:param str city:`
            if field.group(1) in ("param", "parameter", "arg", "argument") and words:
                current = words[-1]
                params[current] = field.group(3).strip()
        elif section is None:
            summary.append(stripped)
        elif section == "args" and stripped:
            item = _GOOGLE_ITEM.fullmatch(stripped)
            if item and (item_indent is None or indent <= item_indent):
                item_indent, current = indent, item.group(1)
                params[current] = item.group(2).strip()
            elif current is not None:
                params[current] = f"{params[current]} {stripped}".strip()
        elif section == "rest" and stripped and indent > 0 and current is not None:
            params[current] = f"{params[current]} {stripped}".strip()
    return _paragraphs(summary), {name: text for name, text in params.items() if text}


def _paragraphs(lines: list[str]) -> str | None:
    paragraphs = " ".join(line or "\n\n" for line in lines).split("\n\n")
    text = "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())
    return text or None

"""The JSON Schema of a Python type, and the adapter that reads answers back as that type.

The pydantic half of structured output (``structured_output`` has the rest and its account),
apart so that ``ChatResponseFormat.for_type`` can reach it without ``options`` and
``structured_output`` importing each other. Loaded on first use: pydantic costs ~65 ms of cold
import that a caller without structured output never pays.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, PydanticUserError, TypeAdapter, create_model

from providers.abstractions.errors import ConfigurationError
from providers.abstractions.records import value_class

__all__ = ["WRAPPER_KEY", "TypePlan", "name_of", "plan_for"]

WRAPPER_KEY = "data"
"""The one property a non-object value is wrapped in (MEAI uses the same name)."""


@value_class(frozen=True)
class TypePlan:
    """How one type is asked for (``schema``, ``name``, ``description``, ``strict``: the
    ``json_schema`` format's fields) and read back (``adapter``, unwrapping when ``wrapped``)."""

    schema: dict[str, Any]
    name: str
    description: str | None
    strict: bool | None
    adapter: TypeAdapter[Any]
    wrapped: bool


_PLANS: dict[tuple[Any, ...], TypePlan] = {}
_PLAN_CACHE_SIZE = 256


def plan_for(
    output_type: Any, name: str | None, description: str | None, strict: bool | None
) -> TypePlan:
    """The plan for a type, cached: building a ``TypeAdapter`` takes milliseconds."""
    key = (output_type, name, description, strict)
    try:
        cached = _PLANS.get(key)
    except TypeError:  # an unhashable annotation (Annotated with a dict): build it each time
        return _build_plan(output_type, name, description, strict)
    if cached is None:
        cached = _build_plan(output_type, name, description, strict)
        if len(_PLANS) >= _PLAN_CACHE_SIZE:  # types made on the fly: start over, never grow
            _PLANS.clear()
        _PLANS[key] = cached
    return cached


def _build_plan(
    output_type: Any, name: str | None, description: str | None, strict: bool | None
) -> TypePlan:
    label = name or name_of(output_type)
    try:
        adapter: TypeAdapter[Any] = TypeAdapter(output_type)
        schema = adapter.json_schema()
    except PydanticUserError as error:  # no schema for it (a plain class, typing.TypedDict < 3.12)
        first_line = error.message.splitlines()[0] if error.message else type(error).__name__
        raise ConfigurationError(f"no JSON Schema for {label}: {first_line}") from error
    wrapped = not _is_object(schema)
    if wrapped:
        field: tuple[Any, Any] = (output_type, ...)
        wrapper: type[BaseModel] = create_model(label, data=field)  # WRAPPER_KEY
        adapter = TypeAdapter(wrapper)
        schema = adapter.json_schema()
    about = description if description is not None else schema.get("description")
    strict_schema = None if strict is False else _strict(schema)
    if strict and strict_schema is None:
        raise ConfigurationError(
            f"the schema of {label} cannot be strict: an object in it must stay open "
            "(a dict field); pass strict=None to send it without strict"
        )
    chosen = False if strict is False else (True if strict_schema is not None else None)
    return TypePlan(strict_schema or schema, label, about, chosen, adapter, wrapped)


def _is_object(schema: Mapping[str, Any]) -> bool:
    target = _resolve(schema, schema)
    return target.get("type") == "object" and "anyOf" not in target and "oneOf" not in target


def _resolve(node: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        found = root.get("$defs", {}).get(ref.removeprefix("#/$defs/"))
        if isinstance(found, Mapping):
            return found
    return node


_NAME_CHARACTERS = re.compile(r"[^A-Za-z0-9_-]+")


def name_of(output_type: Any) -> str:
    """The schema's name: the type's name, ``list_int`` for ``list[int]``, in the characters
    OpenAI accepts (at most 64 of ``[A-Za-z0-9_-]``)."""
    origin = get_origin(output_type)
    if origin is Annotated:
        return name_of(get_args(output_type)[0])
    if origin is Union or origin is UnionType:
        raw = "_or_".join(name_of(arg) for arg in get_args(output_type))
    elif origin is not None:
        parts = [name_of(origin), *(name_of(arg) for arg in get_args(output_type))]
        raw = "_".join(parts)
    elif output_type is type(None):
        raw = "None"
    else:
        raw = getattr(output_type, "__name__", None) or str(output_type)
    return _NAME_CHARACTERS.sub("_", raw).strip("_")[:64] or "response"


# --- strict mode --------------------------------------------------------------------------------

_MAX_INLINE_DEPTH = 32
_NOT_SCHEMAS = frozenset({"$defs", "enum", "const", "examples", "required"})
"""Keys whose values are data, not schemas (``$defs`` is walked once, from the root)."""


class _Open(Exception):
    """The schema has an object that must stay open: it cannot be strict."""


def _strict(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """A strict copy of ``schema`` (see the module doc), or ``None`` when it cannot be one."""
    root = copy.deepcopy(dict(schema))
    try:
        _close(root, root, 0)
        for definition in root.get("$defs", {}).values():
            _close(definition, root, 0)
    except _Open:
        return None
    return root


def _close(node: Any, root: dict[str, Any], depth: int) -> None:
    if isinstance(node, list):
        for item in node:
            _close(item, root, depth)
        return
    if not isinstance(node, dict):
        return
    ref = node.get("$ref")
    if isinstance(ref, str) and len(node) > 1:
        # OpenAI's strict mode takes no keyword beside $ref: inline the definition.
        if depth >= _MAX_INLINE_DEPTH:
            raise _Open
        target = _resolve(node, root)
        if target is node:
            raise _Open
        del node["$ref"]
        for key, value in copy.deepcopy(dict(target)).items():
            node.setdefault(key, value)
        depth += 1
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf")
    node.pop("discriminator", None)
    node.pop("default", None)
    if node.get("type") == "object" or "properties" in node:
        if node.get("additionalProperties", False) is not False or "patternProperties" in node:
            raise _Open
        properties = node.setdefault("properties", {})
        node["additionalProperties"] = False
        node["required"] = list(properties)
    for key, value in node.items():
        if key == "properties" and isinstance(value, dict):
            for property_schema in value.values():
                _close(property_schema, root, depth)
        elif key not in _NOT_SCHEMAS and isinstance(value, dict | list):
            _close(value, root, depth)

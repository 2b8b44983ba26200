"""Typing qwen3_coder parameter values, which arrive as raw text, by the tool's JSON Schema.

Follows vLLM's newer parser engine (docs/formats.md §2, rule set B), because its rules never
change what the model wrote into something it did not mean:

* no schema for the parameter (unknown parameter, or no tools given): the text stays a string;
* the schema's types are collected from ``type`` (string or list), ``enum`` values and
  ``anyOf``/``oneOf``/``allOf``, with aliases normalised (``int64`` is integer, ``dict`` object…);
* ``null`` becomes ``None`` only where the schema allows null; then a string type wins (``"1"``
  for a string id stays ``"1"``); then integer, number (whole numbers become ``int``, non-finite
  values are refused), boolean (``true/1/false/0``), object, array are tried in that order;
* objects and arrays are JSON, or Python literals (``{'a': 1}``) as the older parsers allowed;
* nothing matching the schema: the text is kept as a string (rule set A turned any non-``true``
  into ``False`` for booleans, which silently inverts a mistyped flag);
* converted objects and arrays are walked with the nested ``properties``/``items`` schemas, so a
  string nested where an integer is declared is converted the same way.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from providers.text_tool_calls.literals import literal

__all__ = ["convert"]

_ALIASES = {
    "string": "string", "str": "string", "text": "string", "varchar": "string",
    "char": "string", "enum": "string",
    "integer": "integer", "int": "integer", "int32": "integer", "int64": "integer",
    "uint": "integer", "long": "integer", "short": "integer", "unsigned": "integer",
    "number": "number", "num": "number", "float": "number", "double": "number",
    "boolean": "boolean", "bool": "boolean", "binary": "boolean",
    "object": "object", "dict": "object", "map": "object",
    "array": "array", "arr": "array", "list": "array", "tuple": "array",
    "null": "null", "none": "null",
}  # fmt: skip
_ORDER = ("integer", "number", "boolean", "object", "array")
_BOOLEANS = {"true": True, "1": True, "false": False, "0": False}


def _types(schema: Mapping[str, Any]) -> set[str]:
    found: set[str] = set()
    declared = schema.get("type")
    for name in declared if isinstance(declared, list) else [declared]:
        if isinstance(name, str):
            alias = _ALIASES.get(name.lower())
            if alias is None and name.lower().startswith(("int", "uint")):
                alias = "integer"
            if alias is not None:
                found.add(alias)
    enum = schema.get("enum")
    if isinstance(enum, list):
        found |= {_json_type(value) for value in enum}
    for key in ("anyOf", "oneOf", "allOf"):
        options = schema.get(key)
        if isinstance(options, list):
            for option in options:
                if isinstance(option, Mapping):
                    found |= _types(option)
    return found


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "string"


def _number(text: str) -> int | float | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        if value.is_integer():
            return int(value)
    return value


def _structured(text: str, kind: type) -> Any:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        try:
            value = literal(text)
        except ValueError:
            return None
    return value if isinstance(value, kind) else None


def _try(kind: str, text: str) -> tuple[bool, Any]:
    if kind == "integer":
        number = _number(text)
        return isinstance(number, int), number
    if kind == "number":
        number = _number(text)
        return number is not None, number
    if kind == "boolean":
        flag = _BOOLEANS.get(text.lower())
        return flag is not None, flag
    value = _structured(text, dict if kind == "object" else list)
    return value is not None, value


def convert(raw: str, schema: Mapping[str, Any] | None) -> Any:
    """The value of one parameter written as ``raw`` text; see the module docstring."""
    if schema is None:
        return raw
    types = _types(schema)
    text = raw.strip()
    if "null" in types and text.lower() == "null":
        return None
    if "string" in types or not types:
        return raw
    for kind in _ORDER:
        if kind in types:
            ok, value = _try(kind, text)
            if ok:
                return _nested(value, schema)
    return raw


def _nested(value: Any, schema: Mapping[str, Any]) -> Any:
    """Strings inside a converted object or array, converted by their own schemas."""
    if isinstance(value, dict):
        properties = schema.get("properties")
        if isinstance(properties, Mapping):
            return {key: _child(item, properties.get(key)) for key, item in value.items()}
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            return [_child(item, items) for item in value]
    return value


def _child(value: Any, schema: Any) -> Any:
    if not isinstance(schema, Mapping):
        return value
    if isinstance(value, str):
        return convert(value, schema)
    return _nested(value, schema)

"""Does a JSON value obey a JSON Schema? The keywords constrained-decoding engines enforce, and
nothing else.

After a ``json_schema`` answer the client asks one question: did the server hold the model to
the schema? A server that did produced a value these keywords accept, so checking them catches
a server that ignored the schema (or lost it on the way) without a general validator: llama.cpp's
``json-schema-to-grammar``, xgrammar and outlines enforce ``type``, ``properties``, ``required``,
``additionalProperties``, ``items`` / ``prefixItems``, ``enum`` / ``const``, ``anyOf`` / ``oneOf`` /
``allOf``, local ``$ref``, string lengths and ``pattern``, numeric bounds and array lengths.
A keyword outside that list (``format``, ``if`` / ``then``, ``dependentSchemas``, remote
references) is not checked: an engine may not enforce it either, and a check that fails an
answer the server rightly produced would be worse than none. Why not the ``jsonschema``
package: it validates the whole specification, which this question does not need, and brings
four dependencies (one of them compiled) to every install for a check on some answers.

Problems name where (``items.2.name``) and what, never the value itself.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["schema_problems"]

_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    # JSON has one number type: 1.0 is an integer to a schema
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and math.isfinite(v) and v.is_integer())
    ),
}


def schema_problems(value: Any, schema: Any, *, limit: int = 5) -> list[str]:
    """At most ``limit`` problems of ``value`` (parsed JSON) under ``schema``; ``[]``: it obeys
    every checked keyword. A value nested too deeply to walk is not judged (``[]``)."""
    walk = _Walk(schema, limit)
    try:
        walk.check(value, schema, "")
    except RecursionError:
        return []
    return walk.problems[:limit]


def _where(path: str) -> str:
    return path or "the answer"


def _at(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


class _Walk:
    """One validation: the root (for ``$ref``) and the problems found so far."""

    def __init__(self, root: Any, limit: int) -> None:
        self.root = root
        self.limit = limit
        self.problems: list[str] = []

    def add(self, path: str, problem: str) -> None:
        self.problems.append(f"{_where(path)}: {problem}")

    def passes(self, value: Any, schema: Any, path: str) -> bool:
        """Does ``value`` obey ``schema`` (for ``anyOf`` and kin: problems not kept)?"""
        trial = _Walk(self.root, 1)
        trial.check(value, schema, path)
        return not trial.problems

    def check(self, value: Any, schema: Any, path: str) -> None:
        if len(self.problems) >= self.limit:
            return
        if schema is False:
            self.add(path, "no value is allowed here")
            return
        if not isinstance(schema, Mapping):
            return  # true, or not a schema: anything goes
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = _resolve(self.root, ref)
            if target is not None:
                self.check(value, target, path)
        if not self.type_ok(value, schema, path):
            return
        self.choices(value, schema, path)
        self.combinators(value, schema, path)
        if isinstance(value, dict):
            self.object(value, schema, path)
        elif isinstance(value, list):
            self.array(value, schema, path)
        elif isinstance(value, str):
            self.string(value, schema, path)
        elif _is_number(value):
            self.number(value, schema, path)

    def type_ok(self, value: Any, schema: Mapping[str, Any], path: str) -> bool:
        wanted = schema.get("type")
        if wanted is None:
            return True
        names = [wanted] if isinstance(wanted, str) else list(wanted)
        known = [name for name in names if name in _TYPES]
        if not known or any(_TYPES[name](value) for name in known):
            return True
        self.add(path, f"expected {' or '.join(known)}, got {_json_type(value)}")
        return False

    def choices(self, value: Any, schema: Mapping[str, Any], path: str) -> None:
        if "const" in schema and not _same(value, schema["const"]):
            self.add(path, "not the constant the schema requires")
        enum = schema.get("enum")
        if isinstance(enum, list) and not any(_same(value, option) for option in enum):
            self.add(path, f"not one of the {len(enum)} values the schema allows")

    def combinators(self, value: Any, schema: Mapping[str, Any], path: str) -> None:
        for sub in schema.get("allOf") or ():
            self.check(value, sub, path)
        any_of = schema.get("anyOf")
        if (
            isinstance(any_of, list)
            and any_of
            and not any(self.passes(value, sub, path) for sub in any_of)
        ):
            self.add(path, "matches none of the anyOf alternatives")
        one_of = schema.get("oneOf")
        if isinstance(one_of, list) and one_of:
            matched = sum(1 for sub in one_of if self.passes(value, sub, path))
            if matched != 1:
                self.add(path, f"matches {matched} of the oneOf alternatives, not 1")
        if "not" in schema and self.passes(value, schema["not"], path):
            self.add(path, "matches the schema under not")

    def object(self, value: dict[str, Any], schema: Mapping[str, Any], path: str) -> None:
        for name in schema.get("required") or ():
            if isinstance(name, str) and name not in value:
                self.add(path, f"missing the required property {name!r}")
        properties = schema.get("properties")
        properties = properties if isinstance(properties, Mapping) else {}
        patterns = schema.get("patternProperties")
        patterns = patterns if isinstance(patterns, Mapping) else {}
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            where = _at(path, key)
            known = key in properties
            if known:
                self.check(item, properties[key], where)
            for pattern, sub in patterns.items():
                if _search(pattern, key):
                    known = True
                    self.check(item, sub, where)
            if known:
                continue
            if extra is False:
                self.add(path, "has a property the schema does not allow")
            else:
                self.check(item, extra, where)
        _count(self, path, len(value), schema, ("minProperties", "maxProperties", "properties"))

    def array(self, value: list[Any], schema: Mapping[str, Any], path: str) -> None:
        prefix = schema.get("prefixItems")
        items = schema.get("items")
        if isinstance(items, list):  # draft 4-7 tuple form
            prefix, items = items, schema.get("additionalItems", True)
        prefix = prefix if isinstance(prefix, list) else []
        for index, item in enumerate(value):
            sub = prefix[index] if index < len(prefix) else items
            if sub is not None:
                self.check(item, sub, _at(path, index))
        _count(self, path, len(value), schema, ("minItems", "maxItems", "items"))
        if schema.get("uniqueItems") is True and any(
            _same(item, other) for i, item in enumerate(value) for other in value[:i]
        ):
            self.add(path, "items are not unique")

    def string(self, value: str, schema: Mapping[str, Any], path: str) -> None:
        _count(self, path, len(value), schema, ("minLength", "maxLength", "characters"))
        pattern = schema.get("pattern")
        if isinstance(pattern, str) and not _search(pattern, value):
            self.add(path, "does not match the schema's pattern")

    def number(self, value: float, schema: Mapping[str, Any], path: str) -> None:
        for keyword, says in _BOUNDS:
            bound = schema.get(keyword)
            if isinstance(bound, bool) or not isinstance(bound, int | float):
                continue  # (draft 4's boolean exclusive bounds: not checked)
            if not _holds(keyword, value, bound):
                self.add(path, f"{says} the {keyword} {bound}")


_BOUNDS = (
    ("minimum", "less than"),
    ("maximum", "more than"),
    ("exclusiveMinimum", "not more than"),
    ("exclusiveMaximum", "not less than"),
)


def _holds(keyword: str, value: float, bound: float) -> bool:
    if keyword == "minimum":
        return value >= bound
    if keyword == "maximum":
        return value <= bound
    if keyword == "exclusiveMinimum":
        return value > bound
    return value < bound


def _count(
    walk: _Walk, path: str, size: int, schema: Mapping[str, Any], keys: tuple[str, str, str]
) -> None:
    """``size`` within the schema's ``keys`` (low keyword, high keyword, unit of the count)."""
    low_key, high_key, unit = keys
    low, high = schema.get(low_key), schema.get(high_key)
    if isinstance(low, int) and not isinstance(low, bool) and size < low:
        walk.add(path, f"{size} {unit}, fewer than {low}")
    if isinstance(high, int) and not isinstance(high, bool) and size > high:
        walk.add(path, f"{size} {unit}, more than {high}")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _resolve(root: Any, ref: str) -> Any:
    """A local reference (``#``, ``#/$defs/Name``); ``None`` for any other (not checked)."""
    if not ref.startswith("#"):
        return None
    node = root
    for raw in ref[1:].split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def _json_type(value: Any) -> str:
    for name in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _TYPES[name](value):
            return name
    return type(value).__name__


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _search(pattern: Any, text: str) -> bool:
    """``pattern`` found in ``text`` (JSON Schema patterns are not anchored); a pattern Python
    cannot read passes (its engine's dialect, not checked here)."""
    if not isinstance(pattern, str):
        return True
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return True

"""Python literals as JSON values, for pythonic calls and for qwen3_coder's ``{'a': 1}`` values.

Model output is untrusted, so nothing is evaluated: ``ast.literal_eval`` accepts only literal
syntax, and the result is then narrowed to what JSON can carry. A tuple becomes a list (the same
sequence); sets, bytes, complex numbers, non-string keys and non-finite floats are refused rather
than guessed at, because a tool must receive what the model meant or nothing.
"""

from __future__ import annotations

import ast
import math
from typing import Any

__all__ = ["json_value", "literal"]


def json_value(value: Any) -> Any:
    """``value`` with tuples as lists; ``ValueError`` if it has no JSON equivalent."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value} is not a finite number")
        return value
    if isinstance(value, list | tuple):
        return [json_value(item) for item in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ValueError(f"key {key!r} is not a string")
            out[key] = json_value(item)
        return out
    raise ValueError(f"{type(value).__name__} has no JSON equivalent")


def literal(source: str | ast.expr) -> Any:
    """A Python literal (text or parsed node) as a JSON value; ``ValueError`` otherwise."""
    try:
        value = ast.literal_eval(source)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        # The message would name an AST node by its address: keep the reason reproducible.
        raise ValueError("not a Python literal (a name, call or expression)") from None
    return json_value(value)

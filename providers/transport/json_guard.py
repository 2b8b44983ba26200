"""JSON from a server that nests too deep, or holds the wrong types: a typed error, not a crash.

Python's ``json`` recurses once per level. Past the interpreter's recursion limit it raises
``RecursionError`` (not ``ValueError``), and a document just under it parses but breaks whoever
walks it next at a deeper stack (``json.dumps``, ``copy``, ``repr``). So a payload is refused
past ``Limits.max_json_depth``. Measuring depth costs a walk, so it is measured only when the
text could be that deep: nesting ``n`` levels takes at least ``2n`` characters and ``n``
opening brackets, both counted in C, and a chunk of a healthy stream has neither.

The normalisers read the protocol's types without checking each (``choices`` is a list, a
delta a mapping): checking would cost every chunk, and a payload that breaks the assumption
raises one of ``MALFORMED`` instead. The error mapping (``providers.transport.error_mapping``)
turns those into ``InvalidResponseError`` with the partial response, which costs nothing until
it happens.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from providers.abstractions.errors import InvalidResponseError, ResponseTooLargeError
from providers.abstractions.server_json import mark_lone_surrogates, nests_deeper

__all__ = [
    "MALFORMED",
    "load_object",
    "loads_within",
    "malformed",
    "mark_lone_surrogates",
    "nests_deeper",
    "too_deep",
]

MALFORMED: tuple[type[Exception], ...] = (
    RecursionError,
    TypeError,
    AttributeError,
    LookupError,
    ValueError,
    ArithmeticError,
)
"""What normalising a payload of unexpected types raises (``choices: 5`` is not iterable)."""


def too_deep(
    limit: int, what: str = "the JSON", backend: str | None = None
) -> ResponseTooLargeError:
    return ResponseTooLargeError(
        f"{what} nests deeper than limits.max_json_depth ({limit})",
        limit="max_json_depth",
        backend=backend,
    )


def malformed(exc: BaseException, backend: str | None = None) -> InvalidResponseError:
    """The typed error for one of ``MALFORMED`` raised while reading a server's payload."""
    if isinstance(exc, RecursionError):
        return ResponseTooLargeError(
            "a payload nests deeper than Python's recursion limit (limits.max_json_depth)",
            limit="max_json_depth",
            backend=backend,
        )
    return InvalidResponseError(
        f"the server sent a payload of a shape this client cannot read: {exc!r}", backend=backend
    )


def loads_within(text: str | bytes, limit: int, backend: str | None = None) -> Any:
    """``json.loads``, refusing nesting past ``limit`` (``ResponseTooLargeError``); a text
    that is not JSON raises ``ValueError`` as ``json.loads`` does.

    ``orjson`` parses first (twice as fast); what it refuses and ``json`` reads (``NaN``,
    integers past 64 bits, lone surrogate escapes) goes through ``json``, so the results and
    errors stay ``json``'s."""
    try:
        payload = orjson.loads(text)
    except ValueError:
        try:
            payload = mark_lone_surrogates(json.loads(text), text)
        except RecursionError as exc:
            raise too_deep(limit, backend=backend) from exc
    if nests_deeper(payload, text, limit):
        raise too_deep(limit, backend=backend)
    return payload


def load_object(
    text: str | bytes, limit: int, backend: str | None = None, *, status: int | None = None
) -> dict[str, Any]:
    """A whole JSON document that must be an object (a completion, a Responses object)."""
    try:
        payload = loads_within(text, limit, backend)
    except ValueError as exc:
        shown = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
        # The text goes to `body`, not the message: it may be completion text.
        raise InvalidResponseError(
            f"the server sent something that is not JSON ({len(shown)} characters)",
            status=status,
            backend=backend,
            body=shown[:300],
        ) from exc
    if type(payload) is not dict:
        raise InvalidResponseError(
            "the server sent JSON that is not an object", status=status, backend=backend
        )
    return payload

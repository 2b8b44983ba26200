"""One stream event's JSON: ``orjson`` on the event's bytes, with ``json``'s results and
errors for whatever orjson refuses, and the nesting bound (``Limits.max_json_depth``)."""

from __future__ import annotations

import json
from typing import Any

import orjson

from providers.abstractions.errors import InvalidResponseError
from providers.transport.json_guard import nests_deeper, too_deep

__all__ = ["fast_loads", "loads"]

fast_loads = orjson.loads
"""The parse of nearly every event, on its bytes: about half the instructions of ``json``'s C
scanner on a typical chunk, and no ``str`` of the event first (decoding it cost a quarter as
much again). What it refuses goes through ``loads``, whose results and errors are ``json``'s:
orjson rejects a few documents ``json`` reads (``NaN``, integers past 64 bits, lone surrogate
escapes, invalid UTF-8, which ``json`` sees replaced), and those keep reading as they did."""


def loads(data: bytes | str, backend: str, depth: int) -> dict[str, Any]:
    """One event's JSON object; past ``depth`` levels, ``ResponseTooLargeError``."""
    try:
        payload = fast_loads(data)
    except ValueError:
        payload = _loads_slowly(data, backend, depth)
    if type(payload) is not dict:
        raise InvalidResponseError("a stream event is not a JSON object", backend=backend)
    if nests_deeper(payload, data, depth):
        raise too_deep(depth, "a stream event", backend)
    return payload


def _loads_slowly(data: bytes | str, backend: str, depth: int) -> Any:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    try:
        return json.loads(text)
    except RecursionError as exc:
        raise too_deep(depth, "a stream event", backend) from exc
    except ValueError as exc:
        # The text goes to `body`, not the message: it may be completion text.
        raise InvalidResponseError(
            f"a stream event is not JSON ({len(text)} characters)", backend=backend, body=text
        ) from exc

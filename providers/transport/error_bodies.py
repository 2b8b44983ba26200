"""Error bodies read into one shape (``ErrorBody``), whatever envelope the server used.

Bodies come in five shapes (docs/wire.md §4.1): nested ``{"error": {...}}`` (llama.cpp, vLLM,
OpenAI), flat ``{"object": "error", ...}`` (SGLang, vLLM < 0.10.1), bare ``{"error": "text"}``
(vLLM/SGLang 401), FastAPI ``{"detail": ...}``, and non-JSON (an HTML page from a proxy, of which
a short excerpt is kept); a stream may carry the first three as ``data: {"error": ...}``.
Reading never raises: a body this module cannot make sense of (not JSON, or JSON nested past
``Limits.max_json_depth``) still gives a message, because the error it reports is the one the
caller needs to see.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import field
from typing import Any

from providers.abstractions.errors import ResponseTooLargeError
from providers.abstractions.limits import DEFAULT_LIMITS
from providers.abstractions.records import value_class
from providers.transport.error_redaction import redact
from providers.transport.json_guard import loads_within

__all__ = ["ErrorBody", "parse_error_body"]

_EXCERPT = 300  # characters kept of a non-JSON body


@value_class()
class ErrorBody:
    """The fields of an error body, whatever envelope carried them.

    ``message`` is the server's, with echoed request values redacted
    (``providers.transport.error_redaction``).
    """

    message: str
    error_type: str | None = None
    code: str | int | None = None
    param: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def parse_error_body(body: bytes | str | Mapping[str, Any] | None) -> ErrorBody:
    """Read any of the five envelopes; never raises."""
    if body is None:
        return ErrorBody("")
    payload: Any = body
    if isinstance(body, bytes | str):
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        try:
            payload = loads_within(text, DEFAULT_LIMITS.max_json_depth)
        except (ValueError, ResponseTooLargeError):
            return ErrorBody(_excerpt(text))
    if isinstance(payload, list) and len(payload) == 1 and isinstance(payload[0], Mapping):
        payload = payload[0]  # some gateways wrap the envelope in a list
    if not isinstance(payload, Mapping):
        return ErrorBody(_json_excerpt(payload))
    error = payload.get("error")
    if isinstance(error, Mapping):
        return _from_fields(error)
    if isinstance(error, str):
        return ErrorBody(redact(error))
    if payload.get("object") == "error" or "message" in payload:
        return _from_fields(payload)
    detail = payload.get("detail")
    if detail is not None:
        return ErrorBody(_detail_text(detail))
    return ErrorBody(_json_excerpt(payload))


def _from_fields(fields: Mapping[str, Any]) -> ErrorBody:
    known = {"message", "type", "code", "param", "object"}
    code = fields.get("code")
    param = fields.get("param")
    message = fields.get("message")
    error_type = fields.get("type")
    return ErrorBody(
        message=redact(message if isinstance(message, str) else str(message or "")),
        error_type=error_type if isinstance(error_type, str) else None,
        code=code if isinstance(code, str | int) and not isinstance(code, bool) else None,
        param=param if isinstance(param, str) else None,
        extra={k: v for k, v in fields.items() if k not in known},
    )


def _detail_text(detail: Any) -> str:
    """FastAPI's ``detail``: a string, or validation items whose ``input`` is the request's."""
    if isinstance(detail, str):
        return redact(detail)
    if isinstance(detail, list) and all(isinstance(d, Mapping) and "msg" in d for d in detail):
        parts = []
        for item in detail:
            loc = item.get("loc")
            where = ".".join(str(p) for p in loc) if isinstance(loc, list | tuple) else ""
            parts.append(f"{where}: {item['msg']}" if where else str(item["msg"]))
        return "; ".join(parts)
    return redact(json.dumps(detail, ensure_ascii=False))


_HIDDEN_TAG = re.compile(r"<(/?)(script|style)\b", re.IGNORECASE)
_TAG = re.compile(r"<[^<>]*>")  # no "<" inside: each attempt stops at the next one (linear)


def _excerpt(text: str) -> str:
    """A short, single-line excerpt of a non-JSON body (an HTML error page, usually).

    Only the first 64 KiB are looked at: the excerpt is 300 characters, and nothing here may
    cost more than linear time on a hostile page.
    """
    visible = _TAG.sub(" ", _without_hidden(text[:65536]))
    # deferred: html costs ~2.7 ms (python -X importtime) and only non-JSON error pages need it
    import html

    collapsed = " ".join(html.unescape(visible).split())
    return collapsed[:_EXCERPT] + ("…" if len(collapsed) > _EXCERPT else "")


def _json_excerpt(payload: Any) -> str:
    """An unrecognised JSON body, as short text (echoed ``input`` values redacted)."""
    text = " ".join(redact(json.dumps(payload, ensure_ascii=False)).split())
    return text[:_EXCERPT] + ("…" if len(text) > _EXCERPT else "")


def _without_hidden(text: str) -> str:
    """The page without ``<script>`` and ``<style>`` contents, in one pass over their tags."""
    pieces: list[str] = []
    pos = 0
    hiding: str | None = None
    for match in _HIDDEN_TAG.finditer(text):
        closing, name = match.group(1), match.group(2).lower()
        if hiding is None and not closing:
            pieces.append(text[pos : match.start()])
            hiding = name
        elif hiding == name and closing:
            end = text.find(">", match.end())
            pos = len(text) if end == -1 else end + 1
            hiding = None
    if hiding is None:
        pieces.append(text[pos:])
    return " ".join(pieces)

"""Which JSON format the caller reads as a type itself, so the client does not check it twice.

``get_response_as`` asks for a type's JSON Schema and validates the answer with the type's own
adapter, raising ``StructuredOutputError`` with pydantic's problems. The wire clients check a
``json_schema`` answer too (``providers.chat_completions.constraint_check``), raising
``ConstraintViolationError``. One failure gets one typed error: while ``get_response_as`` waits
for its answer it names its format here, and the wire check leaves that format to it. The
typed reader is the better judge (it knows the type, reads past a Markdown fence, and through
the tool loop sees the whole response, every turn, where the wire check sees one turn).

A context variable, so it holds for every layer between the caller and the wire (the tool loop,
retry, failover) in the same task and the tasks it starts, and for nothing else: a request with
another format (a tool that itself asks for JSON) is still checked.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from providers.abstractions.response_format import ChatResponseFormat

__all__ = ["read_as_type", "read_by_caller"]

_READING: ContextVar[ChatResponseFormat | None] = ContextVar("oaicompat_typed_read", default=None)


@contextmanager
def read_as_type(response_format: ChatResponseFormat) -> Iterator[None]:
    """While inside, answers asked with ``response_format`` are validated by the caller."""
    token = _READING.set(response_format)
    try:
        yield
    finally:
        _READING.reset(token)


def read_by_caller(response_format: ChatResponseFormat) -> bool:
    """Is ``response_format`` the one a ``get_response_as`` up the stack validates itself?"""
    reading = _READING.get()
    return reading is not None and reading == response_format

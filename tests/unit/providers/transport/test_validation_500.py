"""llama-cpp-python answers a request that fails validation with ``500`` (docs/wire.md §7): its
route wrapper turns FastAPI's validation error into ``internal_server_error``. The message is
pydantic's, so the class follows it: an invalid request, which a retry would only repeat."""

from __future__ import annotations

import json

from providers.abstractions.errors import InvalidRequestError, ServerError
from providers.transport.error_classification import error_from_response


def _body(message: str) -> str:
    error = {"message": message, "type": "internal_server_error", "param": None, "code": None}
    return json.dumps({"error": error})


def test_a_wrapped_validation_error_is_an_invalid_request() -> None:
    message = "1 validation error:\n  {'type': 'list_type', 'loc': ('body', 'messages')}"
    error = error_from_response(500, _body(message), backend="llama-cpp-python")
    assert type(error) is InvalidRequestError and error.status == 500


def test_pydantic_plural_summary_too() -> None:
    error = error_from_response(500, _body("2 validation errors for Request\nmodel ..."))
    assert type(error) is InvalidRequestError


def test_any_other_500_stays_a_server_error() -> None:
    for message in ("llama_decode returned -1", "validation error later in the text: 1"):
        assert type(error_from_response(500, _body(message))) is ServerError

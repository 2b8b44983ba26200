"""Error envelopes and their classification (research/wire.md §4, §7.2-§7.3)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from providers.errors import (
    ApiStatusError,
    AuthenticationError,
    BackendUnavailableError,
    ContextLengthExceededError,
    InvalidRequestError,
    ModelNotFoundError,
    PermissionDeniedError,
    ProviderError,
    RateLimitError,
    ServerError,
    error_from_response,
    error_from_stream_event,
    parse_error_body,
)


def body(payload: Any) -> bytes:
    return json.dumps(payload).encode()


# --- envelopes ------------------------------------------------------------------------------


def test_nested_envelope() -> None:
    parsed = parse_error_body(
        body(
            {
                "error": {
                    "message": "bad",
                    "type": "BadRequestError",
                    "param": "temperature",
                    "code": 400,
                }
            }
        )
    )
    assert (parsed.message, parsed.error_type, parsed.param, parsed.code) == (
        "bad",
        "BadRequestError",
        "temperature",
        400,
    )


def test_flat_envelope() -> None:
    parsed = parse_error_body(
        body(
            {"object": "error", "message": "flat", "type": "BadRequest", "param": None, "code": 400}
        )
    )
    assert (parsed.message, parsed.error_type, parsed.code, parsed.param) == (
        "flat",
        "BadRequest",
        400,
        None,
    )


def test_bare_string_envelope() -> None:
    parsed = parse_error_body(b'{"error":"Unauthorized"}')
    assert parsed.message == "Unauthorized"
    assert parsed.error_type is None


def test_fastapi_detail_envelope() -> None:
    assert parse_error_body(b'{"detail":"Not Found"}').message == "Not Found"


def test_fastapi_detail_list_is_kept_as_text() -> None:
    parsed = parse_error_body(
        body({"detail": [{"loc": ["body", "messages"], "msg": "field required"}]})
    )
    assert "field required" in parsed.message


def test_llamacpp_extra_fields_kept() -> None:
    parsed = parse_error_body(
        body(
            {
                "error": {
                    "code": 400,
                    "message": "m",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 3030,
                    "n_ctx": 2048,
                }
            }
        )
    )
    assert parsed.extra == {"n_prompt_tokens": 3030, "n_ctx": 2048}


def test_parse_error_body_never_raises() -> None:
    assert parse_error_body(None).message == ""
    assert parse_error_body(b"").message == ""
    assert parse_error_body(b"[1, 2]").message == "[1, 2]"
    assert parse_error_body(b"\xff\xfe not utf-8").message  # replaced, not raised
    assert parse_error_body({"error": {"message": None}}).message == ""


# --- classification by status -----------------------------------------------------------------


def test_bare_unauthorized_401() -> None:
    error = error_from_response(401, b'{"error":"Unauthorized"}', backend="vllm")
    assert type(error) is AuthenticationError
    assert error.status == 401
    assert error.backend == "vllm"
    assert "Unauthorized" in str(error)


def test_llamacpp_nested_401() -> None:
    error = error_from_response(
        401,
        body(
            {"error": {"message": "Invalid API Key", "type": "authentication_error", "code": 401}}
        ),
    )
    assert type(error) is AuthenticationError
    assert error.error_type == "authentication_error"


def test_403() -> None:
    assert type(error_from_response(403, b'{"error":"Forbidden"}')) is PermissionDeniedError


def test_fastapi_404_route_is_not_model_not_found() -> None:
    error = error_from_response(404, b'{"detail": "Not Found"}')
    assert type(error) is InvalidRequestError
    assert "Not Found" in str(error)


def test_vllm_model_does_not_exist() -> None:
    error = error_from_response(
        404,
        body(
            {
                "error": {
                    "message": "The model `x` does not exist.",
                    "type": "NotFoundError",
                    "param": "model",
                    "code": 404,
                }
            }
        ),
    )
    assert type(error) is ModelNotFoundError
    assert error.param == "model"


def test_model_does_not_exist_without_param() -> None:
    error = error_from_response(
        404, body({"object": "error", "message": "The model `x` does not exist.", "code": 404})
    )
    assert type(error) is ModelNotFoundError


def test_429_with_retry_after() -> None:
    error = error_from_response(
        429, body({"error": {"message": "slow down", "type": "rate_limit"}}), retry_after=7.0
    )
    assert type(error) is RateLimitError
    assert error.retry_after == 7.0
    assert error.status == 429


def test_html_502_page() -> None:
    html = (
        b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
        b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n"
        b"</body>\r\n</html>\r\n"
    )
    error = error_from_response(502, html)
    assert type(error) is BackendUnavailableError
    message = str(error)
    assert "502 Bad Gateway" in message
    assert "nginx/1.25.3" in message
    assert "<" not in message
    assert ">" not in message
    assert "\n" not in message


def test_long_html_page_is_cut_to_a_short_excerpt() -> None:
    html = "<html><body>" + "<p>word</p>" * 2000 + "</body></html>"
    error = error_from_response(502, html.encode())
    assert len(str(error)) < 500
    assert "<" not in str(error)


@pytest.mark.parametrize("status", [503, 504])
def test_unavailable_statuses(status: int) -> None:
    error = error_from_response(
        status,
        body(
            {
                "error": {
                    "message": "The engine is currently busy",
                    "type": "Service Unavailable",
                    "param": None,
                    "code": status,
                }
            }
        ),
    )
    assert type(error) is BackendUnavailableError


def test_llamacpp_loading_model_503() -> None:
    error = error_from_response(
        503, body({"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}})
    )
    assert type(error) is BackendUnavailableError


def test_500() -> None:
    error = error_from_response(
        500, body({"error": {"code": 500, "message": "boom", "type": "server_error"}})
    )
    assert type(error) is ServerError
    assert isinstance(error, ApiStatusError)
    assert isinstance(error, ProviderError)


def test_plain_400_is_invalid_request() -> None:
    error = error_from_response(
        400, body({"object": "error", "message": "2 validation errors", "type": "Bad Request"})
    )
    assert type(error) is InvalidRequestError


def test_empty_body() -> None:
    error = error_from_response(503, b"")
    assert type(error) is BackendUnavailableError


# --- context overflow -----------------------------------------------------------------------


def test_llamacpp_exceed_context_size_error() -> None:
    error = error_from_response(
        400,
        body(
            {
                "error": {
                    "code": 400,
                    "message": "request (3030 tokens) exceeds the available context size "
                    "(2048 tokens), try increasing it",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 3030,
                    "n_ctx": 2048,
                }
            }
        ),
        backend="llamacpp",
    )
    assert type(error) is ContextLengthExceededError
    assert (error.prompt_tokens, error.context_window) == (3030, 2048)
    assert error.status == 400


def test_llamacpp_overflow_from_message_alone() -> None:
    error = error_from_response(
        400,
        body(
            {
                "error": {
                    "message": "request (9000 tokens) exceeds the available context size "
                    "(8192 tokens), try increasing it"
                }
            }
        ),
    )
    assert isinstance(error, ContextLengthExceededError)
    assert (error.prompt_tokens, error.context_window) == (9000, 8192)


def test_vllm_prompt_exceeds_maximum_context_length() -> None:
    message = (
        "This model's maximum context length is 4096 tokens. However, your prompt contains 5000 "
        "input tokens, which exceeds this limit even without any output tokens. Please reduce the "
        "length of the input prompt."
    )
    error = error_from_response(
        400,
        body(
            {
                "error": {
                    "message": message,
                    "type": "BadRequestError",
                    "param": "input_tokens",
                    "code": 400,
                }
            }
        ),
    )
    assert isinstance(error, ContextLengthExceededError)
    assert (error.prompt_tokens, error.context_window) == (5000, 4096)


def test_vllm_older_at_least_wording() -> None:
    message = (
        "This model's maximum context length is 2048 tokens. However, you requested 512 output "
        "tokens and your prompt contains at least 1537 input tokens, for a total of at least 2049 "
        "tokens."
    )
    error = error_from_response(400, body({"object": "error", "message": message, "code": 400}))
    assert isinstance(error, ContextLengthExceededError)
    assert (error.prompt_tokens, error.context_window) == (1537, 2048)


def test_vllm_oldest_wording() -> None:
    message = (
        "This model's maximum context length is 4096 tokens. However, you requested 4500 tokens "
        "(4000 in the messages, 500 in the completion). Please reduce the length of the messages "
        "or completion."
    )
    error = error_from_response(400, body({"object": "error", "message": message, "code": 400}))
    assert isinstance(error, ContextLengthExceededError)
    assert (error.prompt_tokens, error.context_window) == (4000, 4096)


def test_sglang_requested_token_count_exceeds() -> None:
    message = (
        "Requested token count exceeds the model's maximum context length of 32768 tokens. You "
        "requested a total of 34000 tokens: 30000 tokens from the input messages and 4000 tokens "
        "for the completion. Please reduce the number of tokens in the input messages or the "
        "completion to fit within the limit."
    )
    error = error_from_response(
        400,
        body(
            {
                "object": "error",
                "message": message,
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        ),
        backend="sglang",
    )
    assert isinstance(error, ContextLengthExceededError)
    assert (error.prompt_tokens, error.context_window) == (30000, 32768)


def test_sglang_input_longer_than_context_length() -> None:
    message = "The input (40000 tokens) is longer than the model's context length (32768 tokens)."
    error = error_from_response(400, body({"object": "error", "message": message, "code": 400}))
    assert isinstance(error, ContextLengthExceededError)
    assert (error.prompt_tokens, error.context_window) == (40000, 32768)


def test_vllm_newer_context_length_is_only() -> None:
    message = (
        "You passed 5000 input tokens and requested 100 output tokens. However, the model's "
        "context length is only 4096 tokens, resulting in a maximum input length of 3996 tokens. "
        "Please reduce the length of the input prompt. (parameter=input_tokens, value=5000)"
    )
    error = error_from_response(400, body({"error": {"message": message, "code": 400}}))
    assert isinstance(error, ContextLengthExceededError)
    assert error.context_window == 4096


def test_vllm_decoder_prompt_equals_max_model_len() -> None:
    message = (
        "The decoder prompt (length 4096) plus the number of requested output tokens (at least 1) "
        "is longer than the maximum model length of 4096. Make sure that `max_model_len` is no "
        "smaller than the number of text tokens plus multimodal tokens."
    )
    error = error_from_response(400, body({"error": {"message": message, "code": 400}}))
    assert isinstance(error, ContextLengthExceededError)
    assert (error.prompt_tokens, error.context_window) == (4096, 4096)


def test_openai_context_length_exceeded_code() -> None:
    error = error_from_response(
        400,
        body(
            {
                "error": {
                    "message": "too long",
                    "type": "invalid_request_error",
                    "code": "context_length_exceeded",
                }
            }
        ),
    )
    assert isinstance(error, ContextLengthExceededError)
    assert error.prompt_tokens is None
    assert error.context_window is None


def test_overflow_is_recognised_whatever_the_status() -> None:
    message = (
        "This model's maximum context length is 4096 tokens. However, your prompt contains 5000 "
        "input tokens."
    )
    error = error_from_response(500, body({"error": {"message": message}}))
    assert isinstance(error, ContextLengthExceededError)
    assert error.status == 500


def test_structural_400_mentioning_length_is_not_overflow() -> None:
    message = (
        "System message must be at the beginning. Please move it before the other messages; "
        "the maximum context length is not the problem."
    )
    error = error_from_response(
        400, body({"error": {"message": message, "type": "BadRequestError", "code": 400}})
    )
    assert type(error) is InvalidRequestError
    assert not isinstance(error, ContextLengthExceededError)


def test_validation_error_mentioning_max_tokens_is_not_overflow() -> None:
    error = error_from_response(
        400,
        body({"error": {"message": "Field 'n': Value must be between 1 <= value <= 4, but got 8"}}),
    )
    assert type(error) is InvalidRequestError


# --- in-stream events -------------------------------------------------------------------------


def test_stream_event_sglang_service_unavailable() -> None:
    error = error_from_stream_event(
        {
            "error": {
                "object": "error",
                "message": "aborted",
                "type": "SERVICE_UNAVAILABLE",
                "param": None,
                "code": 503,
            }
        },
        backend="sglang",
    )
    assert type(error) is BackendUnavailableError
    assert error.status == 503


def test_stream_event_vllm_internal_server_error() -> None:
    error = error_from_stream_event(
        {
            "error": {
                "message": "Internal server error",
                "type": "InternalServerError",
                "param": None,
                "code": 500,
            }
        }
    )
    assert type(error) is ServerError
    assert error.status == 500


def test_stream_event_bad_request_is_invalid_request() -> None:
    error = error_from_stream_event(
        {"error": {"object": "error", "message": "bad", "type": "BadRequestError", "code": 400}}
    )
    assert type(error) is InvalidRequestError


def test_stream_event_without_status_is_a_server_error() -> None:
    error = error_from_stream_event({"error": {"message": "something"}})
    assert type(error) is ServerError
    assert error.status is None


# --- fields and messages --------------------------------------------------------------------


def test_errors_carry_fields_and_a_user_message() -> None:
    error = error_from_response(
        503,
        body({"error": {"message": "busy", "type": "unavailable_error", "code": 503}}),
        backend="llamacpp",
    )
    assert (error.status, error.backend, error.error_type, error.code) == (
        503,
        "llamacpp",
        "unavailable_error",
        503,
    )
    assert error.user_message
    assert error.partial_response is None


def test_overflow_user_message_mentions_context() -> None:
    error = error_from_response(
        400, body({"error": {"type": "exceed_context_size_error", "message": "x", "n_ctx": 10}})
    )
    assert "context" in error.user_message.lower()

"""Error envelopes, their classification and what messages may carry (research/wire.md §4,
§7.2-§7.3; issue 6): ``providers.transport.error_bodies``, ``error_classification``,
``context_overflow``, ``error_redaction`` and ``retry_after``. The hierarchy itself is
``tests/unit/providers/abstractions/test_errors.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from providers.abstractions.errors import (
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
)
from providers.transport.error_bodies import parse_error_body
from providers.transport.error_classification import error_from_response, error_from_stream_event
from providers.transport.retry_after import retry_after_from_headers


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


@pytest.mark.parametrize(
    "payload",
    [
        # Groq: the status beside the OpenAI fields, a string code.
        {
            "error": {
                "message": "Failed to call a function. See 'failed_generation'.",
                "type": "invalid_request_error",
                "code": "tool_use_failed",
                "status_code": 400,
            }
        },
        # The status beside the error object.
        {
            "error": {"message": "bad tool schema", "type": "invalid_request_error"},
            "status_code": 400,
        },
        # Only the type names it.
        {
            "error": {
                "message": "bad",
                "type": "invalid_request_error",
                "code": "json_validate_failed",
            }
        },
        # OpenRouter: on a chunk that also has choices, the status beside the error.
        {
            "id": "gen-1",
            "object": "chat.completion.chunk",
            "error": {"code": "provider_error", "message": "Provider returned error"},
            "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}],
            "status_code": 400,
        },
    ],
)
def test_stream_event_invalid_request_envelopes_are_not_retryable(payload: dict[str, Any]) -> None:
    error = error_from_stream_event(payload, backend="openai")
    assert type(error) is InvalidRequestError
    assert error.status == 400


def test_stream_event_status_code_field_wins_over_the_type() -> None:
    payload = {
        "error": {"message": "upstream", "type": "invalid_request_error", "status_code": 502}
    }
    assert type(error_from_stream_event(payload)) is BackendUnavailableError


@pytest.mark.parametrize(
    ("error_type", "expected"),
    [("rate_limit_error", RateLimitError), ("authentication_error", AuthenticationError)],
)
def test_stream_event_other_openai_types(error_type: str, expected: type[Exception]) -> None:
    error = error_from_stream_event({"error": {"message": "x", "type": error_type}})
    assert type(error) is expected


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


# --- issue 6: every shape, the sizes, and what messages may carry -----------------------------


def test_vllm_newer_wording_gives_the_prompt_tokens_too() -> None:
    message = (
        "You passed 5000 input tokens and requested 100 output tokens. However, the model's "
        "context length is only 4096 tokens, resulting in a maximum input length of 3996 tokens. "
        "Please reduce the length of the input prompt. (parameter=input_tokens, value=5000)"
    )
    error = error_from_response(
        400,
        body({"error": {"message": message, "type": "BadRequestError", "param": "input_tokens"}}),
    )
    assert isinstance(error, ContextLengthExceededError)
    assert (error.prompt_tokens, error.context_window) == (5000, 4096)


def test_vllm_parameter_suffix_alone_gives_the_prompt_tokens() -> None:
    message = "the model's context length is only 2048 tokens (parameter=input_tokens, value=2100)"
    error = error_from_response(400, body({"error": {"message": message}}))
    assert isinstance(error, ContextLengthExceededError)
    assert (error.prompt_tokens, error.context_window) == (2100, 2048)


def test_llamacpp_embeddings_input_larger_than_context() -> None:
    message = "input (9000 tokens) is larger than the max context size (8192 tokens). skipping"
    error = error_from_response(500, body({"error": {"code": 500, "message": message}}))
    assert isinstance(error, ContextLengthExceededError)
    assert (error.prompt_tokens, error.context_window) == (9000, 8192)


@pytest.mark.parametrize(
    "message",
    [
        "max_tokens=100000 cannot be greater than max_model_len=4096. Please request fewer "
        "output tokens. (parameter=max_tokens, value=100000)",
        "max_completion_tokens is too large: 100000.This model supports at most 4096 completion "
        "tokens.",
        "Rate limit reached: tokens per minute exceeded",
    ],
)
def test_too_many_output_tokens_or_quota_is_not_overflow(message: str) -> None:
    error = error_from_response(400, body({"error": {"message": message, "code": 400}}))
    assert type(error) is InvalidRequestError


def test_list_wrapped_envelope() -> None:
    parsed = parse_error_body(body([{"error": {"message": "wrapped", "code": 503}}]))
    assert (parsed.message, parsed.code) == ("wrapped", 503)


def test_boolean_code_is_not_a_code() -> None:
    assert parse_error_body(body({"error": {"message": "m", "code": True}})).code is None


def test_408_and_409_stay_at_the_status_base_class() -> None:
    for status in (408, 409):
        error = error_from_response(status, body({"error": {"message": "again"}}))
        assert type(error) is ApiStatusError
        assert error.status == status


def test_html_page_drops_scripts_styles_and_entities() -> None:
    page = (
        b"<html><head><title>Bad&nbsp;Gateway</title><style>h1 { color: red }</style>"
        b"<script>var secret = 1;</script></head><body><h1>502 &amp; gone</h1></body></html>"
    )
    message = str(error_from_response(502, page))
    assert "Bad Gateway" in message
    assert "502 & gone" in message
    assert "color" not in message and "secret" not in message


# --- Retry-After ----------------------------------------------------------------------------


def test_retry_after_is_in_the_error_and_its_message() -> None:
    error = error_from_response(503, body({"error": {"message": "busy"}}), retry_after=2.5)
    assert type(error) is BackendUnavailableError
    assert error.retry_after == 2.5
    assert "2.5 s" in str(error)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after-ms": "1500"}, 1.5),
        ({"Retry-After-Ms": "250.5", "Retry-After": "9"}, 0.2505),  # ms first, as openai-python
        ({"Retry-After": "7"}, 7.0),
        ({"retry-after": "1.5"}, 1.5),
        ({"Retry-After": "Wed, 21 Oct 2015 07:28:30 GMT"}, 30.0),
        ({"Retry-After": "Wed, 21 Oct 2015 07:27:00 GMT"}, 0.0),  # in the past
        ({"Retry-After": "Wed Oct 21 07:28:10 2015"}, 10.0),  # asctime: GMT by definition
        ({"retry-after-ms": "soon", "Retry-After": "3"}, 3.0),
        ({"Retry-After": "nan"}, None),
        ({"Retry-After": "inf"}, None),
        ({"Retry-After": "tomorrow"}, None),
        ({"Retry-After": "-5"}, 0.0),
        ({}, None),
    ],
)
def test_retry_after_from_headers(headers: dict[str, str], expected: float | None) -> None:
    now = 1445412480.0  # Wed, 21 Oct 2015 07:28:00 GMT
    assert retry_after_from_headers(headers, now=now) == expected


def test_technical_message_is_the_string() -> None:
    error = error_from_response(500, body({"error": {"message": "boom"}}), backend="sglang")
    assert error.technical_message == str(error) == "HTTP 500 from sglang: boom"


# --- what messages may carry ----------------------------------------------------------------

SECRET = "my secret prompt text"


def test_pydantic_input_echo_is_redacted_from_the_message_not_the_body() -> None:
    raw = body(
        {
            "object": "error",
            "message": "1 validation error:\n  {'type': 'string_type', 'loc': ('body', "
            f"'messages', 0, 'content'), 'msg': 'Input should be a valid string', 'input': "
            f"{{'text': '{SECRET}', 'nested': [1, (2, ']')]}}, 'url': 'https://errors'}}",
            "type": "Bad Request",
            "code": 400,
        }
    )
    error = error_from_response(400, raw, backend="sglang")
    assert SECRET not in str(error)
    assert "'input': <redacted>, 'url'" in str(error)
    assert "Input should be a valid string" in str(error)
    assert error.body is not None and SECRET in error.body


def test_fastapi_422_detail_keeps_locations_and_messages_only() -> None:
    raw = body(
        {
            "detail": [
                {
                    "type": "string_type",
                    "loc": ["body", "messages", 0, "content"],
                    "msg": "Input should be a valid string",
                    "input": {"text": SECRET},
                }
            ]
        }
    )
    error = error_from_response(422, raw)
    assert type(error) is InvalidRequestError
    assert "body.messages.0.content: Input should be a valid string" in str(error)
    assert SECRET not in str(error)


def test_json_parse_error_quote_is_redacted() -> None:
    message = (
        "[json.exception.parse_error.101] parse error at line 1, column 40: syntax error while "
        f"parsing value - invalid string: control character; last read: '\"{SECRET}'; expected"
        " string literal"
    )
    error = error_from_response(500, body({"error": {"code": 500, "message": message}}))
    assert SECRET not in str(error)
    assert "last read: <redacted>; expected" in str(error)


def test_chat_parser_quote_of_the_output_is_redacted() -> None:
    message = f"Failed to parse input at pos 12: <tool_call>{SECRET}</tool_call>"
    error = error_from_response(500, body({"error": {"code": 500, "message": message}}))
    assert SECRET not in str(error)
    assert "Failed to parse input at pos 12: <redacted>" in str(error)


def test_midstream_error_quotes_only_its_first_line() -> None:
    payload = {
        "error": {
            "code": 500,
            "message": "Invalid diff: now finding less tool calls!\n  Previous (1):\n    - name: "
            f"'get_weather', args: '{{\"city\": \"{SECRET}'\n  Current msg text content:\n{SECRET}",
            "type": "server_error",
        }
    }
    error = error_from_stream_event(payload, backend="llamacpp")
    assert type(error) is ServerError
    assert str(error) == (
        "error event in the stream from llamacpp: Invalid diff: now finding less tool calls! […]"
    )
    assert error.body is not None and SECRET in error.body


def test_long_messages_are_bounded() -> None:
    error = error_from_response(500, body({"error": {"message": "x" * 50_000}}))
    assert len(str(error)) < 1_200
    assert "50000 characters" in str(error)


def test_user_messages_never_quote_the_server() -> None:
    server_text = "internal detail 1234"
    for status in (400, 401, 403, 404, 408, 413, 429, 500, 502, 503):
        error = error_from_response(status, body({"error": {"message": server_text}}))
        assert server_text not in error.user_message
        assert error.user_message.endswith(".")


def _captured_errors() -> list[Path]:
    """Every captured error body whose sidecar expects an error (SGLang's unknown-model capture
    is a success: it ignores the model name)."""
    root = Path(__file__).resolve().parents[4] / "transcripts"
    return [
        raw
        for raw in sorted(root.glob("*/captured--*error*.raw"))
        if json.loads(raw.with_suffix(".json").read_text())["expected"]["error"] is not None
    ]


@pytest.mark.parametrize("raw", _captured_errors(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_captured_error_messages_hold_no_request_content(raw: Path) -> None:
    sidecar = json.loads(raw.with_suffix(".json").read_text())
    error = error_from_response(sidecar["response"]["status"], raw.read_bytes())
    assert type(error).__name__ == sidecar["expected"]["error"]["class"]
    request = sidecar["request"]
    if isinstance(request, dict):
        for message in request.get("messages", []):
            content = message.get("content")
            if isinstance(content, str) and len(content) > 12:
                assert content[:40] not in str(error)
                assert content[:40] not in error.user_message


def test_unrecognised_json_body_is_excerpted_without_echoed_input() -> None:
    parsed = parse_error_body(body({"failure": {"input": SECRET, "why": "<bad>"}}))
    assert SECRET not in parsed.message
    assert '"input": <redacted>' in parsed.message
    assert "<bad>" in parsed.message  # JSON is not HTML: nothing else is stripped

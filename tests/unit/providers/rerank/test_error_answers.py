"""Error answers with one fix, and those left to the chat clients' typing."""

from __future__ import annotations

import json

import pytest

from providers.rerank.error_answers import rerank_error


def test_llamacpp_501_is_unavailable_with_the_flag() -> None:
    body = json.dumps({"error": {"code": 501, "type": "not_supported_error", "message": "x"}})
    error = rerank_error(501, body.encode(), backend="llamacpp", url="http://h/v1/rerank")
    assert error is not None and "--reranking" in error.fix and error.body == body


def test_a_400_saying_the_model_does_not_score_is_unavailable() -> None:
    body = b'{"object":"error","message":"The model does not support Score API","code":400}'
    assert rerank_error(400, body, backend="vllm", url="u") is not None


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (404, b'{"error":{"message":"The model `x` does not exist.","code":404}}'),
        (400, b'{"error":{"message":"query must not be empty","code":400}}'),
        (500, b"boom"),
        (429, b'{"error":"slow down"}'),
    ],
)
def test_other_answers_are_left_alone(status: int, body: bytes) -> None:
    assert rerank_error(status, body, backend="vllm", url="u") is None

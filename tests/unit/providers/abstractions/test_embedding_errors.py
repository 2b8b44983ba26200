"""The embedding errors keep what the caller needs, survive pickling and sit under the class
whose handling they share (``providers.abstractions.embedding_errors``)."""

from __future__ import annotations

import pickle

from providers.abstractions.embedding_errors import (
    EmbeddingInputTooLargeError,
    EmbeddingResponseError,
    EmbeddingsUnavailableError,
)
from providers.abstractions.embeddings import Embedding, EmbeddingVector, GeneratedEmbeddings
from providers.abstractions.errors import (
    ContextLengthExceededError,
    InvalidRequestError,
    InvalidResponseError,
)


def test_a_response_error_keeps_what_was_read() -> None:
    partial = GeneratedEmbeddings([Embedding(EmbeddingVector([1.0]))])
    error = EmbeddingResponseError(
        "bad", problem="wrong count", partial=partial, payload={"data": []}, backend="vllm"
    )
    assert isinstance(error, InvalidResponseError)
    assert (error.problem, error.partial, error.payload, error.backend) == (
        "wrong count",
        partial,
        {"data": []},
        "vllm",
    )
    copy = pickle.loads(pickle.dumps(error))
    assert copy.problem == "wrong count"
    assert copy.partial is not None and copy.partial[0].vector.tolist() == [1.0]


def test_the_request_errors_carry_their_fix() -> None:
    unavailable = EmbeddingsUnavailableError("m", fix="start with --embeddings", status=501)
    too_large = EmbeddingInputTooLargeError("m", fix="raise --ubatch-size", status=500)
    assert isinstance(unavailable, InvalidRequestError)
    assert isinstance(too_large, ContextLengthExceededError)
    assert pickle.loads(pickle.dumps(unavailable)).fix == "start with --embeddings"
    assert pickle.loads(pickle.dumps(too_large)).fix == "raise --ubatch-size"
    assert "embeddings" in unavailable.user_message
    assert "shorter" in too_large.user_message

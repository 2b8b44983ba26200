"""Error answers with a known fix become typed errors that say it, name the server and keep the
body; the rest are typed as for chat (the servers' wordings: ``error_answers``)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import respx

from providers.abstractions.embedding_errors import (
    EmbeddingInputTooLargeError,
    EmbeddingsUnavailableError,
)
from providers.abstractions.errors import (
    AuthenticationError,
    ContextLengthExceededError,
    InvalidRequestError,
    ModelNotFoundError,
    ProviderError,
    RateLimitError,
    ServerError,
)
from providers.embeddings import OpenAiCompatibleEmbeddingGenerator
from providers.layers.retry import RetryPolicy
from tests.unit.providers.embeddings.helpers import BASE, URL

LLAMA_NO_EMBEDDINGS = {
    "error": {
        "code": 501,
        "message": "This server does not support embeddings. Start it with `--embeddings`",
        "type": "not_supported_error",
    }
}
LLAMA_POOLING_NONE = {
    "error": {
        "code": 400,
        "message": "Pooling type 'none' is not OAI compatible. Please use a different pooling type",
        "type": "invalid_request_error",
    }
}
LLAMA_TOO_LARGE = {
    "error": {
        "code": 500,
        "message": "input is too large to process. increase the physical batch size",
        "type": "server_error",
    }
}
VLLM_NOT_EMBEDDING = {
    "object": "error",
    "message": "The model does not support Embeddings API",
    "type": "BadRequestError",
    "param": None,
    "code": 400,
}
VLLM_MATRYOSHKA = {
    "object": "error",
    "message": 'Model "bge" does not support matryoshka representation, changing output '
    "dimensions will lead to poor results.",
    "type": "BadRequestError",
    "code": 400,
}


async def failure(status: int, body: Any, backend: str = "llamacpp") -> ProviderError:
    with respx.mock:
        respx.post(URL).mock(return_value=httpx.Response(status, json=body))
        async with OpenAiCompatibleEmbeddingGenerator(BASE, "emb", backend=backend) as embedder:
            with pytest.raises(ProviderError) as caught:
                await embedder.generate(["x"])
    return caught.value


@pytest.mark.parametrize(
    ("status", "body", "error_class", "fix"),
    [
        (501, LLAMA_NO_EMBEDDINGS, EmbeddingsUnavailableError, "--embeddings"),
        (400, LLAMA_POOLING_NONE, EmbeddingsUnavailableError, "--pooling mean"),
        (500, LLAMA_TOO_LARGE, EmbeddingInputTooLargeError, "--ubatch-size"),
        (400, VLLM_NOT_EMBEDDING, EmbeddingsUnavailableError, "--runner pooling"),
        (501, VLLM_NOT_EMBEDDING, EmbeddingsUnavailableError, "--runner pooling"),
        (404, {"detail": "Not Found"}, EmbeddingsUnavailableError, "no /v1/embeddings route"),
        (400, VLLM_MATRYOSHKA, EmbeddingsUnavailableError, "leave `dimensions` out"),
    ],
)
async def test_a_known_answer_is_typed_with_its_fix(
    status: int, body: Any, error_class: type[ProviderError], fix: str
) -> None:
    error = await failure(status, body, backend="vllm")
    assert type(error) is error_class
    assert fix in str(error)
    assert getattr(error, "fix", "") in str(error)
    assert "from vllm" in str(error)
    assert error.backend == "vllm"
    assert error.status == status
    assert error.body is not None and json.loads(error.body) == body


async def test_an_input_too_large_is_never_retried_although_sent_as_500() -> None:
    error = await failure(500, LLAMA_TOO_LARGE)
    assert isinstance(error, ContextLengthExceededError)
    assert RetryPolicy().retry_reason(error) is None


async def test_unavailable_is_an_invalid_request_that_no_retry_repeats() -> None:
    error = await failure(501, LLAMA_NO_EMBEDDINGS)
    assert isinstance(error, InvalidRequestError)
    assert RetryPolicy().retry_reason(error) is None


@pytest.mark.parametrize(
    ("status", "body", "error_class"),
    [
        (401, {"error": {"message": "Invalid API Key", "type": "authentication_error"}}, None),
        (429, {"error": {"message": "slow down"}}, RateLimitError),
        (500, {"error": {"message": "boom"}}, ServerError),
        (404, {"object": "error", "message": "The model `x` does not exist."}, None),
    ],
)
async def test_other_answers_are_typed_as_for_chat(
    status: int, body: Any, error_class: type[ProviderError] | None
) -> None:
    error = await failure(status, body, backend="vllm")
    expected = error_class or (AuthenticationError if status == 401 else ModelNotFoundError)
    assert isinstance(error, expected)
    assert not isinstance(error, EmbeddingsUnavailableError)


async def test_a_key_echoed_in_an_error_is_masked() -> None:
    echoed = {"error": {"message": "This server does not support embeddings. key sk-secret-123"}}
    with respx.mock:
        respx.post(URL).mock(return_value=httpx.Response(501, json=echoed))
        embedder = OpenAiCompatibleEmbeddingGenerator(BASE, "emb", "sk-secret-123")
        with pytest.raises(EmbeddingsUnavailableError) as caught:
            await embedder.generate(["x"])
        await embedder.aclose()
    assert "sk-secret" not in str(caught.value)
    assert "sk-secret" not in (caught.value.body or "")

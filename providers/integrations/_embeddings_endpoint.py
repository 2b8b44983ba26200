"""A ``POST /embeddings`` endpoint answered in-process by an oaicompat embedding pipeline.

The OpenAI-SDK transports (``providers.integrations.openai``) hand each embeddings request here,
as they hand chat requests to ``_chat_endpoint``; this module knows no HTTP library either.

The answer is what OpenAI sends, whatever the backend sent the pipeline. The SDK asks for
``encoding_format: base64`` unless told otherwise and decodes the strings itself; LM Studio and
SGLang answer that request with float lists, which the SDK then "decodes" into garbage or an
error. So the pipeline asks the backend for whatever the backend's row says it honours, reads
either shape, and this endpoint writes the shape the SDK asked for: base64 of little-endian
float32 when it asked base64, float lists when it asked floats (or named no format, OpenAI's
default). ``dimensions`` goes to the pipeline, which checks every vector has that width: a
server that ignored it is refused with an error naming ``dimensions``, never answered with
vectors of another width (nor cut short here: only a model trained for it may be truncated).
Usage goes on as ``prompt_tokens`` and ``total_tokens`` when the server reported it, and is left
out when it did not, rather than written as zeros.

Values are text: token ids (LangChain's ``OpenAIEmbeddings`` sends them unless
``check_embedding_ctx_length=False``) are refused with a 400 that says so, since local servers
tokenize with their own model's tokenizer, not tiktoken's.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Final

from providers.abstractions.embedding_errors import EmbeddingResponseError
from providers.abstractions.embeddings import (
    EmbeddingGenerationOptions,
    EmbeddingGenerator,
    GeneratedEmbeddings,
)
from providers.abstractions.errors import ConfigurationError, InvalidRequestError, ProviderError
from providers.abstractions.usage import UsageDetails
from providers.integrations._chat_endpoint import EndpointAnswer, error_answer, error_status
from providers.layers.embedding_retry import RetryingEmbeddingGenerator
from telemetry.embeddings import described

__all__ = ["EmbeddingsEndpoint", "openai_answer", "usage_to_openai"]

_JSON = ("content-type", "application/json")
_OWN_KEYS: Final = frozenset({"input", "model", "encoding_format", "dimensions"})
"""Request keys this endpoint reads; every other key (``user``, a server's own such as
``truncate``) goes on in the backend request's body."""


class EmbeddingsEndpoint:
    """Reads an OpenAI embeddings request, runs it through ``generator``, writes OpenAI's answer.

    ``request_model``: whether the request's ``model`` is sent on (off by default, as for chat:
    the pipeline's configured model is the one meant; with none configured, the request's)."""

    def __init__(self, generator: EmbeddingGenerator, *, request_model: bool = False) -> None:
        self.generator = generator
        _, self._model = described(generator, None)
        self._request_model = request_model or self._model is None
        self._retries = _has_retry_layer(generator)

    async def answer(self, body: bytes) -> EndpointAnswer:
        """The answer to one request (never raises a ``ProviderError``). The SDK's headers are
        not read: they are its own exchange's, and a generator takes none per call."""
        try:
            request = json.loads(body)
            values, encoding, options = self._read(request)
        except (ValueError, ProviderError) as exc:
            error = exc if isinstance(exc, ProviderError) else None
            return self._error(error or InvalidRequestError(f"not an embeddings request: {exc}"))
        try:
            generated = await self.generator.generate(values, options)
        except ProviderError as error:
            return self._error(error, options)
        model = request.get("model") if isinstance(request.get("model"), str) else None
        answer = openai_answer(generated, encoding, self._model or model or "")
        return EndpointAnswer(200, [_JSON], json.dumps(answer).encode())

    def _read(self, request: Any) -> tuple[list[str], str, EmbeddingGenerationOptions]:
        if not isinstance(request, dict) or "input" not in request:
            raise ValueError("the body is not an object with an `input`")
        values = _values(request["input"])
        encoding = request.get("encoding_format") or "float"
        if encoding not in ("float", "base64"):
            raise InvalidRequestError(
                f"encoding_format must be 'float' or 'base64', not {encoding!r}",
                param="encoding_format",
            )
        dimensions = request.get("dimensions")
        if dimensions is not None and (
            isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1
        ):
            raise InvalidRequestError(
                f"dimensions must be an integer >= 1, not {dimensions!r}", param="dimensions"
            )
        model = request.get("model")
        extra = {key: value for key, value in request.items() if key not in _OWN_KEYS}
        options = EmbeddingGenerationOptions(
            model_id=model if self._request_model and isinstance(model, str) and model else None,
            dimensions=dimensions,
            additional_properties=extra or None,
        )
        return values, encoding, options

    def _error(
        self, error: ProviderError, options: EmbeddingGenerationOptions | None = None
    ) -> EndpointAnswer:
        return error_answer(error, retries=self._retries, status=_status(error, options))


def openai_answer(generated: GeneratedEmbeddings, encoding: str, model: str) -> dict[str, Any]:
    """OpenAI's embeddings answer: one item per value, in order, each vector in ``encoding``."""
    data = []
    for index, embedding in enumerate(generated):
        vector = embedding.vector
        shaped: Any = (
            base64.b64encode(vector.to_bytes()).decode("ascii")
            if encoding == "base64"
            else vector.tolist()
        )
        data.append({"object": "embedding", "index": index, "embedding": shaped})
    first = generated[0].model_id if len(generated) else None
    answer: dict[str, Any] = {"object": "list", "data": data, "model": first or model}
    usage = usage_to_openai(generated.usage)
    if usage is not None:
        answer["usage"] = usage
    return answer


def usage_to_openai(usage: UsageDetails | None) -> dict[str, int] | None:
    """``prompt_tokens`` and ``total_tokens`` (one stands for the other when only one was
    reported: an embedding request has no output tokens); ``None`` when nothing was."""
    if usage is None:
        return None
    prompt, total = usage.input_token_count, usage.total_token_count
    if prompt is None and total is None:
        return None
    prompt = prompt if prompt is not None else total
    total = total if total is not None else prompt
    return {"prompt_tokens": prompt or 0, "total_tokens": total or 0}


def _values(raw: Any) -> list[str]:
    """The request's ``input`` as strings: one string or a list of them."""
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list) and all(isinstance(value, str) for value in raw):
        return list(raw)
    if isinstance(raw, list) and raw and all(isinstance(v, int | list) for v in raw):
        raise InvalidRequestError(
            "input holds token ids: send the texts (the server tokenizes with its own model; "
            "LangChain's OpenAIEmbeddings needs check_embedding_ctx_length=False)",
            param="input",
        )
    raise InvalidRequestError("input must be a string or a list of strings", param="input")


def _status(error: ProviderError, options: EmbeddingGenerationOptions | None) -> int:
    """A width the server did not honour is the caller's ``dimensions`` refused (a 400, whose
    message says so), not a broken server the SDK should ask again."""
    if isinstance(error, ConfigurationError):
        return 400
    if (
        options is not None
        and options.dimensions is not None
        and isinstance(error, EmbeddingResponseError)
        and error.problem == "wrong width"
    ):
        return 400
    return error_status(error)


def _has_retry_layer(generator: EmbeddingGenerator) -> bool:
    current: object = generator
    for _ in range(32):
        if isinstance(current, RetryingEmbeddingGenerator):
            return True
        current = getattr(current, "inner", None)
        if current is None:
            return False
    return False

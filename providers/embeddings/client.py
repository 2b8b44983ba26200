"""``OpenAiCompatibleEmbeddingGenerator``: an ``EmbeddingGenerator`` over ``/v1/embeddings``
for llama.cpp, vLLM, SGLang, Ollama, LM Studio and OpenAI.

Connection, credentials, time budgets and bounded reading are the wire clients' own
(``HttpClientBase``, ``fetch_whole``); what is particular to embeddings lives beside this
module, one job each: ``batching`` (how many values a request carries), ``decoding`` (an answer
read by its shape and checked) and ``error_answers`` (the error answers with a known fix).

Usage::

    async with OpenAiCompatibleEmbeddingGenerator(
        "http://localhost:8080", "nomic-embed-text", backend="llamacpp"
    ) as embedder:
        generated = await embedder.generate(["first text", "second text"])
        vectors = generated.vectors()  # EmbeddingVector: float32, .tolist(), .to_numpy()
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import httpx

from providers.abstractions.embeddings import EmbeddingGenerationOptions, GeneratedEmbeddings
from providers.abstractions.errors import ConfigurationError, ConfigurationTypeError
from providers.abstractions.event_names import EMBEDDINGS_ENCODING_REFUSED
from providers.abstractions.limits import Limits
from providers.abstractions.logs import get_logger
from providers.backends import BackendProfile, EmbeddingEncoding, profile_for
from providers.chat_completions.http_client_base import (
    DEFAULT_TIMEOUT,
    HttpClientBase,
    fetch_whole,
    mask_secrets,
    url_for_errors,
)
from providers.embeddings.batching import add_usage, batch_size_for, slices
from providers.embeddings.decoding import AnswerReader
from providers.transport.json_guard import load_object
from providers.transport.timeouts import Timeouts

if TYPE_CHECKING:
    from providers.abstractions.sync_client import SyncChatClient
    from providers.transport.error_mapping import TransportErrorMapping
    from providers.transport.httpx2_bridge import AsyncHttpClient

__all__ = ["OpenAiCompatibleEmbeddingGenerator"]

_LOG = get_logger(__name__)


class OpenAiCompatibleEmbeddingGenerator(HttpClientBase):
    """An ``EmbeddingGenerator`` over ``POST {base_url}/embeddings``.

    ``base_url``, ``model_id`` (``None``: the server's one model), ``api_key``, ``backend``,
    ``http_client`` (borrowed: not closed by ``aclose``), ``timeout``/``timeouts``, ``headers``,
    ``limits``, ``proxy``, ``trust_env`` and ``sensitive_headers`` are as for
    ``OpenAiCompatibleChatClient``. ``backend`` selects the row (``providers.backends``) that
    says which ``encoding_format`` to ask for and how many values a request may carry; answers
    are read by their shape whatever it says.

    ``max_batch_size``: values per request (default: the row's limit, else 256); a longer list
    is sent as several requests and the vectors come back in the values' order, with the usage
    of all of them. ``normalize``: scale each vector to length 1 here, recorded in its
    ``additional_properties`` (``decoding.NORMALIZED``, ``decoding.SERVER_NORM``).
    ``encoding_format``: ask for this instead of the row's choice.

    Values are always sent as strings (never token ids, which local embedders misread).
    Errors are typed: ``EmbeddingsUnavailableError`` and ``EmbeddingInputTooLargeError`` with
    the fix in the message, ``EmbeddingResponseError`` for an answer that cannot be trusted,
    and the wire clients' ``ProviderError``s otherwise.
    """

    def __init__(
        self,
        base_url: str,
        model_id: str | None = None,
        api_key: str | None = None,
        *,
        backend: str | BackendProfile | None = None,
        http_client: AsyncHttpClient | None = None,
        timeout: httpx.Timeout | float | None = DEFAULT_TIMEOUT,
        timeouts: Timeouts | None = None,
        headers: Mapping[str, str] | None = None,
        limits: Limits | None = None,
        proxy: str | None = None,
        trust_env: bool = True,
        sensitive_headers: Collection[str] | None = None,
        max_batch_size: int | None = None,
        normalize: bool = False,
        encoding_format: EmbeddingEncoding | None = None,
    ) -> None:
        super().__init__(
            base_url,
            model_id,
            api_key,
            http_client=http_client,
            timeout=timeout,
            timeouts=timeouts,
            headers=headers,
            capability_overrides=None,
            limits=limits,
            proxy=proxy,
            trust_env=trust_env,
            sensitive_headers=sensitive_headers,
        )
        self.profile = profile_for(backend)
        self.max_batch_size = batch_size_for(max_batch_size, self.profile)
        self.normalize = normalize
        if encoding_format not in (None, "base64", "float"):
            raise ConfigurationError("encoding_format must be 'base64' or 'float'")
        self.encoding_format: EmbeddingEncoding = encoding_format or self.profile.embedding_encoding
        """What is asked for; turns to ``float`` for good if the server refuses ``base64``."""
        self.url = f"{self.endpoint.api_base}/embeddings"

    def __repr__(self) -> str:
        # Never the headers: they hold the API key.
        return (
            f"{type(self).__name__}(base_url={self.endpoint.api_base!r}, "
            f"model_id={self.model_id!r}, backend={self.profile.name!r})"
        )

    def as_sync(self) -> SyncChatClient:
        raise ConfigurationError("an embedding generator has no blocking chat API")

    def build_request_body(
        self, values: Sequence[str], options: EmbeddingGenerationOptions | None = None
    ) -> dict[str, Any]:
        """The JSON body one request for ``values`` sends (useful for logging and tests).
        ``options.additional_properties`` are added, never over ``input``."""
        body: dict[str, Any] = {}
        if options is not None and options.additional_properties:
            body.update(options.additional_properties)
        model = (options.model_id if options is not None else None) or self.model_id
        if model:
            body["model"] = model
        body["input"] = list(values)
        body.setdefault("encoding_format", self.encoding_format)
        dimensions = options.dimensions if options is not None else None
        if dimensions is not None:
            body["dimensions"] = dimensions
        return body

    async def generate(
        self, values: Sequence[str], options: EmbeddingGenerationOptions | None = None
    ) -> GeneratedEmbeddings:
        texts = _checked_values(values)
        dimensions = _checked_dimensions(options)
        if not texts:
            return GeneratedEmbeddings()
        reader = AnswerReader(
            backend=self.profile.name,
            model_id=(options.model_id if options is not None else None) or self.model_id,
            dimensions=dimensions,
            normalize=self.normalize,
        )
        usage = None
        for part in slices(len(texts), self.max_batch_size):
            payload = await self._post(texts[part.start : part.stop], options)
            usage = add_usage(usage, reader.add(payload, len(part)))
        return GeneratedEmbeddings(reader.read, usage=usage)

    async def _post(
        self, values: Sequence[str], options: EmbeddingGenerationOptions | None
    ) -> dict[str, Any]:
        """One request's answer, as a JSON object; an error answer as its typed error."""
        backend = self.profile.name
        body = self.build_request_body(values, options)
        response, content, _ = await fetch_whole(
            self._http,
            "POST",
            self.url,
            body=body,
            headers=self._headers,
            extensions=self._request_extensions,
            total=self.timeouts.total,
            backend=backend,
            mapping=self._error_mapping(),
            limits=self.limits,
        )
        status = response.status_code
        if status >= 400:
            if self._refused_base64(status, content, body, options):
                return await self._post(values, options)
            raise self._typed_error(status, content, response.headers)
        return load_object(content, self.limits.max_json_depth, backend, status=status)

    def _refused_base64(
        self,
        status: int,
        content: bytes,
        body: dict[str, Any],
        options: EmbeddingGenerationOptions | None,
    ) -> bool:
        """A 400/422 naming ``encoding_format`` to a ``base64`` this client chose (not one the
        caller's ``additional_properties`` set): ask for floats from now on, and say so once.
        True when the request should go again."""
        if body["encoding_format"] != "base64" or status not in (400, 422):
            return False
        if b"encoding_format" not in content:
            return False
        extra = options.additional_properties if options is not None else None
        if extra and "encoding_format" in extra:
            return False
        self.encoding_format = "float"
        _LOG.warning(EMBEDDINGS_ENCODING_REFUSED, backend=self.profile.name, status=status)
        return True

    def _typed_error(self, status: int, content: bytes, headers: httpx.Headers) -> Exception:
        """An error answer with a known fix (``error_answers``), else as the chat clients type
        it (an unknown model with the served ids, a 401, a 429…)."""
        # deferred: error answers only (their patterns and the error-body reader)
        from providers.embeddings.error_answers import embedding_error

        known = embedding_error(
            status, mask_secrets(content, self._secrets), backend=self.profile.name
        )
        return known if known is not None else self._status_error(status, content, headers)

    def _error_mapping(self) -> TransportErrorMapping:
        # deferred: the mapping is made per request only as the chat client's is
        from providers.transport.error_mapping import TransportErrorMapping

        return TransportErrorMapping(
            backend=self.profile.name,
            url=url_for_errors(self.url),
            connect_budget=self.timeouts.connect,
            secrets=self._secret_texts,
        )


def _checked_values(values: Sequence[str]) -> list[str]:
    """The values as a list of strings. One ``str`` is refused rather than embedded character
    by character; token ids (lists of ints) are refused, since local embedders misread them.
    Messages name the position and the type, never the value."""
    if isinstance(values, str | bytes):
        raise ConfigurationTypeError(
            "values must be a sequence of strings, not one string: pass [text], or use "
            "generate_embedding(generator, text)"
        )
    texts = list(values)
    for position, value in enumerate(texts):
        if not isinstance(value, str):
            raise ConfigurationTypeError(
                f"values[{position}] is a {type(value).__name__}, not a str: embeddings are "
                "asked for text, never token ids"
            )
    return texts


def _checked_dimensions(options: EmbeddingGenerationOptions | None) -> int | None:
    dimensions = options.dimensions if options is not None else None
    if dimensions is None:
        return None
    if isinstance(dimensions, bool) or not isinstance(dimensions, int) or dimensions < 1:
        raise ConfigurationError(f"dimensions must be an int >= 1, not {dimensions!r}")
    return dimensions

"""``OaicompatEmbeddings``: an oaicompat embedding pipeline as LangChain ``Embeddings``.

``OaicompatEmbeddings(generator)`` or ``OaicompatEmbeddings.from_config("oaicompat.yaml")``
goes wherever LangChain takes embeddings (a vector store, a retriever). LangChain's own
``OpenAIEmbeddings`` sends token ids unless ``check_embedding_ctx_length=False`` (tiktoken's,
which a local model does not read) and takes the SDK's answer as it comes; the pipeline sends
text, asks each backend for the encoding it honours, batches, retries and checks every vector.

The async methods await the pipeline; the sync ones run it on a private loop thread
(``_blocking.BlockingRunner``, ``SyncChatClient``'s machinery), so they work in a plain script,
from several threads and inside a running loop alike. Errors are LangChain's and oaicompat's at
once (``_langchain_convert.langchain_error``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from providers.integrations._extras import missing_extra

try:
    from langchain_core.embeddings import Embeddings
except ModuleNotFoundError as error:
    raise missing_extra(
        error, "providers.integrations.langchain_embeddings", "langchain"
    ) from error

from providers.abstractions.embeddings import EmbeddingGenerationOptions, EmbeddingGenerator
from providers.abstractions.errors import ProviderError
from providers.integrations._blocking import BlockingRunner
from providers.integrations._langchain_convert import langchain_error
from providers.integrations._pipeline import EMBEDDINGS_ROLE, generator_from_config

__all__ = ["OaicompatEmbeddings"]


class OaicompatEmbeddings(Embeddings):
    """LangChain ``Embeddings`` over an oaicompat ``EmbeddingGenerator``.

    ``dimensions``: a shorter vector, for models trained to give one (a server that ignores it
    is an error, not a wider vector). ``extra_body``: keys added to each request body.
    ``owns_generator``: whether ``close``/``aclose`` close ``generator`` (``from_config``'s
    own pipeline does). Vectors are lists of floats, as LangChain's interface says.
    """

    def __init__(
        self,
        generator: EmbeddingGenerator,
        *,
        dimensions: int | None = None,
        extra_body: dict[str, Any] | None = None,
        owns_generator: bool = False,
    ) -> None:
        self.generator = generator
        self.dimensions = dimensions
        self.extra_body = dict(extra_body) if extra_body else None
        self.owns_generator = owns_generator
        self._runner = BlockingRunner("oaicompat-embeddings")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.generator!r}, dimensions={self.dimensions!r})"

    @classmethod
    def from_config(
        cls,
        path: str | os.PathLike[str] = "oaicompat.yaml",
        role: str = EMBEDDINGS_ROLE,
        *,
        telemetry: bool = False,
        dimensions: int | None = None,
        extra_body: dict[str, Any] | None = None,
        **generator_kwargs: Any,
    ) -> OaicompatEmbeddings:
        """Embeddings for ``role`` of an oaicompat YAML file (by default the ``embeddings``
        role, or the one backend declaring ``embeddings:``), over the standard embedding
        pipeline, which they own; oaicompat's telemetry is off unless ``telemetry=True``
        (LangChain's callbacks and tracers see the calls)."""
        generator = generator_from_config(path, role, telemetry=telemetry, **generator_kwargs)
        return cls(generator, dimensions=dimensions, extra_body=extra_body, owns_generator=True)

    # --- async -------------------------------------------------------------------------------

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return await self._embed(texts)

    async def aembed_query(self, text: str) -> list[float]:
        (vector,) = await self._embed([text])
        return vector

    async def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        try:
            generated = await self.generator.generate(list(texts), self._options())
        except ProviderError as error:
            raise langchain_error(error) from error
        return [vector.tolist() for vector in generated.vectors()]

    def _options(self) -> EmbeddingGenerationOptions | None:
        if self.dimensions is None and not self.extra_body:
            return None
        return EmbeddingGenerationOptions(
            dimensions=self.dimensions, additional_properties=self.extra_body
        )

    # --- sync --------------------------------------------------------------------------------

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._runner.run(lambda: self._embed(texts))

    def embed_query(self, text: str) -> list[float]:
        (vector,) = self._runner.run(lambda: self._embed([text]))
        return vector

    # --- closing -----------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Ends the sync methods' loop thread, and closes the generator if these embeddings
        own it (``from_config``)."""
        self._runner.close()
        if self.owns_generator:
            await self.generator.aclose()

    def close(self) -> None:
        """``aclose`` for code without a loop: the generator is closed on the private loop."""
        if self.owns_generator:
            self._runner.run(self.generator.aclose)
        self._runner.close()
